package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// profile sizes a chaos run.
type profile struct {
	name string
	// budget is the campaign's evaluations; evaluators the evaluator
	// replicas; oracleDelay their artificial cost per candidate, which
	// paces the campaign so the controller gets to act.
	budget, evaluators int
	// replicas of each of the proposer, the reflector and the judge.
	replicas    int
	oracleDelay time.Duration
	// minKills is the least number of stops (SIGKILLs and SIGTERMs) the
	// run must have dealt.
	minKills int
	// serverDowntime is how long Redis and NATS stay down when killed.
	serverDowntime time.Duration
	// timeout bounds the whole run.
	timeout time.Duration
}

// The CI profile runs under plain `go test ./...`; the full one with
// CRUCIBLE_CHAOS=full (`make chaos`).
var (
	ciProfile   = profile{name: "ci", budget: 200, evaluators: 2, replicas: 1, oracleDelay: 400 * time.Millisecond, minKills: 20, serverDowntime: 5 * time.Second, timeout: 6 * time.Minute}
	fullProfile = profile{name: "full", budget: 600, evaluators: 3, replicas: 2, oracleDelay: 400 * time.Millisecond, minKills: 40, serverDowntime: 20 * time.Second, timeout: 10 * time.Minute}
)

func chaosProfile(t *testing.T) profile {
	switch os.Getenv("CRUCIBLE_CHAOS") {
	case "", "ci":
		if testing.Short() {
			t.Skip("-short: skipping the chaos test (CRUCIBLE_CHAOS=full runs the full one)")
		}
		return ciProfile
	case "full":
		if _, ok := testbed.FindDataDir(); !ok {
			t.Fatal("CRUCIBLE_CHAOS=full needs the reference data and CGCNN checkpoints (CRUCIBLE_DATA, or ../shared beside the clone)")
		}
		return fullProfile
	case "off":
		t.Skip("CRUCIBLE_CHAOS=off")
	}
	t.Fatalf("CRUCIBLE_CHAOS=%q: want ci, full or off", os.Getenv("CRUCIBLE_CHAOS"))
	return profile{}
}

