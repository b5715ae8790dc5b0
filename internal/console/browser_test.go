package console_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/console"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/report"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// fakeControl records the lifecycle verbs the console asks for.
type fakeControl struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeControl) record(verb, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, verb+" "+id)
	return nil
}

func (f *fakeControl) Cancel(_ context.Context, id string) error { return f.record("cancel", id) }
func (f *fakeControl) Pause(_ context.Context, id string) error  { return f.record("pause", id) }
func (f *fakeControl) Resume(_ context.Context, id string) error { return f.record("resume", id) }
func (f *fakeControl) Delete(_ context.Context, id string) error { return f.record("delete", id) }
func (f *fakeControl) Extend(_ context.Context, id string, budget int) error {
	return f.record("extend/"+strconv.Itoa(budget), id)
}

func (f *fakeControl) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// stack starts a local stack (embedded servers, or the real ones of
// CRUCIBLE_TEST_*) in its own namespace, its oracle taking delay more per
// candidate; submit submits a campaign of budget evaluations without
// waiting for it.
func stack(t *testing.T, budget int, delay time.Duration) (st *local.Stack, namespace string, cl *client.Client, campaign string, submit func()) {
	t.Helper()
	dir := testbed.DataDir(t)
	_, o, err := wire.Oracle(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := wire.Reference(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts := local.Options{Oracle: o, Namespace: testsrv.Namespace(),
		Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }}
	opts.Evaluator.Delay = delay
	if n, r := testbed.NATSURL(), testbed.RedisURL(); n != "" && r != "" {
		opts.NATSURL, opts.RedisURL, opts.MemoryStreams = n, r, true
	}
	ctx, cancel := context.WithCancel(context.Background())
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	st, err = local.Start(sctx, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if opts.NATSURL != "" { // leave nothing behind on shared servers
			pctx, pcancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer pcancel()
			_ = st.Purge(pctx)
		}
		st.Close()
	})
	cl = &client.Client{Bus: st.Bus, Store: st.Store}
	campaign = "console-e2e"
	spec := &messages.CampaignSpec{ID: campaign, Budget: budget, Seed: 3, Task: task.Task{
		Name: "Insulating stable compounds (test)", Goal: "Band gap ≥ 1 eV, formation energy ≤ -0.5 eV/atom",
		Constraints: []task.Constraint{task.AtLeast("band_gap", 1), task.AtMost("formation_energy_per_atom", -0.5)},
	}}
	submit = func() {
		t.Helper()
		if err := cl.Submit(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	return st, opts.Namespace, cl, campaign, submit
}

// installation is a stack with the console served in the test's process
// with ctl and token.
func installation(t *testing.T, budget int, ctl console.Controller, token string) (cl *client.Client, consoleURL, campaign string, submit func()) {
	t.Helper()
	_, _, cl, campaign, submit = stack(t, budget, 0)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv := &console.Server{Client: cl, Control: ctl, Token: token}
	addr := make(chan net.Addr, 1)
	go func() {
		if err := srv.Serve(ctx, "127.0.0.1:0", func(a net.Addr) { addr <- a }); err != nil {
			t.Errorf("serve: %v", err)
			addr <- nil
		}
	}()
	a := <-addr
	if a == nil {
		t.FailNow()
	}
	return cl, "http://" + a.String(), campaign, submit
}

// serve runs the crucible binary's console, "crucible serve", over the
// stack as an operator would, with the control token in its environment,
// and returns its address. Its log goes to the test's when the test
// fails.
func serve(t *testing.T, st *local.Stack, namespace, token string) string {
	t.Helper()
	dir := t.TempDir()
	bin := testsrv.Binaries(t, dir, "crucible")
	natsURL, redisURL := st.URLs()
	p := &proc.Process{Name: "crucible serve", Path: filepath.Join(bin, "crucible"),
		Args: []string{"serve", "--addr", "127.0.0.1:0", "--nats", natsURL, "--redis", redisURL, "--namespace", namespace, "--connect-timeout", "30s"},
		Env:  []string{"CRUCIBLE_CONSOLE_TOKEN=" + token}, Log: filepath.Join(dir, "serve.log")}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("crucible serve:\n%s", p.Tail(50))
		}
	})
	// "console on http://ADDR/ · …"
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, line := range strings.Split(p.Tail(50), "\n") {
			if f := strings.Fields(line); len(f) >= 3 && f[0] == "console" && f[1] == "on" {
				return strings.TrimSuffix(f[2], "/")
			}
		}
		if !p.Running() {
			t.Fatalf("crucible serve ended without serving: %v\n%s", p.ExitErr(), p.Tail(50))
		}
	}
	t.Fatalf("crucible serve did not say where it serves within a minute:\n%s", p.Tail(50))
	return ""
}

