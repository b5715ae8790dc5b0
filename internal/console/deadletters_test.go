package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/console"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/testsrv/testbus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestDeadLetterAPI: GET .../deadletters lists a campaign's dead letters
// (not another campaign's) with their count by reason, and checks its
// query; POST .../deadletters/retry needs the token, checks its body,
// refuses a truncated dead letter, and re-publishes the body of the one
// selected to its subject, after which it is no longer listed.
func TestDeadLetterAPI(t *testing.T) {
	redisURL, _ := testsrv.Redis(t)
	ns := testsrv.Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, _ := testbus.Open(t, ctx, ns)
	st, err := store.Open(ctx, store.Options{URL: redisURL, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const id = "dlapi"
	spec := &messages.CampaignSpec{Schema: messages.SchemaVersion, ID: id, Budget: 3, Episodes: 1, BatchSize: 3, Islands: 1, SubmittedAt: time.Now()}
	if _, err := st.CreateCampaign(ctx, spec, 1); err != nil {
		t.Fatal(err)
	}
	letter := func(campaign string, seq uint64, reason string, data []byte, truncated bool) {
		d := &messages.DeadLetter{Schema: messages.SchemaVersion, Stream: messages.StreamCandidates, Consumer: messages.ConsumerEvaluator,
			Subject: messages.Subject(messages.SubjectCandidates, campaign), Sequence: seq, Deliveries: 1, Reason: reason,
			Service: "evaluator", Data: data, Size: len(data), Truncated: truncated, At: time.Now().UTC()}
		if truncated {
			d.Size = 2 * len(data)
		}
		if err := b.Publish(ctx, messages.DeadLetterSubject(d.Stream, campaign), d); err != nil {
			t.Fatal(err)
		}
	}
	letter(id, 1, "permanent failure: model server 2 unreachable", []byte(`{"first":1}`), false)
	letter(id, 2, "permanent failure: model server 2 unreachable", []byte(`{"second":2}`), false)
	letter(id, 3, "permanent failure: oversize message: 2000000 bytes", bytes.Repeat([]byte("x"), 100), true)
	letter("other", 4, "permanent failure: unknown campaign other", []byte(`{}`), false)

	cl := &client.Client{Bus: b, Store: st}
	srv := httptest.NewServer((&console.Server{Client: cl, Control: &fakeControl{}, Token: "tok"}).Handler())
	defer srv.Close()
	base := srv.URL + "/api/campaigns/" + id + "/deadletters"
	list := func(query string) console.DeadLetters {
		t.Helper()
		code, body := get(t, base+query)
		var d console.DeadLetters
		if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil {
			t.Fatalf("GET deadletters%s: %d %s", query, code, body)
		}
		return d
	}
	d := list("")
	if d.Total != 3 || len(d.DeadLetters) != 3 || d.ByReason["model server N unreachable"] != 2 || d.ByReason["oversize message: N bytes"] != 1 {
		t.Fatalf("deadletters: %+v", d)
	}
	if d := list("?limit=1&stream=candidates&since=1h"); d.Total != 3 || len(d.DeadLetters) != 1 || !d.DeadLetters[0].Truncated {
		t.Errorf("limit 1: %+v", d)
	}
	if d := list("?reason=OVERSIZE"); d.Total != 1 {
		t.Errorf("reason oversize: %+v", d)
	}
	for _, q := range []string{"?limit=0", "?since=soon", "?stream=nowhere", "?campaign=x"} {
		if code, body := get(t, base+q); code != 400 {
			t.Errorf("GET deadletters%s: %d %s, want 400", q, code, body)
		}
	}
	if code, _ := get(t, srv.URL+"/api/campaigns/nope/deadletters"); code != 404 {
		t.Errorf("deadletters of an unknown campaign: %d", code)
	}

	retry := base + "/retry"
	for _, c := range []struct {
		token, body string
		code        int
		want        string
	}{
		{"", "", 401, "token"},
		{"tok", `{"sequence": [1]}`, 400, "unknown field"},
		{"tok", `{"stream": "nowhere"}`, 400, "stream"},
		{"tok", `{"dry_run": true}`, 200, `"would retry"`},
	} {
		if code, body := post(t, retry, c.token, c.body); code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("POST retry (token %q, body %s): %d %s, want %d with %q", c.token, c.body, code, body, c.code, c.want)
		}
	}
	var seqs []uint64
	for _, e := range d.DeadLetters {
		seqs = append(seqs, e.Seq)
	}
	body, _ := json.Marshal(console.RetryRequest{Seq: []uint64{seqs[0], seqs[2]}})
	code, out := post(t, retry, "tok", string(body))
	var ans console.RetryAnswer
	if err := json.Unmarshal([]byte(out), &ans); code != 200 || err != nil || len(ans.Outcomes) != 2 ||
		ans.Outcomes[0].Outcome != client.RetryPublished || ans.Outcomes[1].Outcome != client.RetryRefused || !strings.Contains(ans.Outcomes[1].Reason, "truncated") {
		t.Fatalf("POST retry: %d %s", code, out)
	}
	// The candidates stream (a work queue, read without a consumer) holds
	// the body re-published.
	cands, err := b.JS.Stream(ctx, b.Stream(messages.StreamCandidates))
	if err != nil {
		t.Fatal(err)
	}
	if m, err := cands.GetLastMsgForSubject(ctx, b.Subject(messages.Subject(messages.SubjectCandidates, id))); err != nil || string(m.Data) != `{"first":1}` ||
		m.Header.Get(messages.HeaderRetryOf) != strconv.FormatUint(seqs[0], 10) {
		t.Errorf("candidates after the retry: %v", err)
	} else if info, _ := cands.Info(ctx); info.State.Msgs != 1 {
		t.Errorf("candidates after the retry: %d messages, want 1", info.State.Msgs)
	}
	if d := list(""); d.Total != 2 {
		t.Errorf("after the retry: %+v", d)
	}

	ro := httptest.NewServer((&console.Server{Client: cl, Control: console.ReadOnly{}, Token: "tok"}).Handler())
	defer ro.Close()
	if code, body := post(t, ro.URL+"/api/campaigns/"+id+"/deadletters/retry", "tok", ""); code != 501 {
		t.Errorf("retry on a read-only installation: %d %s", code, body)
	}
}
