package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/console"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// post sends a lifecycle verb with token (none when empty).
func post(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestAPI runs a small campaign to its end and reads it through the API:
// the list, the detail, plots, downloads in every format, events, and the
// lifecycle verbs' token, input and error handling.
func TestAPI(t *testing.T) {
	ctl := &fakeControl{}
	cl, url, id, submit := installation(t, 40, ctl, "tok")
	// The event stream, opened before the campaign starts.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/events?campaign="+id, nil)
	events, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	if ct := events.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	submit()
	wctx, wcancel := context.WithTimeout(ctx, 4*time.Minute)
	defer wcancel()
	if st, err := cl.WaitDone(wctx, id); err != nil || st.State != messages.StateCompleted {
		t.Fatalf("campaign: %v %v", st, err)
	}

	// Events: progress up to the budget, the final status.
	sc := bufio.NewScanner(events.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var name string
	sawStatus, lastEvaluated := false, 0
	for (!sawStatus || lastEvaluated < 40) && sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch name {
		case "progress":
			var c console.Campaign
			if err := json.Unmarshal([]byte(data), &c); err != nil || c.Campaign != id {
				t.Fatalf("progress event %s: %v", data, err)
			}
			if c.Counters.Evaluated < lastEvaluated {
				t.Errorf("progress went back from %d to %d", lastEvaluated, c.Counters.Evaluated)
			}
			lastEvaluated = c.Counters.Evaluated
		case "status":
			var s messages.Status
			if err := json.Unmarshal([]byte(data), &s); err != nil || s.Campaign != id {
				t.Fatalf("status event %s: %v", data, err)
			}
			sawStatus = sawStatus || s.State == messages.StateCompleted
		}
	}
	if !sawStatus || lastEvaluated != 40 {
		t.Errorf("events: completed status %v, last progress %d/40 (%v)", sawStatus, lastEvaluated, sc.Err())
	}

	code, body := get(t, url+"/api/campaigns")
	var list []console.Campaign
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || len(list) != 1 || list[0].Progress != 1 {
		t.Fatalf("list: %d %s", code, body)
	}
	code, body = get(t, url+"/api/campaigns/"+id)
	var d struct {
		Evaluated   int    `json:"evaluated"`
		CurveSource string `json:"curve_source"`
		Discoveries []struct {
			ID string `json:"id"`
		} `json:"discoveries"`
	}
	if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil || d.Evaluated != 40 || d.CurveSource != "store" {
		t.Fatalf("detail: %d %.300s", code, body)
	}
	for _, p := range []string{"curve", "rates", "pareto"} {
		if code, body := get(t, url+"/api/campaigns/"+id+"/plots/"+p+".svg"); code != 200 || !strings.HasPrefix(body, "<svg") {
			t.Errorf("plot %s: %d %.100s", p, code, body)
		}
	}
	if code, body := get(t, url+"/api/campaigns/"+id+"/download?format=csv"); code != 200 || strings.Count(body, "\n") != 41 {
		t.Errorf("CSV: %d, %d lines, want a header and 40 rows", code, strings.Count(body, "\n"))
	}
	if len(d.Discoveries) == 0 {
		t.Fatal("no discoveries to download")
	}
	cand := d.Discoveries[0].ID
	for _, f := range crystal.WriteFormats {
		code, body := get(t, url+"/api/campaigns/"+id+"/structures/"+cand+"?format="+f.Name())
		if code != 200 {
			t.Errorf("%s: %d %s", f, code, body)
			continue
		}
		if _, got, err := (crystal.ReadOptions{}).Parse([]byte(body), ""); err != nil || got != f {
			t.Errorf("%s of %s reads back as %s: %v", f, cand, got, err)
		}
	}
	if code, body := get(t, url+"/api/campaigns/"+id+"/download?format=cif"); code != 200 || strings.Count(body, "data_") != len(d.Discoveries) {
		t.Errorf("CIF download: %d, %d data blocks for %d discoveries", code, strings.Count(body, "data_"), len(d.Discoveries))
	}

	if code, body := get(t, url+"/api/campaigns/"+id+"/download?format=cif&symmetrize=1"); code != 200 || strings.Count(body, "data_") != len(d.Discoveries) || !strings.Contains(body, "_space_group_name_Hall") {
		t.Errorf("symmetrized CIF download: %d %.300s", code, body)
	}

	// Bad input: a clear error, with the status that says whose fault.
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/campaigns/nope", 404, "no campaign nope"},
		{"/api/campaigns/Bad!Id", 400, "campaign"},
		{"/api/campaigns/" + id + "/download?format=pdf", 400, "unknown structure format"},
		{"/api/campaigns/" + id + "/download?format=poscar", 400, "one structure"},
		{"/api/campaigns/" + id + "/download?format=xyz&symmetrize=1", 400, "only a CIF"},
		{"/api/campaigns/" + id + "/structures/" + id + "-g999-c0", 404, "no evaluated candidate"},
		{"/api/campaigns/" + id + "/plots/pie.svg", 404, "no plot"},
		{"/api/campaigns/" + id + "/evaluations?limit=-1", 400, "limit"},
	} {
		if code, body := get(t, url+c.path); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, code, body, c.code, c.want)
		}
	}

	verb := url + "/api/campaigns/" + id + "/"
	for _, c := range []struct {
		verb, token, body string
		code              int
		want              string
	}{
		{"cancel", "", "", 401, "token"},
		{"cancel", "wrong", "", 401, "token"},
		{"launch", "tok", "", 404, "no verb"},
		{"extend", "tok", `{"budget": 0}`, 400, "positive"},
		{"extend", "tok", `{"bugdet": 80}`, 400, "unknown field"},
		{"extend", "tok", `{"budget": 80}`, 200, "extend"},
		{"pause", "tok", "", 200, "pause"},
	} {
		if code, body := post(t, verb+c.verb, c.token, c.body); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST %s (token %q, body %s): %d %s, want %d with %q", c.verb, c.token, c.body, code, body, c.code, c.want)
		}
	}
	if calls := ctl.Calls(); strings.Join(calls, ",") != "extend/80 "+id+",pause "+id {
		t.Errorf("controller calls %v", calls)
	}
}

