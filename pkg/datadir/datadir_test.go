package datadir

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// TestManifestMatchesDataFolder checks the embedded sums and sizes against
// the SHA256SUMS files of the data folder and the files themselves.
func TestManifestMatchesDataFolder(t *testing.T) {
	dir := testbed.DataDir(t)
	listed := map[string]string{}
	for _, sub := range []string{TablesDir, ModelsDir} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(sub), "SHA256SUMS"))
		if err != nil {
			t.Skipf("no SHA256SUMS: %v", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			sum, name, ok := strings.Cut(strings.TrimSpace(sc.Text()), "  ")
			if ok {
				listed[sub+"/"+name] = sum
			}
		}
	}
	// The interatomic potential's sums are in its NOTES.md table.
	notes, err := os.ReadFile(filepath.Join(dir, "models", "m3gnet", "NOTES.md"))
	if err != nil {
		t.Skipf("no M3GNet notes: %v", err)
	}
	for line := range strings.SplitSeq(string(notes), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) == 4 && strings.HasPrefix(strings.TrimSpace(cells[1]), "M3GNet-") && len(strings.TrimSpace(cells[2])) == 64 {
			listed["models/m3gnet/"+strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[2])
		}
	}
	for path, sum := range listed {
		f, ok := Lookup(path)
		if !ok {
			t.Errorf("%s is in SHA256SUMS but not in the manifest", path)
			continue
		}
		if f.SHA256 != sum {
			t.Errorf("%s: manifest sum %s, SHA256SUMS %s", path, f.SHA256, sum)
		}
	}
	for _, st := range Check(dir) {
		if st.State != OK || st.Size != st.File.Size {
			t.Errorf("%s: %s, %d bytes (manifest %d): %v", st.File.Path, st.State, st.Size, st.File.Size, st.Err)
		}
		if _, ok := listed[st.File.Path]; !ok {
			t.Errorf("%s is in the manifest but not in SHA256SUMS", st.File.Path)
		}
	}
}

