package datadir

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// PullOptions configure Pull. The zero value fetches every file from its
// public source with http.DefaultClient.
type PullOptions struct {
	// BaseURL, when set, replaces https://raw.githubusercontent.com in
	// every public URL: a caching proxy, or a test server with GitHub's
	// path layout.
	BaseURL string
	// Mirror, when set, is the URL of a data directory served over HTTP;
	// every file is fetched in one piece from Mirror + "/" + its path
	// ("…/data/mp_e_form.csv"), instead of from the public sources. It wins
	// over BaseURL.
	Mirror string
	// Client makes the requests (default http.DefaultClient).
	Client *http.Client
	// Progress, when set, receives the events of the pull, from the
	// calling goroutine.
	Progress func(Event)
	// Files are the files to fetch (default: all of Files()).
	Files []File
}

// EventKind is what happened to a file during a pull.
type EventKind int

const (
	// EventSkip: already present with the right sum.
	EventSkip EventKind = iota
	// EventStart: the download starts.
	EventStart
	// EventProgress: Event.Bytes of File.Size are written.
	EventProgress
	// EventDone: downloaded, checked and in place.
	EventDone
	// EventFail: the file could not be fetched; Event.Err says why.
	EventFail
)

// Event reports the progress of a pull.
type Event struct {
	Kind EventKind
	File File
	// Bytes is the number of bytes written so far.
	Bytes int64
	// Replacing: the file was present with a wrong sum and is fetched
	// again.
	Replacing bool
	Err       error
}

// ErrNoPublicCopy is matched (errors.Is) by the failure of a derived file
// (File.Derived) pulled without a mirror.
var ErrNoPublicCopy = errors.New("no byte-exact public copy")

// FileError is the failure of one file in a pull.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// HTTPError is a response other than 200 OK.
type HTTPError struct {
	URL    string
	Status string
}

func (e *HTTPError) Error() string { return "GET " + e.URL + ": " + e.Status }

// Pull fetches into dir every file that is not already there with the
// right SHA-256 sum.
//
// A file is written to a temporary file next to its destination while its
// sum is computed, and renamed into place only when the sum matches, so an
// interrupted or failed pull never leaves a partial or wrong file under a
// final name, and running Pull again resumes with the files still missing.
// A table published in parts (train, validation and test splits) is
// assembled from them: the first part whole, the following without their
// header line. A derived file (File.Derived) without a mirror is reported
// as failed with ErrNoPublicCopy but is not an error of the pull. A failure
// (an HTTP error, a checksum mismatch) does not stop
// the other files; the error joins one *FileError per failed file, and a
// cancelled context stops the pull.
func Pull(ctx context.Context, dir string, opt PullOptions) error {
	client := opt.Client
	if client == nil {
		client = http.DefaultClient
	}
	files := opt.Files
	if files == nil {
		files = Files()
	}
	emit := opt.Progress
	if emit == nil {
		emit = func(Event) {}
	}
	var errs []error
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		st := checkFile(dir, f)
		if st.State == OK {
			emit(Event{Kind: EventSkip, File: f, Bytes: st.Size})
			continue
		}
		if f.Derived != "" && opt.Mirror == "" {
			// Reported, but not an error of the pull: no command needs
			// these tables, and nothing public would give the same bytes.
			err := &FileError{Path: f.Path, Err: fmt.Errorf("%w: %s; pull it with --mirror from a data directory that has it", ErrNoPublicCopy, f.Derived)}
			emit(Event{Kind: EventFail, File: f, Err: err})
			continue
		}
		emit(Event{Kind: EventStart, File: f, Replacing: st.State != Missing})
		n, err := fetch(ctx, client, f, f.sources(opt.BaseURL, opt.Mirror), dir, func(n int64) {
			emit(Event{Kind: EventProgress, File: f, Bytes: n})
		})
		if err != nil {
			err = &FileError{Path: f.Path, Err: err}
			emit(Event{Kind: EventFail, File: f, Bytes: n, Err: err})
			errs = append(errs, err)
			continue
		}
		emit(Event{Kind: EventDone, File: f, Bytes: n})
	}
	return errors.Join(errs...)
}

// fetch downloads f from urls into dir and returns the bytes written.
func fetch(ctx context.Context, client *http.Client, f File, urls []string, dir string, progress func(int64)) (n int64, err error) {
	dst := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := &sumWriter{w: tmp, h: sha256.New(), last: '\n', limit: f.Size, progress: progress}
	for i, u := range urls {
		if err := fetchPart(ctx, client, u, w, i > 0); err != nil {
			return w.n, err
		}
	}
	if sum := hex.EncodeToString(w.h.Sum(nil)); sum != f.SHA256 {
		return w.n, fmt.Errorf("%w: downloaded %d bytes with sha256 %s, want %s (%d bytes); the source may have changed",
			ErrChecksum, w.n, sum, f.SHA256, f.Size)
	}
	if err := tmp.Sync(); err != nil {
		return w.n, err
	}
	if err := tmp.Close(); err != nil {
		return w.n, err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return w.n, err
	}
	return w.n, nil
}

// fetchPart appends the body of url to w; a continuation part loses its
// header line, and starts on a new line.
func fetchPart(ctx context.Context, client *http.Client, url string, w *sumWriter, continuation bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "crucible-data-pull")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{URL: url, Status: resp.Status}
	}
	var body io.Reader = resp.Body
	if continuation {
		br := bufio.NewReader(resp.Body)
		if _, err := br.ReadBytes('\n'); err != nil && err != io.EOF {
			return fmt.Errorf("GET %s: %w", url, err)
		}
		body = br
		if w.last != '\n' {
			if _, err := w.Write([]byte{'\n'}); err != nil {
				return err
			}
		}
	}
	if _, err := io.Copy(w, body); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// sumWriter writes to a file while hashing, counting and remembering the
// last byte. It refuses to grow beyond limit bytes (the expected size), so
// a wrong source cannot fill the disk.
type sumWriter struct {
	w        io.Writer
	h        hash.Hash
	n        int64
	last     byte
	limit    int64
	progress func(int64)
}

func (s *sumWriter) Write(p []byte) (int, error) {
	if s.limit > 0 && s.n+int64(len(p)) > s.limit {
		return 0, fmt.Errorf("%w: more than the expected %d bytes", ErrChecksum, s.limit)
	}
	n, err := s.w.Write(p)
	s.h.Write(p[:n])
	s.n += int64(n)
	if n > 0 {
		s.last = p[n-1]
		s.progress(s.n)
	}
	return n, err
}

// PullFailure says in one line what Pull's error means for the user: an
// interrupted pull resumes when run again, and failed files are counted
// (each is reported to the progress as it fails).
func PullFailure(err error) error {
	if errors.Is(err, context.Canceled) {
		return errors.New("data pull interrupted: run it again to resume")
	}
	return fmt.Errorf("data pull: %d file(s) failed; run it again to retry", countErrors(err))
}

// countErrors counts the errors an error joins, nested joins included.
func countErrors(err error) int {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return 1
	}
	n := 0
	for _, e := range j.Unwrap() {
		n += countErrors(e)
	}
	return n
}
