package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/embedded"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestProgressLine: the line says what the display waits for, and the
// rate counts only the evaluations done since the display started.
func TestProgressLine(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{Budget: 10, Evaluated: 4, Waiting: "Redis"},
			"4/10 evaluated · 0 hits · 0 stable · 0 discoveries · 0.0 eval/s · waiting for Redis"},
		{Progress{Budget: 100, Evaluated: 60, Since: 40, Hits: 3, Stable: 2, Discoveries: 1, Elapsed: 4 * time.Second},
			"60/100 evaluated · 3 hits · 2 stable · 1 discoveries · 5.0 eval/s"},
	} {
		if got := ProgressLine(c.p, 0); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	if got := ProgressLine(Progress{Budget: 10, Evaluated: 5}, 10); !strings.HasPrefix(got, "[#####.....] 5/10 evaluated") {
		t.Errorf("with a bar: %q", got)
	}
}

// TestProgressPrinter: on a terminal the line is redrawn in place; else a
// line is printed for each tenth of the budget, when an outage begins or
// ends, and when the counters changed and the last line is ProgressEvery
// old, never twice for the same progress.
func TestProgressPrinter(t *testing.T) {
	var tty bytes.Buffer
	ProgressPrinter(&tty, true)(Progress{Budget: 10, Evaluated: 5})
	if got := tty.String(); !strings.HasPrefix(got, "\r[") || !strings.HasSuffix(got, "\033[K") {
		t.Errorf("terminal: %q", got)
	}

	var out bytes.Buffer
	now := time.Unix(0, 0)
	print := progressPrinter(&out, false, func() time.Time { return now })
	steps := []struct {
		after       time.Duration
		evaluated   int
		waiting     string
		wantPrinted bool
	}{
		{0, 0, "", true},                           // the first line
		{time.Second, 3, "", false},                // same tenth, 1 s later
		{time.Second, 12, "", true},                // the next tenth
		{ProgressEvery, 12, "", false},             // nothing changed
		{time.Second, 13, "Redis", true},           // the outage begins
		{time.Second, 13, "Redis", false},          // still waiting
		{ProgressEvery, 13, "Redis", false},        // still nothing new
		{time.Second, 14, "", true},                // the outage ends
		{time.Second, 15, "", false},               // a change, 1 s after the last line
		{ProgressEvery, 16, "", true},              // a change, 10 s after
		{time.Second, 100, "", true},               // the budget is spent
		{time.Second, 100, "", false},              // the final call: printed already
		{time.Second, 100, "NATS", true},           // (an outage at the very end)
		{time.Second, 100, "NATS and Redis", true}, // what it waits for changed
	}
	lines := 0
	for i, s := range steps {
		now = now.Add(s.after)
		print(Progress{Budget: 100, Evaluated: s.evaluated, Waiting: s.waiting})
		n := strings.Count(out.String(), "\n")
		if printed := n > lines; printed != s.wantPrinted {
			t.Errorf("step %d (%d evaluated, waiting %q): printed %v, want %v", i, s.evaluated, s.waiting, printed, s.wantPrinted)
		}
		lines = n
	}
	if !strings.Contains(out.String(), "13/100 evaluated · 0 hits · 0 stable · 0 discoveries · 0.0 eval/s · waiting for Redis\n") {
		t.Errorf("no outage line in\n%s", out.String())
	}
}

// TestWatchProgressOutage: WatchProgress reports a campaign's counters,
// and names Redis, then NATS too, while they cannot be reached, with the
// last counters read.
func TestWatchProgressOutage(t *testing.T) {
	store.RouteLogs(zap.NewNop())
	ns, err := embedded.StartNATS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Shutdown()
	rs, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Options{URL: ns.URL(), Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := store.Open(ctx, store.Options{URL: rs.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := &messages.CampaignSpec{ID: "watched", Budget: 30}
	if _, err := s.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	c := &Client{Bus: b, Store: s}
	got := make(chan Progress, 1000)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		c.WatchProgress(ctx, spec.ID, 20*time.Millisecond, stop, func(p Progress) { got <- p })
	}()
	await := func(what string, ok func(Progress) bool) Progress {
		t.Helper()
		for {
			select {
			case p := <-got:
				if ok(p) {
					return p
				}
			case <-ctx.Done():
				t.Fatalf("no progress with %s", what)
			}
		}
	}
	await("the budget", func(p Progress) bool { return p.Budget == 30 && p.Waiting == "" })
	rs.Close()
	p := await("waiting for Redis", func(p Progress) bool { return p.Waiting == "Redis" })
	if p.Budget != 30 {
		t.Errorf("during the outage: budget %d, want the last one read (30)", p.Budget)
	}
	ns.Shutdown()
	await("waiting for Redis and NATS", func(p Progress) bool { return p.Waiting == "Redis and NATS" })
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WatchProgress did not return after stop")
	}
}