// evaluatedOf reads "N/B" of a progress text.
func evaluatedOf(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(s, "/", 2)[0]))
	return n
}

// TestBrowser opens the console in headless Chromium as a person would,
// served by "crucible serve" over a local stack: the campaign appears and
// its progress advances, a discovery row opens its structure view, the
// plots are drawn, a cancel cancels the campaign and a wrong token is
// refused. Screenshots go to CRUCIBLE_SCREENSHOTS (the test's folder
// otherwise), with a report of the campaign and its screenshot.
func TestBrowser(t *testing.T) {
	b := startBrowser(t)
	// The oracle's 0.25 s a candidate keeps the campaign running (at least
	// 75 s) until the cancel.
	st, namespace, cl, id, submit := stack(t, 300, 250*time.Millisecond)
	url := serve(t, st, namespace, "s3cret")
	ctx := context.Background()

	// The page is open before the campaign exists: it appears, and its
	// progress advances, from the server's events alone.
	b.open(url + "/")
	b.waitFor("#campaigns", 30*time.Second)
	submit()
	row := `tr[data-campaign="` + id + `"]`
	b.waitFor(row, 90*time.Second)
	progress := func() int { return evaluatedOf(b.textCSS(row + " .progress-text")) }
	first := 0
	b.wait("a first evaluation", 3*time.Minute, func() bool { first = progress(); return first > 0 })
	b.wait("the progress to advance past "+strconv.Itoa(first), 3*time.Minute, func() bool { return progress() > first })
	b.screenshot("console-campaigns")

	b.clickCSS(row + " a")
	b.waitFor("#discoveries", 60*time.Second)
	b.waitFor("tr.discovery", 4*time.Minute)
	b.wait("the plots", 30*time.Second, func() bool {
		return b.find(`[data-plot="curve"] svg polyline`) != "" && b.find(`[data-plot="rates"] svg`) != ""
	})
	b.clickCSS("tr.discovery")
	b.waitFor(`#viewer[data-loaded="1"] canvas`, 60*time.Second)
	if txt := b.textCSS("#verdict-report"); txt == "" {
		t.Error("the structure view shows no verdict report")
	}
	b.screenshot("console-campaign")

	// Cancel: the token, then the button twice (it asks for confirmation).
	// The campaign drains its work in flight and ends cancelled, and the
	// page says so from the server's events.
	status := func() string {
		t.Helper()
		sum, err := cl.Show(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return sum.State
	}
	b.typeInto(b.find("#token"), "s3cret")
	b.script(`document.getElementById('token').dispatchEvent(new Event('change'))`, nil)
	b.clickCSS("#btn-cancel")
	if s := status(); s != messages.StateRunning {
		t.Fatalf("one click: the campaign is %s, want still running", s)
	}
	b.clickCSS("#btn-cancel")
	b.wait("the cancel to be done", 30*time.Second, func() bool { return strings.Contains(b.textCSS("#action-result"), "cancel: done") })
	b.wait("the page to show the campaign cancelled", 2*time.Minute, func() bool { return b.textCSS("#state") == messages.StateCancelled })
	if s := status(); s != messages.StateCancelled {
		t.Errorf("after the cancel the campaign is %s", s)
	}
	sum, err := cl.Show(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counters.Evaluated >= 300 {
		t.Errorf("cancelled after all %d evaluations: the cancel came too late to show anything", sum.Counters.Evaluated)
	}
	t.Logf("cancelled at %d of 300 evaluations", sum.Counters.Evaluated)
	b.screenshot("console-cancelled")

	// A wrong token is refused, and the campaign stays as it was.
	b.typeInto(b.find("#token"), "wrong")
	b.clickCSS("#btn-resume")
	b.wait("the refusal", 30*time.Second, func() bool { return strings.Contains(b.textCSS("#action-result"), "wrong token") })
	if s := status(); s != messages.StateCancelled {
		t.Errorf("a refused resume left the campaign %s", s)
	}

	// The report of the same campaign, opened as a file.
	d, err := report.FromClient(context.Background(), cl, id)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(b.shots, "report.html")
	if os.Getenv("CRUCIBLE_SCREENSHOTS") == "" {
		path = filepath.Join(t.TempDir(), "report.html")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(f, d, time.Now()); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b.open("file://" + path)
	b.waitFor(`svg[data-chart="pareto"]`, 10*time.Second)
	b.screenshot("report")
}
