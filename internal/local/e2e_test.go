package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

// The oracle and reference tables are loaded once for all tests.
var (
	loadOnce sync.Once
	oracle   evaluator.Oracle
	refDB    *reference.DB
	loadErr  error
)

func deps(t *testing.T) (evaluator.Oracle, *reference.DB) {
	t.Helper()
	dir := testbed.DataDir(t)
	loadOnce.Do(func() {
		if _, oracle, loadErr = wire.Oracle(dir, 0); loadErr != nil {
			return
		}
		refDB, loadErr = wire.Reference(dir)
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return oracle, refDB
}

// easyTask is a task many candidates meet, so a short campaign reliably
// makes discoveries.
func easyTask() task.Task {
	return task.Task{
		Name: "Insulating stable compounds (test)", Goal: "Band gap ≥ 1 eV, formation energy ≤ -0.5 eV/atom",
		Constraints: []task.Constraint{task.AtLeast("band_gap", 1), task.AtMost("formation_energy_per_atom", -0.5)},
	}
}

// servers are the infrastructures a pipeline test runs on: embedded
// always, and the real servers when CRUCIBLE_TEST_* name them.
func servers(t *testing.T) map[string]local.Options {
	out := map[string]local.Options{"embedded": {}}
	if n, r := testbed.NATSURL(), testbed.RedisURL(); n != "" && r != "" {
		out["real"] = local.Options{NATSURL: n, RedisURL: r, MemoryStreams: true}
	}
	return out
}

func start(t *testing.T, opts local.Options) *local.Stack {
	return startWith(t, opts, wire.ProposerOptions{})
}

// startWith starts a stack whose proposers are wired with po (and whose
// evaluators use the reference oracle unless opts names one).
func startWith(t *testing.T, opts local.Options, po wire.ProposerOptions) *local.Stack {
	t.Helper()
	o, db := deps(t)
	if opts.Oracle == nil {
		opts.Oracle = o
	}
	opts.Namespace = testsrv.Namespace()
	opts.Proposer = func(s *store.Store) proposer.Config { return wire.Proposer(db, s, po) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := local.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		if opts.NATSURL != "" { // leave nothing behind on shared servers
			cleanup(t, opts)
		}
	})
	return st
}

// cleanup removes a test's streams and keys from the real servers.
func cleanup(t *testing.T, opts local.Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := local.Start(ctx, local.Options{NATSURL: opts.NATSURL, RedisURL: opts.RedisURL, Namespace: opts.Namespace, NoServices: true, MemoryStreams: true})
	if err != nil {
		t.Errorf("cleanup: %v", err)
		return
	}
	defer c.Close()
	if err := c.Purge(ctx); err != nil {
		t.Errorf("cleanup: %v", err)
	}
}

func TestCampaignEndToEnd(t *testing.T) {
	for name, opts := range servers(t) {
		t.Run(name, func(t *testing.T) {
			st := start(t, opts)
			spec := &messages.CampaignSpec{ID: "e2e-" + name, Task: easyTask(), Budget: 40, Seed: 7, Episodes: 2}
			res, err := local.Run(context.Background(), st, spec, local.RunOptions{Out: t.TempDir(), Timeout: 4 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			checkCampaign(t, st, spec, res)
			if len(res.Discoveries) == 0 {
				t.Errorf("no discovery in %d evaluations with %d hits", len(res.Evaluations), res.Summary.Hits)
			}
			if len(res.Reflections) != 2 {
				t.Errorf("%d reflections, want one per episode (2)", len(res.Reflections))
			}
		})
	}
}

// TestRandomBaseline: a campaign proposed by the random-substitution
// baseline keeps the pipeline's guarantees, every candidate is a random
// substitution, and the summary (and summary.json) names the baseline,
// not the spec's evolve.
func TestRandomBaseline(t *testing.T) {
	st := startWith(t, local.Options{}, wire.ProposerOptions{Baseline: true})
	spec := &messages.CampaignSpec{ID: "baseline", Task: easyTask(), Budget: 20, Seed: 3}
	out := t.TempDir()
	const label = "random-substitution baseline"
	res, err := local.Run(context.Background(), st, spec, local.RunOptions{Out: out, Timeout: 4 * time.Minute, Generator: label})
	if err != nil {
		t.Fatal(err)
	}
	// The budget is met, each candidate evaluated once, and every one a
	// random substitution. (Too few generations to ask, as checkCampaign
	// does, that every island had one.)
	if res.Summary.State != messages.StateCompleted || len(res.Evaluations) != spec.Budget || res.Summary.Evaluated != spec.Budget {
		t.Fatalf("state %s, %d evaluations in the stream, %d counted, budget %d",
			res.Summary.State, len(res.Evaluations), res.Summary.Evaluated, spec.Budget)
	}
	ids := map[string]bool{}
	for _, ev := range res.Evaluations {
		if ids[ev.ID] {
			t.Fatalf("candidate %s evaluated twice", ev.ID)
		}
		ids[ev.ID] = true
		if op := ev.Candidate.Operator; op != evolve.OpRandomSubstitution {
			t.Fatalf("candidate %s made by %q", ev.ID, op)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum messages.Summary
	if err := json.Unmarshal(data, &sum); err != nil || sum.Generator != label || res.Summary.Generator != label {
		t.Fatalf("summary.json generator %q (%v), result %q, want %q", sum.Generator, err, res.Summary.Generator, label)
	}
}

// checkCampaign asserts the pipeline's guarantees on a finished campaign.
func checkCampaign(t *testing.T, st *local.Stack, spec *messages.CampaignSpec, res *local.Result) {
	t.Helper()
	ctx := context.Background()
	if res.Summary.State != messages.StateCompleted {
		t.Fatalf("state %s", res.Summary.State)
	}
	// The budget is met exactly, and every proposed candidate is evaluated
	// exactly once.
	if len(res.Evaluations) != spec.Budget || res.Summary.Evaluated != spec.Budget {
		t.Errorf("%d evaluations in the stream, %d counted, budget %d", len(res.Evaluations), res.Summary.Evaluated, spec.Budget)
	}
	evaluated := map[string]*messages.Evaluation{}
	for _, ev := range res.Evaluations {
		if evaluated[ev.ID] != nil {
			t.Errorf("candidate %s evaluated twice", ev.ID)
		}
		evaluated[ev.ID] = ev
	}
	proposed, err := st.Store.ProposedIDs(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for id := range evaluated {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if fmt.Sprint(ids) != fmt.Sprint(proposed) {
		t.Errorf("evaluated ids differ from proposed ids:\n evaluated %v\n proposed  %v", ids, proposed)
	}
	// Counters agree with the evaluations.
	var want messages.Counters
	for _, ev := range res.Evaluations {
		want.Evaluated++
		count := func(c *int, ok bool) {
			if ok {
				*c++
			}
		}
		count(&want.Valid, ev.Valid)
		count(&want.Hits, ev.Feasible)
		count(&want.Stable, ev.Stable)
		count(&want.StableHits, ev.Stable && ev.Feasible)
		count(&want.Known, ev.Known)
		count(&want.Novel, ev.Novel)
	}
	got := res.Summary.Counters
	if got.Evaluated != want.Evaluated || got.Valid != want.Valid || got.Hits != want.Hits || got.Stable != want.Stable ||
		got.StableHits != want.StableHits || got.Known != want.Known || got.Novel != want.Novel || got.Proposed != spec.Budget {
		t.Errorf("counters %+v, evaluations say %+v", got, want)
	}
	if got.Seeds != len(res.Seeds) {
		t.Errorf("%d seeds counted, %d evaluated", got.Seeds, len(res.Seeds))
	}
	// Island pools hold evaluated candidates of their island, successes
	// feasible and failures not, within the pool size.
	islandOf := map[string]int{}
	for _, ev := range append(append([]*messages.Evaluation{}, res.Seeds...), res.Evaluations...) {
		islandOf[ev.ID] = ev.Candidate.Island
	}
	all := append(append([]*messages.Evaluation{}, res.Seeds...), res.Evaluations...)
	byID := map[string]*messages.Evaluation{}
	for _, ev := range all {
		byID[ev.ID] = ev
	}
	for i := 0; i < spec.Islands; i++ {
		for _, kind := range []string{"success", "failure"} {
			members, err := st.Store.PoolIDs(ctx, spec.ID, i, kind)
			if err != nil {
				t.Fatal(err)
			}
			if len(members) > spec.PoolSize {
				t.Errorf("island %d %s pool holds %d > %d", i, kind, len(members), spec.PoolSize)
			}
			for _, id := range members {
				ev := byID[id]
				switch {
				case ev == nil:
					t.Errorf("island %d %s pool holds %s, never evaluated", i, kind, id)
				case ev.Candidate.Island != i:
					t.Errorf("%s of island %d in the pool of island %d", id, ev.Candidate.Island, i)
				case ev.Feasible != (kind == "success"):
					t.Errorf("%s (feasible %v) in the %s pool", id, ev.Feasible, kind)
				}
			}
		}
	}
	// Every island receives generations; offspring land on their parents'
	// island.
	islands := map[int]int{}
	withParents := 0
	for _, ev := range res.Evaluations {
		c := &ev.Candidate
		islands[c.Island]++
		if len(c.Parents) > 0 {
			withParents++
		}
		for _, p := range c.Parents {
			if pi, ok := islandOf[p]; !ok {
				t.Errorf("%s: parent %s was never evaluated", c.ID, p)
			} else if pi != c.Island {
				t.Errorf("%s on island %d, its parent %s on island %d", c.ID, c.Island, p, pi)
			}
		}
	}
	if withParents == 0 {
		t.Error("no candidate has parents: the island check saw nothing")
	}
	if len(islands) != spec.Islands {
		t.Errorf("candidates on %d of %d islands: %v", len(islands), spec.Islands, islands)
	}
	// Every discovery is an evaluated, feasible, stable candidate.
	for _, d := range res.Discoveries {
		ev := evaluated[d.ID]
		if ev == nil || !ev.Feasible || !ev.Stable || !ev.Valid {
			t.Errorf("discovery %s is not an evaluated feasible stable candidate", d.ID)
		}
	}
	// The final status is sent before the judge is done; Run takes the
	// judge's counts from the streams, and the store agrees once it has
	// caught up.
	if got.Discoveries != len(res.Discoveries) || got.JudgeRejected != len(res.Verdicts) {
		t.Errorf("summary counts %d discoveries and %d rejections by the judge, the streams hold %d and %d",
			got.Discoveries, got.JudgeRejected, len(res.Discoveries), len(res.Verdicts))
	}
	if stt, err := st.Store.State(ctx, spec.ID); err != nil || stt.Counters.Discoveries != len(res.Discoveries) || stt.Counters.JudgeRejected != len(res.Verdicts) {
		t.Errorf("store counts %+v (%v), the streams hold %d discoveries and %d rejections", stt.Counters, err, len(res.Discoveries), len(res.Verdicts))
	}
	checkMetrics(t, spec, res)
}

// checkMetrics asserts that the summary's LLEMA and MADE metrics follow
// from its counters and the evaluations.
func checkMetrics(t *testing.T, spec *messages.CampaignSpec, res *local.Result) {
	t.Helper()
	s := res.Summary
	if s.Generated != s.Proposed+s.Rejected || s.Generated < s.Evaluated {
		t.Errorf("generated %d, proposed %d, rejected %d, evaluated %d", s.Generated, s.Proposed, s.Rejected, s.Evaluated)
	}
	if s.RejectedKnown > s.Rejected {
		t.Errorf("%d known of %d rejected proposals", s.RejectedKnown, s.Rejected)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if !near(s.HitRateGenerated, float64(s.Hits)/float64(s.Generated)) || !near(s.HitRate, float64(s.Hits)/float64(s.Evaluated)) ||
		!near(s.MemorizationRateGenerated, float64(s.Known+s.RejectedKnown)/float64(s.Generated)) {
		t.Errorf("rates %+v", s)
	}
	nStable := 0
	novel := map[string]bool{}
	groups, stableGroups := map[int]int{}, map[int]int{}
	for _, ev := range res.Evaluations {
		if ev.Valid && ev.SpaceGroup == nil {
			t.Errorf("%s: valid, without a space group", ev.ID)
		}
		if ev.Valid && ev.SpaceGroup != nil {
			groups[ev.SpaceGroup.Number]++
			if ev.Novel && ev.Stable {
				stableGroups[ev.SpaceGroup.Number]++
			}
		}
		if ev.Novel && ev.Stable {
			nStable++
		}
		if ev.Novel && ev.Feasible {
			novel[ev.ID] = true
		}
	}
	if s.NStable != nStable || s.AUDC < 0 || s.AUDC > 1 || !near(s.SDE, float64(nStable)/float64(spec.Budget)) {
		t.Errorf("N_stable %d (evaluations: %d), AUDC %v, SDE %v", s.NStable, nStable, s.AUDC, s.SDE)
	}
	total := 0
	for _, y := range s.Episodes {
		total += y.NStable
	}
	if len(s.Episodes) != spec.Episodes || total != s.NStable || (spec.Episodes > 1) != (s.LearningSlope != nil) {
		t.Errorf("episodes %+v (slope %v), N_stable %d", s.Episodes, s.LearningSlope, s.NStable)
	}
	if s.SpaceGroups != len(groups) || !near(s.SpaceGroupEntropy, spacegroup.EntropyOfCounts(groups)) ||
		!near(s.SpaceGroupEntropyStable, spacegroup.EntropyOfCounts(stableGroups)) {
		t.Errorf("space groups %d, entropy %v (N_stable's %v); the evaluations' %v, N_stable's %v", s.SpaceGroups, s.SpaceGroupEntropy,
			s.SpaceGroupEntropyStable, groups, stableGroups)
	}
	if len(s.ParetoObjectives) != len(spec.Task.Constraints) {
		t.Errorf("objectives %+v", s.ParetoObjectives)
	}
	seen := map[string]bool{}
	for _, p := range s.ParetoFront {
		if !novel[p.ID] || seen[p.ID] || len(p.Values) != len(spec.Task.Constraints) {
			t.Errorf("Pareto point %+v: not a novel hit with its values, or listed twice", p)
		}
		seen[p.ID] = true
	}
	if len(novel) > 0 && len(s.ParetoFront) == 0 {
		t.Errorf("%d novel hits, an empty front", len(novel))
	}
}

// TestCrashRecovery kills an evaluator and the reflector mid-campaign
// (their handlers are cancelled at once, leaving work unacknowledged),
// restarts them, and checks that nothing was lost or counted twice.
func TestCrashRecovery(t *testing.T) {
	for name, opts := range servers(t) {
		t.Run(name, func(t *testing.T) {
			// A drain timeout of a millisecond makes stopping a replica a
			// kill: in-flight handlers are cancelled, not finished.
			opts.Evaluator.DrainTimeout = time.Millisecond
			opts.Reflector.DrainTimeout = time.Millisecond
			opts.Evaluators = 2
			st := start(t, opts)
			spec := &messages.CampaignSpec{ID: "crash-" + name, Task: easyTask(), Budget: 60, Seed: 11}
			done := make(chan struct{})
			var res *local.Result
			var runErr error
			go func() {
				defer close(done)
				res, runErr = local.Run(context.Background(), st, spec, local.RunOptions{Timeout: 5 * time.Minute})
			}()
			kill := func(kind string, atLeast int) {
				waitEvaluated(t, st, spec.ID, atLeast)
				for _, name := range st.Services() {
					if len(name) > len(kind) && name[:len(kind)] == kind {
						if err := st.StopService(name); err != nil {
							t.Logf("%s stopped: %v", name, err)
						}
						st.StartService(kind)
						return
					}
				}
				t.Fatalf("no %s running", kind)
			}
			kill("evaluator", 10)
			kill("reflector", 20)
			kill("evaluator", 30)
			kill("reflector", 40)
			<-done
			if runErr != nil {
				t.Fatal(runErr)
			}
			checkCampaign(t, st, spec, res)
		})
	}
}

func waitEvaluated(t *testing.T, st *local.Stack, campaign string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if s, err := st.Store.State(context.Background(), campaign); err == nil && s.Counters.Evaluated >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("campaign %s did not reach %d evaluations", campaign, n)
}