// countingHandler counts the requests it serves.
type countingHandler struct {
	h  http.Handler
	mu sync.Mutex
	n  int
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

func (c *countingHandler) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func pullEvents(t *testing.T, dir string, opt PullOptions) (map[string]EventKind, error) {
	t.Helper()
	last := map[string]EventKind{}
	opt.Progress = func(e Event) {
		if e.Kind == EventProgress && (e.Bytes <= 0 || e.Bytes > e.File.Size) {
			t.Errorf("%s: progress %d of %d bytes", e.File.Path, e.Bytes, e.File.Size)
		}
		last[e.File.Path] = e.Kind
	}
	err := Pull(context.Background(), dir, opt)
	return last, err
}

// TestPullFromMirror fetches a whole data directory from a mirror (the data
// folder served over HTTP), then pulls again and fetches nothing.
func TestPullFromMirror(t *testing.T) {
	src := testbed.DataDir(t)
	srv := &countingHandler{h: http.FileServer(http.Dir(src))}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dst := t.TempDir()

	events, err := pullEvents(t, dst, PullOptions{Mirror: ts.URL, Client: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Files() {
		if events[f.Path] != EventDone {
			t.Errorf("%s: last event %v, want done", f.Path, events[f.Path])
		}
	}
	if p := Problems(Check(dst)); len(p) > 0 {
		t.Fatalf("after the pull: %+v", p)
	}
	if err := Require(dst, "data/mp_e_form.csv", "models/cgcnn/atom_init.json"); err != nil {
		t.Error(err)
	}
	before := srv.requests()
	events, err = pullEvents(t, dst, PullOptions{Mirror: ts.URL, Client: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range Files() {
		if events[f.Path] != EventSkip {
			t.Errorf("second pull, %s: last event %v, want skip", f.Path, events[f.Path])
		}
	}
	if n := srv.requests() - before; n != 0 {
		t.Errorf("second pull made %d requests, want 0", n)
	}
	assertNoTempFiles(t, dst)
}

// githubMirror serves the data folder under the public URLs' paths, the
// split tables cut into train, val and test parts with a header each, so a
// pull must assemble them.
func githubMirror(t *testing.T, src string, corrupt map[string]bool) http.Handler {
	t.Helper()
	content := map[string][]byte{}
	for _, f := range Files() {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		parts := [][]byte{data}
		if len(f.Parts) > 1 {
			parts = splitCSV(t, data, len(f.Parts))
		}
		for i, u := range f.Parts {
			p, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			body := parts[i]
			if corrupt[f.Path] {
				body = bytes.Clone(body)
				body[len(body)/2] ^= 1
			}
			content[p.Path] = body
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := content[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	})
}

// splitCSV cuts a CSV into n parts, each starting with the header.
func splitCSV(t *testing.T, data []byte, n int) [][]byte {
	t.Helper()
	header, rows, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		t.Fatal("no header line")
	}
	lines := bytes.SplitAfter(rows, []byte("\n"))
	var parts [][]byte
	for i := range n {
		chunk := lines[i*len(lines)/n : (i+1)*len(lines)/n]
		part := append(append(bytes.Clone(header), '\n'), bytes.Join(chunk, nil)...)
		if i == 1 { // a part without a final newline must still be joined correctly
			part = bytes.TrimSuffix(part, []byte("\n"))
		}
		parts = append(parts, part)
	}
	return parts
}

// TestPullFromPublicLayout pulls with the public URLs pointed at a test
// server: split tables are assembled, parenthesised file names work, a
// corrupted file is a checksum error that leaves nothing behind, a 404 is
// an HTTP error, and the other files are fetched all the same.
func TestPullFromPublicLayout(t *testing.T) {
	src := testbed.DataDir(t)
	corrupt := map[string]bool{"data/mp_bulk_modulus.csv": true, "models/cgcnn/efermi.pth.tar": true}
	mux := http.NewServeMux()
	mux.Handle("/", githubMirror(t, src, corrupt))
	mux.HandleFunc("/scientific-discovery/", http.NotFound)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	dst := t.TempDir()

	events, err := pullEvents(t, dst, PullOptions{BaseURL: ts.URL + "/", Client: ts.Client()})
	if err == nil {
		t.Fatal("pull with corrupted files succeeded")
	}
	var fe *FileError
	failed := map[string]error{}
	for _, e := range unwrapJoined(err) {
		if !errors.As(e, &fe) {
			t.Fatalf("error %v is not a *FileError", e)
		}
		failed[fe.Path] = fe.Err
	}
	for path := range corrupt {
		if !errors.Is(failed[path], ErrChecksum) || events[path] != EventFail {
			t.Errorf("%s: error %v, last event %v; want a checksum error", path, failed[path], events[path])
		}
		if _, err := os.Stat(filepath.Join(dst, filepath.FromSlash(path))); err == nil {
			t.Errorf("%s: a corrupted download was put in place", path)
		}
	}
	var he *HTTPError
	if !errors.As(failed["data/llema_tasks.csv"], &he) || !strings.Contains(he.Status, "404") {
		t.Errorf("llema_tasks.csv: error %v, want an HTTP 404", failed["data/llema_tasks.csv"])
	}
	for _, f := range Files() {
		if f.Derived != "" {
			if events[f.Path] != EventFail {
				t.Errorf("%s: last event %v, want a failure (no public copy)", f.Path, events[f.Path])
			}
			failed[f.Path] = ErrNoPublicCopy // absent after the pull, as it should be
			continue
		}
	}
	if len(unwrapJoined(err)) != 3 {
		t.Errorf("errors %v, want the two corrupted files and llema_tasks.csv", err)
	}
	for _, st := range Check(dst) {
		_, bad := failed[st.File.Path]
		if !bad && st.State != OK {
			t.Errorf("%s: %s after the pull: %v", st.File.Path, st.State, st.Err)
		}
	}
	assertNoTempFiles(t, dst)
}

func unwrapJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestPullReplacesCorruptFile fetches again a file present with a wrong sum,
// and leaves a good one alone.
func TestPullReplacesCorruptFile(t *testing.T) {
	src := testbed.DataDir(t)
	srv := &countingHandler{h: http.FileServer(http.Dir(src))}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dst := t.TempDir()
	good, _ := Lookup("models/cgcnn/atom_init.json")
	bad, _ := Lookup("data/dielectric.csv")
	for _, f := range []File{good, bad} {
		data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if f.Path == bad.Path {
			data = data[:len(data)/2] // an interrupted copy
		}
		path := filepath.Join(dst, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st := Check(dst)
	states := map[string]State{}
	for _, s := range st {
		states[s.File.Path] = s.State
	}
	if states[good.Path] != OK || states[bad.Path] != Corrupt || states["data/mp_gap.csv"] != Missing {
		t.Errorf("Check before the pull: %v", states)
	}
	if len(Problems(st)) == 0 {
		t.Error("Problems: none for an incomplete directory")
	}
	var replacing bool
	err := Pull(context.Background(), dst, PullOptions{
		Mirror: ts.URL, Client: ts.Client(), Files: []File{good, bad},
		Progress: func(e Event) {
			if e.File.Path == bad.Path && e.Kind == EventStart {
				replacing = e.Replacing
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !replacing {
		t.Error("the corrupt file was not reported as replaced")
	}
	if n := srv.requests(); n != 1 {
		t.Errorf("%d requests, want 1 (the good file is skipped)", n)
	}
	for _, s := range Check(dst) {
		if (s.File.Path == good.Path || s.File.Path == bad.Path) && s.State != OK {
			t.Errorf("%s: %s after the pull", s.File.Path, s.State)
		}
	}
}

func TestPullCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Pull(ctx, t.TempDir(), PullOptions{Mirror: "http://127.0.0.1:1"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".part-") {
			t.Errorf("temporary file left behind: %s", path)
		}
		return nil
	})
}

func TestRequire(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "data", "mp_gap.csv"), []byte("formula,target\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := Require(dir, "data/mp_gap.csv", "data/mp_e_form.csv", "models/cgcnn/atom_init.json")
	var me *MissingError
	if !errors.Is(err, ErrMissing) || !errors.As(err, &me) {
		t.Fatalf("error %v, want a *MissingError", err)
	}
	if strings.Join(me.Files, " ") != "data/mp_e_form.csv models/cgcnn/atom_init.json" {
		t.Errorf("missing %v", me.Files)
	}
	for _, want := range []string{"crucible data pull", EnvDir, dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
	if err := Require(dir, "data"); err == nil {
		t.Error("a folder passed for a file")
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "main")
	for _, d := range []string{work, filepath.Join(root, "shared", "data"), filepath.Join(root, "shared", "models", "cgcnn")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(root, "cache")) // the cache folder on Linux
	t.Setenv(EnvDir, "")
	cache, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(cache) != "crucible" {
		t.Errorf("Default() = %q, want a crucible folder", cache)
	}
	t.Chdir(work)
	if got, err := Find(); err != nil || got != filepath.Join(root, "shared") {
		t.Errorf("Find() = %q, %v; want the sibling shared folder", got, err)
	}
	if got, err := Dir(); err != nil || got != filepath.Join(root, "shared") {
		t.Errorf("Dir() = %q, %v; want the sibling shared folder (one lookup)", got, err)
	}
	// Deep in the repository: the shared folder beside the repository.
	deep := filepath.Join(work, "internal", "cli")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if got, err := Dir(); err != nil || got != filepath.Join(root, "shared") {
		t.Errorf("Dir() in a subfolder of the repository = %q, %v; want the shared folder beside it", got, err)
	}
	t.Chdir(root)
	if got, err := Find(); err != nil || got != cache {
		t.Errorf("Find() without a shared folder = %q, %v; want the cache folder %q", got, err, cache)
	}
	t.Setenv(EnvDir, "/somewhere")
	if got, _ := Find(); got != "/somewhere" {
		t.Errorf("Find() with %s set = %q", EnvDir, got)
	}
	if got, _ := Dir(); got != "/somewhere" {
		t.Errorf("Dir() with %s set = %q", EnvDir, got)
	}
}

func TestPrinter(t *testing.T) {
	f := File{Path: "data/x.csv", Size: 2000}
	events := []Event{
		{Kind: EventSkip, File: File{Path: "data/y.csv"}, Bytes: 500},
		{Kind: EventStart, File: f},
		{Kind: EventProgress, File: f, Bytes: 1000},
		{Kind: EventProgress, File: f, Bytes: 1001}, // same percentage: no redraw
		{Kind: EventDone, File: f, Bytes: 2000},
		{Kind: EventStart, File: f, Replacing: true},
		{Kind: EventFail, File: f, Err: &FileError{Path: f.Path, Err: ErrChecksum}},
	}
	var plain, term bytes.Buffer
	p, q := NewPrinter(&plain, false), NewPrinter(&term, true)
	for _, e := range events {
		p.Event(e)
		q.Event(e)
	}
	wantPlain := strings.Join([]string{
		"present  data/y.csv                                           500 B  checksum ok",
		"fetch    data/x.csv                                          2.0 kB",
		"fetched  data/x.csv                                          2.0 kB  checksum ok",
		"refetch  data/x.csv                                          2.0 kB",
		"FAILED   data/x.csv: checksum mismatch",
		"",
	}, "\n")
	if plain.String() != wantPlain {
		t.Errorf("plain output:\n%s\nwant:\n%s", plain.String(), wantPlain)
	}
	if n := strings.Count(term.String(), "%"); n != 3 {
		t.Errorf("terminal output draws %d bars, want 3 (0%%, 50%%, 0%%):\n%q", n, term.String())
	}
	if !strings.Contains(term.String(), "[###############               ]  50%") {
		t.Errorf("terminal output lacks the half-full bar:\n%q", term.String())
	}
}

// TestPullFailure: an interrupted pull says how to resume; a failed one
// counts the files that failed.
func TestPullFailure(t *testing.T) {
	if got := PullFailure(fmt.Errorf("fetch: %w", context.Canceled)).Error(); got != "data pull interrupted: run it again to resume" {
		t.Errorf("interrupted: %q", got)
	}
	fe := func(path string) error { return &FileError{Path: path, Err: errors.New("checksum mismatch")} }
	failed := errors.Join(fe("a"), errors.Join(fe("b"), fe("c")))
	if got := PullFailure(failed).Error(); got != "data pull: 3 file(s) failed; run it again to retry" {
		t.Errorf("three failed: %q", got)
	}
	if got := PullFailure(errors.New("one")).Error(); got != "data pull: 1 file(s) failed; run it again to retry" {
		t.Errorf("one failed: %q", got)
	}
}