// TestReadOnly: without a token every verb is refused, and an
// installation without lifecycle verbs answers 501.
func TestReadOnly(t *testing.T) {
	srv := &console.Server{Control: console.ReadOnly{}}
	h := srv.Handler()
	rec := func(token string) (int, string) {
		req, _ := http.NewRequest("POST", "/api/campaigns/x/cancel", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := &recorder{header: http.Header{}}
		h.ServeHTTP(w, req)
		return w.code, w.body.String()
	}
	if code, body := rec("anything"); code != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("no token configured: %d %s", code, body)
	}
	if err := (console.ReadOnly{}).Extend(context.Background(), "x", 10); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("ReadOnly.Extend: %v", err)
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = 200
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) { r.code = code }

// TestAssets: the embedded web application is whole — every file its page
// loads is embedded (a rebuild of web/ committed without its dist, or
// the reverse, fails here).
func TestAssets(t *testing.T) {
	assets := console.Assets()
	page, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="\./(assets/[^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 2 {
		t.Fatalf("index.html loads %d assets, want its script and style:\n%s", len(refs), page)
	}
	for _, r := range refs {
		data, err := fs.ReadFile(assets, r[1])
		if err != nil || len(data) == 0 {
			t.Errorf("index.html loads %s: %v", r[1], err)
		}
		// The structure viewer is loaded on demand by the script.
		if strings.HasSuffix(r[1], ".js") && !regexp.MustCompile(`3Dmol-[\w-]+\.js`).Match(data) {
			t.Errorf("%s does not load the 3Dmol.js chunk", r[1])
		}
	}
}
