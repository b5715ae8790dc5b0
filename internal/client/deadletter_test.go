package client

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// received is a message the test consumer handled after the fault was
// cleared.
type received struct {
	subject string
	data    []byte
	header  nats.Header
}

// deadLetterRig runs a consumer of the propose stream whose handler fails
// permanently while broken is set (the model server down, say: the message
// is dead-lettered), for campaign "b" always (an unknown campaign), and
// records what it handles otherwise.
type deadLetterRig struct {
	broken atomic.Bool
	mu     sync.Mutex
	got    []received
}

func (r *deadLetterRig) handled() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func startDeadLetterRig(t *testing.T, c *Client) *deadLetterRig {
	t.Helper()
	r := &deadLetterRig{}
	r.broken.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	spec := messages.ConsumerSpec{Name: "dltest", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxAckPending: 16}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Bus.Run(ctx, spec, bus.RunOptions{Concurrency: 2, Service: "test"}, func(_ context.Context, d *bus.Delivery) error {
			switch {
			case d.Campaign() == "b":
				return bus.Permanent(errors.New("unknown campaign b"))
			case r.broken.Load():
				return bus.Permanent(errors.New("model server 3 unreachable: connection refused"))
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.got = append(r.got, received{subject: d.Subject, data: d.Data, header: d.Header})
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// waitDeadLetters reads the dead letters f selects until there are want.
func waitDeadLetters(t *testing.T, c *Client, f DeadLetterFilter, want int) []DeadLetterEntry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := c.DeadLetters(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("dead letters %+v: %d, want %d", f, len(got), want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestDeadLetterListAndRetry: messages a consumer dead-letters are listed
// with their reason and filtered by campaign, stream, reason and sequence;
// retrying those whose cause has gone re-publishes their exact body and
// headers to their subject, marked as a retry, and removes the dead
// letters; retrying again publishes nothing; a truncated dead letter is
// refused.
func TestDeadLetterListAndRetry(t *testing.T) {
	c := connect(t)
	rig := startDeadLetterRig(t, c)
	ctx := context.Background()
	bodies := map[string][]byte{
		"a1": []byte(`{"request":"a1"}`),
		"a2": []byte(`{"request":"a2"}`),
		"b1": []byte(`{"request":"b1"}`),
		"c1": bytes.Repeat([]byte("x"), bus.MaxDeadLetterData+100),
	}
	for _, id := range []string{"a1", "a2", "b1", "c1"} {
		h := nats.Header{"Crucible-Test": []string{"header of " + id}}
		if _, err := c.Bus.Republish(ctx, messages.Subject(messages.SubjectPropose, id[:1]), "orig-"+id, h, bodies[id]); err != nil {
			t.Fatal(err)
		}
	}
	all := waitDeadLetters(t, c, DeadLetterFilter{}, 4)
	for _, e := range all {
		if e.Stream != messages.StreamPropose || e.Consumer != "dltest" || e.Service != "test" || e.Campaign != strings.TrimPrefix(e.Subject, messages.SubjectPropose+".") {
			t.Errorf("dead letter %+v", e)
		}
	}

	// Filters.
	for _, tc := range []struct {
		f    DeadLetterFilter
		want int
	}{
		{DeadLetterFilter{Campaign: "a"}, 2},
		{DeadLetterFilter{Reason: "UNKNOWN CAMPAIGN"}, 1},
		{DeadLetterFilter{Stream: "propose"}, 4},
		{DeadLetterFilter{Stream: "CANDIDATES"}, 0},
		{DeadLetterFilter{Since: time.Minute}, 4},
		{DeadLetterFilter{Campaign: "a", Seqs: []uint64{all[0].Seq, all[1].Seq, all[2].Seq, all[3].Seq}}, 2},
		{DeadLetterFilter{Seqs: []uint64{all[3].Seq}}, 1},
	} {
		got, err := c.DeadLetters(ctx, tc.f)
		if err != nil || len(got) != tc.want {
			t.Errorf("filter %+v: %d dead letters, %v; want %d", tc.f, len(got), err, tc.want)
		}
	}
	for _, f := range []DeadLetterFilter{{Stream: "bogus"}, {Campaign: "no/such"}} {
		if _, err := c.DeadLetters(ctx, f); err == nil {
			t.Errorf("filter %+v: no error", f)
		}
	}

	// The listing and its count by reason.
	var out, sum bytes.Buffer
	if err := WriteDeadLetters(&out, &sum, all, false, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SEQ", "crucible.propose.a", "4 dead letters, by reason:", "3  model server N unreachable", "1  unknown campaign CAMPAIGN", "(cut)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := WriteDeadLetters(&out, &sum, all, true, 2); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "\n") != 2 || !strings.Contains(sum.String(), "4 dead letters (the last 2 shown), by reason:") {
		t.Errorf("--json --limit 2: %s\nsummary %s", out.String(), sum.String())
	}

	// A dry run does nothing; the truncated one is refused.
	outcomes, err := c.Retry(ctx, all, true)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range outcomes {
		kinds[o.Outcome]++
		if o.Outcome == RetryRefused && (o.Campaign != "c" || !strings.Contains(o.Reason, "truncated")) {
			t.Errorf("refused %+v", o)
		}
	}
	if kinds[RetryDryRun] != 3 || kinds[RetryRefused] != 1 {
		t.Errorf("dry run: %v", outcomes)
	}
	waitDeadLetters(t, c, DeadLetterFilter{}, 4)

	// The fault is gone: retry campaign a's.
	rig.broken.Store(false)
	as := waitDeadLetters(t, c, DeadLetterFilter{Campaign: "a"}, 2)
	outcomes, err = c.Retry(ctx, as, false)
	if err != nil || len(outcomes) != 2 || outcomes[0].Outcome != RetryPublished || outcomes[1].Outcome != RetryPublished {
		t.Fatalf("retry: %+v, %v", outcomes, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(rig.handled()) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	got := rig.handled()
	if len(got) != 2 {
		t.Fatalf("handled %d retried messages, want 2", len(got))
	}
	for _, m := range got {
		var e *DeadLetterEntry
		for i := range as {
			if bytes.Equal(as[i].Data, m.data) {
				e = &as[i]
			}
		}
		if e == nil {
			t.Fatalf("retried body %q is none of the dead letters'", m.data)
		}
		id := string(m.data[len(`{"request":"`) : len(m.data)-2])
		if m.subject != e.Subject || !bytes.Equal(m.data, bodies[id]) {
			t.Errorf("retried %s on %s, want %s", m.data, m.subject, e.Subject)
		}
		if m.header.Get("Crucible-Test") != "header of "+id || m.header.Get(messages.HeaderRetryOf) != strconv.FormatUint(e.Seq, 10) ||
			m.header.Get(jetstream.MsgIDHeader) != "retry/"+e.MsgID() {
			t.Errorf("retried %s with headers %v", id, m.header)
		}
	}
	waitDeadLetters(t, c, DeadLetterFilter{Campaign: "a"}, 0)
	waitDeadLetters(t, c, DeadLetterFilter{}, 2)

	// Again: nothing left to select; the same dead letters retried once
	// more (a second operator with a stale list) are dropped by the stream.
	outcomes, err = c.Retry(ctx, as, false)
	if err != nil || len(outcomes) != 2 || outcomes[0].Outcome != RetryDuplicate || outcomes[1].Outcome != RetryDuplicate {
		t.Fatalf("second retry: %+v, %v", outcomes, err)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := len(rig.handled()); n != 2 {
		t.Errorf("after a second retry %d messages handled, want 2", n)
	}

	// The truncated one stays, refused.
	cs := waitDeadLetters(t, c, DeadLetterFilter{Campaign: "c"}, 1)
	if !cs[0].Truncated || cs[0].Size != len(bodies["c1"]) {
		t.Errorf("oversize dead letter %+v", cs[0].DeadLetter.Size)
	}
	outcomes, err = c.Retry(ctx, cs, false)
	if err != nil || len(outcomes) != 1 || outcomes[0].Outcome != RetryRefused {
		t.Errorf("retry of a truncated dead letter: %+v, %v", outcomes, err)
	}
	waitDeadLetters(t, c, DeadLetterFilter{Campaign: "c"}, 1)
}

// TestDeadLetterRetryPermission runs NATS with the deployment's users and
// permissions (deploy/k8s/base/nats/auth.conf, which compose mounts too):
// the client user may list dead letters but a retry tells it that retry
// needs the operator's credentials; so does the evaluator, who may publish
// evaluations but not remove dead letters, after its re-publish; the admin
// retries.
func TestDeadLetterRetryPermission(t *testing.T) {
	for _, u := range []string{"ADMIN", "PROPOSER", "EVALUATOR", "REFLECTOR", "JUDGE", "CLIENT"} {
		t.Setenv("NATS_"+u+"_PASSWORD", "p"+strings.ToLower(u))
	}
	opts, err := server.ProcessConfigFile(filepath.Join("..", "..", "deploy", "k8s", "base", "nats", "auth.conf"))
	if err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs = "127.0.0.1", server.RANDOM_PORT, true, t.TempDir(), true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	as := func(user string) *Client {
		b, err := bus.Connect(ctx, bus.Options{URL: srv.ClientURL(), User: user, Password: "p" + user, MemoryStorage: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		return &Client{Bus: b}
	}
	admin := as("admin")
	if err := admin.Bus.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	dl := &messages.DeadLetter{Schema: messages.SchemaVersion, Stream: messages.StreamEvaluations, Consumer: messages.ConsumerJudge,
		Subject: messages.Subject(messages.SubjectEvaluations, "p"), Sequence: 7, Deliveries: 10, Reason: "failed 10 deliveries: model server down",
		Service: "judge", Data: []byte(`{}`), Size: 2, At: time.Now().UTC()}
	if err := admin.Bus.Publish(ctx, messages.DeadLetterSubject(dl.Stream, "p"), dl); err != nil {
		t.Fatal(err)
	}
	entries, err := as("client").DeadLetters(ctx, DeadLetterFilter{Campaign: "p", Since: time.Hour})
	if err != nil || len(entries) != 1 {
		t.Fatalf("client lists %d dead letters, %v", len(entries), err)
	}
	for _, user := range []string{"client", "evaluator"} {
		_, err = as(user).Retry(ctx, entries, false)
		if !errors.Is(err, ErrNeedsOperator) || !strings.Contains(err.Error(), "admin") {
			t.Errorf("%s retries: %v, want the refusal naming the operator's credentials", user, err)
		}
	}
	entries, err = admin.DeadLetters(ctx, DeadLetterFilter{Campaign: "p"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("admin lists %d dead letters, %v", len(entries), err)
	}
	if outcomes, err := admin.Retry(ctx, entries, false); err != nil || len(outcomes) != 1 || outcomes[0].Outcome != RetryDuplicate {
		// The evaluator's re-publish went through before its removal was refused.
		t.Errorf("admin retries: %+v, %v", outcomes, err)
	}
	if entries, err := admin.DeadLetters(ctx, DeadLetterFilter{}); err != nil || len(entries) != 0 {
		t.Errorf("after the admin's retry: %d dead letters, %v", len(entries), err)
	}
}
