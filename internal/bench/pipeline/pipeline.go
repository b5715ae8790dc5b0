// Package pipeline measures the whole pipeline against the oracle alone,
// in one run on one machine: (a) the oracle on a campaign's candidates,
// (b) the campaign through all four services in local mode, and (c) the
// scaling of evaluator replicas under an artificial oracle cost.
// Description says how; `crucible bench pipeline` is its command line.
package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/wire"
)

// Description is what the benchmark measures and how (the command's help).
const Description = `pipeline measures, in one run on this machine:

 (a) the oracle alone (validity, reference lookup, CGCNN, hull) on the
     candidates of a campaign, as the evaluator gave them to it: in
     oracle calls of --batch (the most the evaluator puts in one), each
     candidate with the campaign's finds evaluated before it was
     proposed as extra hull phases, and from the same start (no hull
     diagram built yet, as each campaign (b) starts): structures/s,
     timed right after each campaign (b) on its candidates, and brought
     to the machine's speed before it by timing the previous campaign's
     candidates both before and after it (two campaigns of one spec
     propose different structures), the two averaged;
 (b) a campaign through all four services in local mode (embedded NATS and
     Redis) with one evaluator: evaluations/s, and its ratio to (a);
 (c) the same with an artificial cost added to the oracle's per candidate
     (--delay, standing for a DFT-class oracle), with 1, 2, 4, 8 evaluator
     replicas: evaluations/s, the speed-up over one replica, and the cores
     busy (the real oracle still runs under the delay).

For (b) it also reports the CPU the process used per evaluation, split
into the oracle's share (as measured in (a)) and the rest (proposer,
reflector, judge, embedded brokers, the collecting client, and what more
the oracle costs while they share the machine), the heap it
allocated per evaluation (steadier than CPU time where the machine's
speed drifts), and how many cores were busy: when all are, the pipeline
is CPU-bound and (b) over (a) is bounded by the oracle's share.
--workers 1 leaves the other cores to the services. It splits the ratio
into the share of the time the evaluator's oracle was working and its
speed while it did, against (a): a busy oracle running slower is one
sharing its core. With --nats and --redis the campaigns run on real
servers (their CPU is then not the process's).

On a virtual machine the report gives, for (a), (b) and each (c), the
share of the machine's CPU time the hypervisor took (steal: its virtual
CPUs ready to run while the host ran something else), and warns when any
is above 5 %: rates then move with the host's load, not the program's.

Rates are taken between the first and the last evaluation of the
campaign's proposed candidates, so start-up and seeds do not count. After
a warm-up campaign like (b) (same budget and seed: its candidates carry
the machine's speed across the first round), (a) and (b) run --rounds
times (default 5); the report gives every round and the one with the
median ratio. As in "crucible local", the collector runs at GOGC=400
unless GOGC is set.`

// Options configure a run. Zero values are not defaulted: the command
// line gives every one.
type Options struct {
	// DataDir holds the reference tables and CGCNN checkpoints.
	DataDir string
	// Budget is the evaluations of each campaign (b); Batch the
	// evaluator's batch in (a) and (b); InFlight the campaign's
	// max_in_flight in (b).
	Budget, Batch, InFlight int
	// Workers is the evaluator's oracle workers in (a) and (b) (0 = one
	// per CPU).
	Workers int
	// ProposerConcurrency is the generation requests the proposer
	// handles at once.
	ProposerConcurrency int
	// Rounds of (b) then (a).
	Rounds int
	// Delay is the artificial oracle cost per candidate of (c), and
	// Replicas its evaluator replica counts.
	Delay    time.Duration
	Replicas []int
	// NATSURL and RedisURL run the campaigns on these servers instead of
	// embedded ones.
	NATSURL, RedisURL string
	// CPUProfile and MemProfile, when set, receive a CPU profile of the
	// first campaign (b) and the allocations up to its end (up to its
	// start into MemProfile + ".base").
	CPUProfile, MemProfile string
	// Progress receives a line as each campaign starts (nil: none).
	Progress io.Writer
}

// Report is what a run measured.
type Report struct {
	GOMAXPROCS int `json:"gomaxprocs"`
	// Workers is the evaluator's oracle workers in (a) and (b) (0 = one
	// per CPU).
	Workers int `json:"oracle_workers"`
	// The round with the median (b)/(a) ratio.
	Round
	// Rounds are every round of (b) followed by (a), in order.
	Rounds []Round `json:"rounds"`
	// Scaling is (c): evaluations/s with an artificial oracle delay per
	// candidate, by evaluator replicas, and the speed-up over one.
	Delay   string         `json:"delay"`
	Scaling []ScalingPoint `json:"scaling"`
}

