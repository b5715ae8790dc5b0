package pipeline

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestCPUSamplesBetween(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := cpuSamples{
		at:    []time.Time{t0, t0.Add(time.Second), t0.Add(3 * time.Second)},
		cpu:   []float64{10, 12, 13},
		alloc: []float64{100, 120, 130},
	}
	for _, c := range []struct {
		a, b time.Duration
		want float64
	}{
		{0, time.Second, 2},
		{500 * time.Millisecond, 2 * time.Second, 1.5}, // 11 → 12.5
		{-time.Second, 10 * time.Second, 3},            // clamped to the samples
		{2 * time.Second, 2 * time.Second, 0},
	} {
		if got := s.between(t0.Add(c.a), t0.Add(c.b)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("between(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := s.allocatedBetween(t0.Add(c.a), t0.Add(c.b)); math.Abs(got-10*c.want) > 1e-9 {
			t.Errorf("allocatedBetween(%v, %v) = %v, want %v", c.a, c.b, got, 10*c.want)
		}
	}
	if got := (cpuSamples{}).between(t0, t0.Add(time.Second)); got != 0 {
		t.Errorf("no samples: %v, want 0", got)
	}
	if got := s.stealShare(t0, t0.Add(time.Second)); got != nil {
		t.Errorf("steal share %v where steal was not sampled, want none", *got)
	}
	s.stealAt, s.steal, s.cpus = s.at, []float64{5, 5.5, 5.5}, 2
	for _, c := range []struct {
		a, b time.Duration
		want float64
	}{
		{0, time.Second, 0.25},                      // 0.5 s of 2 CPUs × 1 s
		{time.Second, 3 * time.Second, 0},           // nothing taken
		{0, 3 * time.Second, 0.5 / 6},               // over the whole span
		{500 * time.Millisecond, time.Second, 0.25}, // 5.25 → 5.5
	} {
		got := s.stealShare(t0.Add(c.a), t0.Add(c.b))
		if got == nil || math.Abs(*got-c.want) > 1e-12 {
			t.Errorf("stealShare(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestPipelineReportWarnsOfSteal: the report shows each measurement's
// stolen CPU time, and warns when any is high enough to move the rates.
func TestPipelineReportWarnsOfSteal(t *testing.T) {
	round := Round{OracleRate: 300, PipelineRate: 270, PipelineRatio: 0.9, OracleSteal: new(0.01), Steal: new(0.02)}
	r := Report{GOMAXPROCS: 2, Workers: 1, Round: round, Rounds: []Round{round, round}, Delay: "20ms",
		Scaling: []ScalingPoint{{Evaluators: 1, Rate: 48, Speedup: 1, Efficiency: 1, CoresBusy: 0.3, Steal: new(0.03)}}}
	var quiet strings.Builder
	r.Write(&quiet)
	for _, want := range []string{"steal (a) 1% (b) 2%", "took 1% of the machine's CPU time during (a), 2% during (b)", "0.30      3%"} {
		if !strings.Contains(quiet.String(), want) {
			t.Errorf("report without %q:\n%s", want, quiet.String())
		}
	}
	if strings.Contains(quiet.String(), "warning") {
		t.Errorf("a warning at 3%% steal at most:\n%s", quiet.String())
	}
	r.Scaling[0].Steal = new(0.3)
	var loud strings.Builder
	r.Write(&loud)
	if !strings.Contains(loud.String(), "warning: the hypervisor took up to 30%") {
		t.Errorf("no warning at 30%% steal:\n%s", loud.String())
	}
	r.Rounds[1].Steal, r.Scaling[0].Steal = new(0.2), nil
	if r.worstSteal() != 0.2 {
		t.Errorf("worst steal %v, want the second round's 0.2", r.worstSteal())
	}
}

func TestEvaluationSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []*messages.Evaluation{{EvaluatedAt: t0.Add(2 * time.Second)}, {EvaluatedAt: t0}, {EvaluatedAt: t0.Add(5 * time.Second)}, {EvaluatedAt: t0.Add(time.Second)}}
	first, last := evaluationSpan(evs)
	if !first.Equal(t0) || !last.Equal(t0.Add(5*time.Second)) {
		t.Errorf("span %v – %v, want %v – %v", first, last, t0, t0.Add(5*time.Second))
	}
}

func TestSampleCPUCountsWork(t *testing.T) {
	if _, ok := cputime.Process(); !ok {
		t.Skip("no process CPU time on this platform")
	}
	stop := sampleCPU(time.Millisecond)
	x := 0.0
	for i := 0; i < 20_000_000; i++ {
		x += math.Sqrt(float64(i))
	}
	const chunks, size = 256, 64 << 10
	for range chunks {
		bytesSink = make([]byte, size)
	}
	s := stop()
	if len(s.at) < 2 {
		t.Fatalf("%d samples", len(s.at))
	}
	sink = x
	if used := s.between(s.at[0], s.at[len(s.at)-1]); used <= 0 {
		t.Errorf("CPU used while summing: %v s", used)
	}
	if a := s.allocatedBetween(s.at[0], s.at[len(s.at)-1]); a < chunks*size {
		t.Errorf("%v bytes allocated, want at least the %d made", a, chunks*size)
	}
	if _, _, ok := cputime.Steal(); ok {
		// Stolen time is read at the first sample, every stealEvery-th
		// and the last, so a span ending at the last sample is covered.
		if want := (len(s.at)-2)/stealEvery + 2; len(s.stealAt) != want || !s.stealAt[len(s.stealAt)-1].Equal(s.at[len(s.at)-1]) {
			t.Errorf("%d samples of stolen time for %d of CPU time, want %d ending with the last", len(s.stealAt), len(s.at), want)
		}
		if share := s.stealShare(s.at[0], s.at[len(s.at)-1]); share == nil || *share < 0 || *share > 1 {
			t.Errorf("stolen share %v, want one in [0, 1]", share)
		}
	}
}

// sink and bytesSink keep the work of TestSampleCPUCountsWork from being
// optimised away.
var (
	sink      float64
	bytesSink []byte
)

func TestMedianRound(t *testing.T) {
	rs := []Round{{PipelineRatio: 0.9, OracleRate: 1}, {PipelineRatio: 0.7, OracleRate: 2}, {PipelineRatio: 0.8, OracleRate: 3}}
	if got := medianRound(rs); got.OracleRate != 3 {
		t.Errorf("median of 0.9, 0.7, 0.8 is the round with ratio %v", got.PipelineRatio)
	}
	if got := medianRound(rs[:2]); got.PipelineRatio != 0.7 {
		t.Errorf("median of two: ratio %v, want the lower 0.7", got.PipelineRatio)
	}
	if rs[0].PipelineRatio != 0.9 {
		t.Error("medianRound reordered its argument")
	}
	if got := medianRound(rs[:1]); got.OracleRate != 1 {
		t.Errorf("median of one: %+v", got)
	}
}

// (a) is the rate on the campaign's own candidates, carried back to the
// machine's speed before the campaign by the previous campaign's
// candidates, timed on both sides of it.
func TestBracket(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	steady := bracket(oracleTiming{rate: 100, cpuPer: 0.01}, oracleTiming{rate: 80, cpuPer: 0.0125}, oracleTiming{rate: 100, cpuPer: 0.01})
	if !near(steady.rate, 80) || !near(steady.cpuPer, 0.0125) {
		t.Errorf("steady machine: %+v, want the rate and CPU on the campaign's own candidates (80, 0.0125)", steady)
	}
	// The machine ran 20 % faster before the campaign: the own
	// candidates' rate then was 96.
	drift := bracket(oracleTiming{rate: 120, cpuPer: 0.008, steal: new(0.03)}, oracleTiming{rate: 80, cpuPer: 0.0125, steal: new(0.0)}, oracleTiming{rate: 100, cpuPer: 0.01, steal: new(0.0)})
	if !near(drift.rate, 88) || !near(drift.cpuPer, 0.01125) {
		t.Errorf("drifting machine: %+v, want rate (80+96)/2 = 88 and CPU (0.0125+0.01)/2", drift)
	}
	if drift.steal == nil || !near(*drift.steal, 0.01) {
		t.Errorf("steal %v, want the mean of the three timings, 0.01", drift.steal)
	}
	alone := bracket(oracleTiming{}, oracleTiming{rate: 80, cpuPer: 0.0125, steal: new(0.0)}, oracleTiming{})
	if alone.rate != 80 || alone.cpuPer != 0.0125 || alone.steal != nil {
		t.Errorf("without the previous campaign's timings: %+v, want the campaign's own", alone)
	}
}

// The oracle is timed on what the evaluator gave it: each candidate with
// the finds evaluated before it was proposed.
func TestOracleItemsCarryEarlierFinds(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := messages.StructureOf(crystaltest.Build(t, "rocksalt", "NaCl"))
	ev := func(id string, proposed, evaluated time.Duration) *messages.Evaluation {
		return &messages.Evaluation{ID: id, EvaluatedAt: t0.Add(evaluated),
			Candidate: messages.Candidate{ID: id, ProposedAt: t0.Add(proposed), Structure: st}}
	}
	res := &local.Result{
		Seeds:       []*messages.Evaluation{ev("seed", 0, 1*time.Second)},
		Evaluations: []*messages.Evaluation{ev("a", 0, 2*time.Second), ev("b", 2500*time.Millisecond, 3*time.Second), ev("c", 5*time.Second, 6*time.Second)},
	}
	// Recorded out of evaluation order.
	finds := []store.Find{{ID: "b", Formula: "NaCl", EnergyPerAtom: -2}, {ID: "seed", Formula: "NaCl", EnergyPerAtom: -1}}
	items := oracleItems(res, finds)
	if len(items) != 3 {
		t.Fatalf("%d items for 3 candidates", len(items))
	}
	for i, want := range [][]string{{}, {"campaign-seed"}, {"campaign-seed", "campaign-b"}} {
		var got []string
		for _, e := range items[i].Extra {
			got = append(got, e.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("candidate %d: extra phases %v, want %v", i, got, want)
		}
		if items[i].StatedFormula != "NaCl" || items[i].Structure == nil {
			t.Errorf("candidate %d: %+v", i, items[i])
		}
	}
}