// TestChaos runs a campaign on the four service binaries against a NATS
// server and a Redis server started for the test (real programs when the
// machine has them), while a controller SIGKILLs and restarts services at
// random, restarts Redis and NATS once each and Redis once more from a
// snapshot of its files taken seconds before (it loses what was written
// since; the services reconcile it with the streams); then it checks
// every guarantee with Verify.
func TestChaos(t *testing.T) {
	pr := chaosProfile(t)
	// The test's own clients retry through the outages it causes: their
	// connection errors are expected, not news.
	store.RouteLogs(zap.NewNop())
	data := testbed.DataDir(t)
	dir := t.TempDir()
	bin := testsrv.Binaries(t, dir, "proposer", "evaluator", "reflector", "judge")
	// The run's time starts once the binaries are built.
	ctx, cancel := context.WithTimeout(context.Background(), pr.timeout)
	defer cancel()
	// CRUCIBLE_CHAOS_EMBEDDED=1 runs the fallback this test takes on a
	// machine without nats-server and redis-server.
	embedded := os.Getenv("CRUCIBLE_CHAOS_EMBEDDED") == "1"
	nats, err := proc.StartNATS(proc.NATSOptions{Dir: filepath.Join(dir, "jetstream"), Log: filepath.Join(dir, "nats.log"), Embedded: embedded})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nats.Close)
	if err := os.MkdirAll(filepath.Join(dir, "redis"), 0o755); err != nil {
		t.Fatal(err)
	}
	redis, err := proc.StartRedis(proc.RedisOptions{Dir: filepath.Join(dir, "redis"), Log: filepath.Join(dir, "redis.log"), Embedded: embedded})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redis.Close)
	if nats.Embedded() || redis.Embedded() {
		t.Logf("servers: embedded NATS %v, embedded Redis %v (an embedded Redis keeps its data in memory across a restart: the append-only file is not exercised)", nats.Embedded(), redis.Embedded())
	}

	ns := testsrv.Namespace()
	env := []string{
		"CRUCIBLE_NATS_URL=" + nats.URL(), "CRUCIBLE_REDIS_URL=" + redis.URL(), "CRUCIBLE_NAMESPACE=" + ns,
		"CRUCIBLE_DATA=" + data, "CRUCIBLE_HTTP_ADDR=127.0.0.1:0", "CRUCIBLE_LOG_LEVEL=info", "CRUCIBLE_DRAIN_TIMEOUT=5s",
	}
	// The campaign has the relax oracle: screen evaluators queue the
	// candidates that pass its screen for a relax replica of their own,
	// killed like any other, mid-relaxation as often as not.
	counts := map[string]int{"proposer": pr.replicas, "evaluator": pr.evaluators, "evaluator-relax": 1, "reflector": pr.replicas, "judge": pr.replicas}
	var replicas []*Replica
	for _, kind := range []string{"proposer", "evaluator", "evaluator-relax", "reflector", "judge"} {
		for i := 1; i <= counts[kind]; i++ {
			name := fmt.Sprintf("%s-%d", kind, i)
			p := &proc.Process{Name: name, Path: filepath.Join(bin, kind), Env: env, Log: filepath.Join(dir, name+".log")}
			switch kind {
			case "evaluator":
				p.Env = append(append([]string{}, env...), "CRUCIBLE_ORACLE_DELAY="+pr.oracleDelay.String(), "CRUCIBLE_EVALUATOR_BATCH=8", "CRUCIBLE_EVALUATOR_WORKERS=1",
					"CRUCIBLE_EVALUATOR_ROLE=screen")
			case "evaluator-relax":
				p.Path = filepath.Join(bin, "evaluator")
				p.Env = append(append([]string{}, env...), "CRUCIBLE_EVALUATOR_WORKERS=1", "CRUCIBLE_EVALUATOR_ROLE=relax", "CRUCIBLE_EVALUATOR_RELAX_WORKERS=1")
			}
			if err := p.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if p.Running() {
					_ = p.Kill()
				}
			})
			replicas = append(replicas, &Replica{Kind: kind, P: p})
		}
	}
	dumpLogs := func() {
		for _, r := range replicas {
			t.Logf("--- %s (started %d times):\n%s", r.P.Name, r.P.Starts(), r.P.Tail(20))
		}
		if p := nats.Process(); p != nil {
			t.Logf("--- nats-server:\n%s", p.Tail(20))
		}
	}

	b, err := bus.Connect(ctx, bus.Options{URL: nats.URL(), Name: "chaos-test", Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	st, err := store.Open(ctx, store.Options{URL: redis.URL(), Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cl := &client.Client{Bus: b, Store: st}

	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	if v := os.Getenv("CRUCIBLE_CHAOS_SEED"); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("CRUCIBLE_CHAOS_SEED: %v", err)
		}
	}
	// A strict screen (screened hits at most 0.01 eV/atom above the hull,
	// about one candidate in ten) keeps the relaxations, seconds each on
	// one worker, within the run's time.
	strict := 0.0
	spec := &messages.CampaignSpec{ID: "chaos-" + strconv.FormatUint(seed%1e6, 10), Task: tk, Budget: pr.budget,
		Episodes: 3, BatchSize: 4, MaxInFlight: 8, Seed: seed,
		Oracle: messages.OracleRelax, Screen: messages.ScreenSpec{MaxEAboveHull: 0.01, ErrorMultiple: &strict}}
	t.Logf("profile %s: campaign %s, budget %d, %d evaluators, %d of each other service, oracle delay %v, seed %d, NATS %s, Redis %s",
		pr.name, spec.ID, spec.Budget, pr.evaluators, pr.replicas, pr.oracleDelay, seed, nats.URL(), redis.URL())
	start := time.Now()
	// The submission waits for a proposer to create the streams.
	sctx, cancelSubmit := context.WithTimeout(ctx, time.Minute)
	err = cl.Submit(sctx, spec)
	cancelSubmit()
	if err != nil {
		dumpLogs()
		t.Fatalf("submit after %v: %v", time.Since(start).Round(time.Second), err)
	}
	t.Logf("submitted in %v (the run's clock starts at %s)", time.Since(start).Round(10*time.Millisecond), start.Format("15:04:05.000"))

	progress := func() (float64, bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := st.State(ctx, spec.ID)
		if err != nil {
			return 0, false
		}
		return float64(s.Counters.Evaluated) / float64(spec.Budget), true
	}
	settled := func() bool { return campaignSettled(ctx, cl, spec.ID) }
	ctl := &Controller{
		Replicas: replicas, NATS: nats, Redis: redis, Rand: rand.New(rand.NewPCG(seed, 1)),
		MinInterval: 500 * time.Millisecond, MaxInterval: 2500 * time.Millisecond, MaxRestartDelay: 1500 * time.Millisecond,
		ServerDowntime: pr.serverDowntime,
		RedisAt:        0.3, NATSAt: 0.6,
		// Between the two, Redis goes back to its files of 3 s earlier
		// while the streams keep everything: the reflector reconciles.
		RollbackAt: 0.4, RollbackAfter: 3 * time.Second,
		// One stop in four is a graceful SIGTERM (a rolling update).
		GracefulShare: 0.25, StopTimeout: 10 * time.Second,
		Logf: func(format string, args ...any) {
			t.Logf("%6.1fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
		},
	}
	cctx, stopChaos := context.WithCancel(ctx)
	lifeErr := make(chan error, 1)
	go func() { lifeErr <- lifecycle(ctx, cl, spec, ctl.Logf) }()
	ctl.Supervise(cctx)
	// Poison and forged traffic, a message every 0.5 s, all run long.
	poison := &Poisoner{Bus: b, Campaign: spec.ID, Rand: rand.New(rand.NewPCG(seed, 2)), Interval: 500 * time.Millisecond, Logf: ctl.Logf}
	chaosDone := make(chan struct{})
	poisonDone := make(chan struct{})
	go func() {
		defer close(poisonDone)
		poison.Run(cctx)
	}()
	go func() {
		defer close(chaosDone)
		ctl.Run(cctx, progress, settled)
	}()
	// Runs before the processes' own cleanups: nothing restarts them once
	// they are killed.
	t.Cleanup(func() {
		stopChaos()
		<-chaosDone
		<-poisonDone
		ctl.Wait()
	})

	// Wait for the campaign to complete and every consumer to catch up.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !settled() {
		select {
		case <-ctx.Done():
			stopChaos()
			<-chaosDone
			p, _ := progress()
			dumpLogs()
			t.Fatalf("campaign did not settle within %v (%.0f%% evaluated); %s", pr.timeout, 100*p, ctl.Stats())
		case <-tick.C:
		}
	}
	elapsed := time.Since(start)
	stopChaos()
	<-chaosDone
	<-poisonDone
	ctl.Wait()
	stats := ctl.Stats()
	// The last poison's dead letters settle before the check.
	if !waitIdle(ctx, cl) {
		t.Errorf("consumers not idle after the poison stopped")
	}

	// Stop the services gracefully before reading everything back.
	for _, r := range replicas {
		if r.P.Running() {
			if err := r.P.Stop(10 * time.Second); err != nil {
				t.Errorf("stop %s: %v", r.P.Name, err)
			}
		}
	}
	rep, err := Verify(ctx, b, st, spec)
	if err != nil {
		t.Fatal(err)
	}
	rep.Start = start
	t.Logf("campaign settled in %.1f s; %s", elapsed.Seconds(), stats)
	var logs []string
	for _, r := range replicas {
		logs = append(logs, r.P.Log)
	}
	lettered, err := DeadLetteredAt(logs)
	if err != nil {
		t.Fatal(err)
	}
	found, lost, pv := poison.Check(rep.DeadLetters, stats.NATSKilled, lettered)
	t.Logf("poison: %d messages sent, %d dead letters of them, %d dead letters in all; %d without their dead letters, published or dead-lettered within %v before the NATS kill (lost with the server)",
		poison.Sent(), found, len(rep.DeadLetters), lost, NATSLossWindow)
	rep.Violations = append(rep.Violations, pv...)
	t.Log(rep)
	for _, l := range stats.CrashLogs {
		t.Logf("crash: %s", l)
	}
	if !rep.OK() {
		dumpLogs()
		t.Errorf("%d guarantees broken", len(rep.Violations))
	}
	if err := <-lifeErr; err != nil {
		t.Errorf("lifecycle under chaos: %v", err)
	}
	if rep.Relaxed == 0 {
		t.Errorf("no candidate was relaxed: the relax role was not exercised")
	}
	if n := stats.TotalKills() + stats.TotalTerms(); n < pr.minKills {
		t.Errorf("only %d stops (%d SIGKILLs, %d SIGTERMs), want at least %d: the campaign ran faster than the controller (raise the oracle delay)",
			n, stats.TotalKills(), stats.TotalTerms(), pr.minKills)
	}
	if stats.TotalTerms() == 0 {
		t.Errorf("no graceful stop")
	}
	if poison.Sent() == 0 {
		t.Errorf("no poison was sent")
	}
	for kind := range counts {
		if stats.Kills[kind] == 0 {
			t.Errorf("no %s was killed", kind)
		}
	}
	if stats.NATSRestarts != 1 || stats.RedisRestarts != 1 {
		t.Errorf("NATS restarted %d times and Redis %d times, want once each", stats.NATSRestarts, stats.RedisRestarts)
	}
	if !redis.Embedded() && stats.RedisRollbacks != 1 {
		t.Errorf("Redis went back to an earlier state %d times, want once", stats.RedisRollbacks)
	}
	if n := len(stats.CrashLogs); n > 0 {
		t.Errorf("%d service processes exited on their own", n)
	}
}

// waitIdle waits up to a minute for every consumer to be idle.
func waitIdle(ctx context.Context, cl *client.Client) bool {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		idle := true
		for _, c := range messages.Consumers {
			if ok, err := cl.ConsumerIdle(ctx, c.Name); err != nil || !ok {
				idle = false
			}
		}
		if idle {
			return true
		}
		time.Sleep(250 * time.Millisecond)
	}
	return false
}

// campaignSettled reports whether the campaign completed and every
// consumer caught up.
func campaignSettled(ctx context.Context, cl *client.Client, campaign string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	s, err := cl.Store.State(ctx, campaign)
	if err != nil || s.Status != messages.StateCompleted {
		return false
	}
	for _, c := range messages.Consumers {
		idle, err := cl.ConsumerIdle(ctx, c.Name)
		if err != nil || !idle {
			return false
		}
	}
	return true
}
