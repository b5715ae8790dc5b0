package local_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
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
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
)

var (
	relaxOnce   sync.Once
	relaxOracle evaluator.RelaxOracle
	relaxErr    error
)

// startRelax starts a stack whose evaluators have the relax tier.
func startRelax(t *testing.T, opts local.Options) *local.Stack {
	t.Helper()
	_, db := deps(t)
	relaxOnce.Do(func() { _, relaxOracle, relaxErr = wire.RelaxingOracle(testbed.DataDir(t), 0) })
	if relaxErr != nil {
		t.Fatal(relaxErr)
	}
	opts.Oracle = relaxOracle
	opts.Namespace = testsrv.Namespace()
	opts.Proposer = func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := local.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		st.Close()
		if opts.NATSURL != "" {
			cleanup(t, opts)
		}
	})
	return st
}

// checkRelaxed asserts what the relax oracle adds to the pipeline's
// guarantees: a candidate is relaxed exactly when it passes the screen,
// its evaluation then carries the relaxed numbers with the screened ones
// and the relaxation, and a discovery exports the relaxed structure.
func checkRelaxed(t *testing.T, spec *messages.CampaignSpec, res *local.Result, out string) {
	t.Helper()
	relaxed := 0
	for _, ev := range res.Evaluations {
		switch ev.Tier {
		case messages.TierRelax:
			relaxed++
			rx, sc := ev.Relaxation, ev.Screened
			if rx == nil || sc == nil || sc.EAboveHull == nil || *sc.EAboveHull > spec.Screen.MaxEAboveHull {
				t.Errorf("%s relaxed: relaxation %v, screened %+v", ev.ID, rx, sc)
				continue
			}
			if rx.Steps < 0 || rx.Steps > 500 || (rx.Converged && rx.FMax >= 0.05) || rx.Energy > rx.InitialEnergy+1e-9 {
				t.Errorf("%s: relaxation %+v", ev.ID, rx)
			}
			fe, ok := ev.Properties["formation_energy_per_atom"]
			if !ok || (!ev.Known && (fe.Source != "m3gnet" || math.Abs(fe.Value-rx.FormationEnergy) > 1e-9)) {
				t.Errorf("%s: formation energy %+v, relaxation's %v", ev.ID, fe, rx.FormationEnergy)
			}
			// A hull outlier (further below the hull than the calibrated 95 %
			// error, else the default bound: a likely model error) is not
			// stable.
			bound, _ := judge.OutlierBound(ev.EAboveHullCalibrated, judge.DefaultSuspiciousBelowHull)
			if ev.EAboveHull != nil && ev.HullOutlierBound != bound {
				t.Errorf("%s: hull-outlier bound %v, want %v", ev.ID, ev.HullOutlierBound, bound)
			}
			outlier := ev.Valid && ev.EAboveHull != nil && *ev.EAboveHull < -bound
			if ev.HullOutlier != outlier || ev.Stable != (ev.Valid && ev.EAboveHull != nil && *ev.EAboveHull <= spec.StabilityThreshold && !outlier) {
				t.Errorf("%s: stable %v, hull outlier %v with the relaxed E_hull %v", ev.ID, ev.Stable, ev.HullOutlier, ev.EAboveHull)
			}
		case messages.TierScreen:
			if ev.Relaxation != nil || ev.Screened != nil {
				t.Errorf("%s: a screened evaluation with a relaxation", ev.ID)
			}
			relaxFailed := false
			for _, w := range ev.Warnings {
				relaxFailed = relaxFailed || w.Code == evaluator.ReasonRelax
			}
			if !relaxFailed && evaluator.PassesScreen(spec, ev) {
				t.Errorf("%s passes the screen but was not relaxed", ev.ID)
			}
		default:
			t.Errorf("%s: tier %q", ev.ID, ev.Tier)
		}
	}
	var steps, converged int
	var secs float64
	for _, ev := range res.Evaluations {
		if rx := ev.Relaxation; rx != nil {
			steps += rx.Steps
			secs += rx.Seconds
			if rx.Converged {
				converged++
			}
		}
	}
	t.Logf("%d of %d candidates relaxed (%d converged), %.0f FIRE steps and %.2f s each on average",
		relaxed, len(res.Evaluations), converged, float64(steps)/float64(max(relaxed, 1)), secs/float64(max(relaxed, 1)))
	if relaxed == 0 {
		t.Fatalf("no candidate of %d relaxed", len(res.Evaluations))
	}
	for _, s := range res.Seeds {
		if s.Tier != messages.TierScreen {
			t.Errorf("seed %s evaluated by tier %q: seeds are not relaxed", s.ID, s.Tier)
		}
	}
	if out == "" {
		return
	}
	for _, d := range res.Discoveries {
		ev := &d.Evaluation
		if ev.Relaxation == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(out, "discoveries", d.ID+".cif"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := crystal.ParseCIF(data)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ev.Relaxation.Structure.Crystal()
		if math.Abs(got.Volume()-want.Volume()) > 1e-3*want.Volume() {
			t.Errorf("discovery %s exported with volume %.3f Å³, relaxed %.3f", d.ID, got.Volume(), want.Volume())
		}
	}
}

// A campaign with the relax oracle keeps the pipeline's guarantees: the
// budget counts each candidate once, whether the screen or the relax
// tier publishes its evaluation.
func TestRelaxCampaign(t *testing.T) {
	for name, opts := range servers(t) {
		t.Run(name, func(t *testing.T) {
			st := startRelax(t, opts)
			// One island: over the few generations of so small a budget the
			// Boltzmann choice of islands may leave one empty, and the
			// island guarantees are the end-to-end tests' (e2e_test.go).
			spec := &messages.CampaignSpec{ID: "relax-" + name, Task: easyTask(), Budget: 24, Islands: 1, Seed: 5, Oracle: messages.OracleRelax}
			out := t.TempDir()
			res, err := local.Run(context.Background(), st, spec, local.RunOptions{Out: out, Timeout: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			checkCampaign(t, st, spec, res)
			checkRelaxed(t, spec, res, out)
		})
	}
}

// TestRelaxCrashRecovery kills the relax worker while it relaxes (its
// handlers are cancelled at once, the job unacknowledged) and restarts
// it, twice: the redelivered jobs are relaxed again, and every candidate
// is still evaluated and counted exactly once.
func TestRelaxCrashRecovery(t *testing.T) {
	for name, opts := range servers(t) {
		t.Run(name, func(t *testing.T) {
			opts.Evaluator.DrainTimeout = time.Millisecond // stopping is a kill
			opts.Evaluator.Role = evaluator.RoleScreen
			opts.Evaluator.RelaxWorkers = 1
			st := startRelax(t, opts)
			st.StartService("evaluator-relax")
			spec := &messages.CampaignSpec{ID: "relaxcrash-" + name, Task: easyTask(), Budget: 20, Islands: 1, Seed: 9, Oracle: messages.OracleRelax}
			done := make(chan struct{})
			var res *local.Result
			var runErr error
			go func() {
				defer close(done)
				res, runErr = local.Run(context.Background(), st, spec, local.RunOptions{Timeout: 5 * time.Minute})
			}()
			for kill := 0; kill < 2; kill++ {
				waitRelaxing(t, st)
				for _, svc := range st.Services() {
					if strings.HasPrefix(svc, "evaluator-relax") {
						if err := st.StopService(svc); err != nil {
							t.Logf("%s stopped: %v", svc, err)
						}
					}
				}
				st.StartService("evaluator-relax")
			}
			<-done
			if runErr != nil {
				t.Fatal(runErr)
			}
			checkCampaign(t, st, spec, res)
			checkRelaxed(t, spec, res, "")
		})
	}
}

// waitRelaxing waits until a relax job has been delivered and not yet
// acknowledged: a relaxation under way.
func waitRelaxing(t *testing.T, st *local.Stack) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		c, err := st.Bus.JS.Consumer(ctx, st.Bus.Stream(messages.StreamRelax), messages.ConsumerRelax)
		if err == nil {
			if info, err := c.Info(ctx); err == nil && info.NumAckPending > 0 {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no relaxation under way within 3 minutes")
}