// Round is one campaign (b) and the oracle alone (a) on its candidates,
// measured right after it.
type Round struct {
	// OracleRate is (a): the oracle alone on the campaign's candidates, in
	// the evaluator's batches, structures/s.
	OracleRate float64 `json:"oracle_structures_per_second"`
	// PipelineRate is (b): evaluations/s of a campaign through all four
	// services with one evaluator, and its ratio to (a).
	PipelineRate  float64 `json:"pipeline_evaluations_per_second"`
	PipelineRatio float64 `json:"pipeline_over_oracle"`
	// CPU accounting of (b): CPU seconds of the whole process (services,
	// embedded brokers, client) per evaluation, the oracle's share of it
	// as measured in (a), and the cores kept busy during the campaign.
	CPUPerEvaluation       float64 `json:"cpu_ms_per_evaluation"`
	OracleCPUPerEvaluation float64 `json:"oracle_cpu_ms_per_evaluation"`
	CoresBusy              float64 `json:"cores_busy"`
	// AllocPerEvaluation is the heap the whole process allocated per
	// evaluation of (b), in KiB: the memory the services stream through
	// the caches the oracle shares, and steadier from run to run than CPU
	// time on a machine whose speed drifts.
	AllocPerEvaluation float64 `json:"alloc_kib_per_evaluation"`
	// Where (b) loses against (a): the share of the span the evaluator's
	// oracle was working, and its speed while it did (structures/s, from
	// the evaluations' oracle seconds) against (a). Their product is about
	// the ratio.
	OracleBusy  float64 `json:"oracle_busy"`
	OracleSpeed float64 `json:"oracle_speed_in_pipeline_over_alone"`
	// Steal is the share of the machine's CPU time a hypervisor took
	// (its virtual CPUs ready, the host running something else) during
	// (b), and OracleSteal during (a): rates fall with it whatever the
	// program does, so a ratio is only as good as the two are low and
	// alike. Absent where the kernel does not report steal.
	Steal       *float64 `json:"steal_share_b,omitempty"`
	OracleSteal *float64 `json:"steal_share_a,omitempty"`
}

// ScalingPoint is (c) with one number of evaluator replicas.
type ScalingPoint struct {
	Evaluators int     `json:"evaluators"`
	Rate       float64 `json:"evaluations_per_second"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// CoresBusy is the process's CPU over the campaign's span: near the
	// machine's cores, the services (not the oracle, which sleeps) bound
	// the speed-up.
	CoresBusy float64 `json:"cores_busy"`
	// Steal is the share of the machine's CPU time a hypervisor took
	// over the span (see Round.Steal).
	Steal *float64 `json:"steal_share,omitempty"`
}

// Run runs the benchmark: a warm-up campaign, Rounds rounds of (a) and
// (b), then (c) for each replica count.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Rounds < 1 {
		return nil, fmt.Errorf("bench pipeline: %d rounds, want at least 1", o.Rounds)
	}
	if len(o.Replicas) == 0 {
		return nil, fmt.Errorf("bench pipeline: no replica counts for (c)")
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	orc, _, err := wire.Oracle(o.DataDir, o.Workers)
	if err != nil {
		return nil, err
	}
	db, err := wire.Reference(o.DataDir)
	if err != nil {
		return nil, err
	}
	s := &setup{servers: local.Options{NATSURL: o.NATSURL, RedisURL: o.RedisURL}, oracle: orc, db: db, proposerConcurrency: o.ProposerConcurrency}
	rep := &Report{GOMAXPROCS: runtime.GOMAXPROCS(0), Delay: o.Delay.String(), Workers: o.Workers}

	// A warm-up campaign like (b) fills the caches and gives the
	// candidates that carry the machine's speed across the first round
	// (bracket).
	fmt.Fprintf(progress, "warm-up campaign, budget %d …\n", o.Budget)
	warm, _, err := s.campaign(ctx, o.Budget, 1, o.Batch, 0, o.InFlight)
	if err != nil {
		return nil, err
	}
	prev := warm
	for r := range o.Rounds {
		cpuPath, memPath := o.CPUProfile, o.MemProfile
		if r > 0 {
			cpuPath, memPath = "", ""
		}
		fmt.Fprintf(progress, "round %d of %d: (a), (b) with budget %d, (a) …\n", r+1, o.Rounds, o.Budget)
		round, c, err := s.round(ctx, prev, o.Budget, o.Batch, o.InFlight, cpuPath, memPath)
		if err != nil {
			return nil, err
		}
		rep.Rounds = append(rep.Rounds, round)
		prev = c
	}
	rep.Round = medianRound(rep.Rounds)
	for _, n := range o.Replicas {
		b := max(200, 100*n)
		fmt.Fprintf(progress, "(c) %d evaluator(s), %s per candidate, budget %d …\n", n, o.Delay, b)
		_, span, err := s.campaign(ctx, b, n, 4, o.Delay, 16*n)
		if err != nil {
			return nil, err
		}
		rep.Scaling = append(rep.Scaling, ScalingPoint{Evaluators: n, Rate: span.rate(), CoresBusy: span.coresBusy(), Steal: span.steal})
	}
	for i := range rep.Scaling {
		rep.Scaling[i].Speedup = rep.Scaling[i].Rate / rep.Scaling[0].Rate * float64(rep.Scaling[0].Evaluators)
		rep.Scaling[i].Efficiency = rep.Scaling[i].Speedup / float64(rep.Scaling[i].Evaluators)
	}
	return rep, nil
}

// medianRound returns the round with the median ratio (of an even number,
// the lower middle one).
func medianRound(rs []Round) Round {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b Round) int { return cmp.Compare(a.PipelineRatio, b.PipelineRatio) })
	return sorted[(len(sorted)-1)/2]
}

// ParseCounts reads a comma-separated list of positive integers (the
// replica counts of --replicas).
func ParseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
