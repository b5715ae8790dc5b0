package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/cputime"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/task"
)

func init() { registerBench(newBenchPipelineCmd) }

// pipelineReport is what bench pipeline measures.
type pipelineReport struct {
	GOMAXPROCS int `json:"gomaxprocs"`
	// Workers is the evaluator's oracle workers in (a) and (b) (0 = one
	// per CPU).
	Workers int `json:"oracle_workers"`
	// The round with the median (b)/(a) ratio.
	pipelineRound
	// Rounds are every round of (b) followed by (a), in order.
	Rounds []pipelineRound `json:"rounds"`
	// Scaling is (c): evaluations/s with an artificial oracle delay per
	// candidate, by evaluator replicas, and the speed-up over one.
	Delay   string         `json:"delay"`
	Scaling []scalingPoint `json:"scaling"`
}

// pipelineRound is one campaign (b) and the oracle alone (a) on its
// candidates, measured right after it.
type pipelineRound struct {
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

type scalingPoint struct {
	Evaluators int     `json:"evaluators"`
	Rate       float64 `json:"evaluations_per_second"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
	// CoresBusy is the process's CPU over the campaign's span: near the
	// machine's cores, the services (not the oracle, which sleeps) bound
	// the speed-up.
	CoresBusy float64 `json:"cores_busy"`
	// Steal is the share of the machine's CPU time a hypervisor took
	// over the span (see pipelineRound.Steal).
	Steal *float64 `json:"steal_share,omitempty"`
}

func newBenchPipelineCmd() *cobra.Command {
	var (
		data, replicas string
		budget, batch  int
		delay          time.Duration
		asJSON         bool
		cpuprofile     string
		memprofile     string
		inFlight       int
		proposerConc   int
		workers        int
		rounds         int
		natsURL        string
		redisURL       string
	)
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Throughput of the oracle alone, of the whole pipeline, and its scaling with evaluator replicas",
		Long: `pipeline measures, in one run on this machine:

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
unless GOGC is set.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			tuneLocalGC()
			if data == "" {
				var err error
				if data, err = datadir.Find(); err != nil {
					return err
				}
			}
			counts, err := parseInts(replicas)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--replicas: %w", err)}
			}
			if rounds < 1 {
				return &exitError{code: 2, err: fmt.Errorf("--rounds: %d is not a positive integer", rounds)}
			}
			orc, _, err := wire.Oracle(data, workers)
			if err != nil {
				return err
			}
			db, err := wire.Reference(data)
			if err != nil {
				return err
			}
			w := cmd.ErrOrStderr()
			setup := &pipelineSetup{servers: local.Options{NATSURL: natsURL, RedisURL: redisURL}, oracle: orc, db: db, proposerConcurrency: proposerConc}
			rep := pipelineReport{GOMAXPROCS: runtime.GOMAXPROCS(0), Delay: delay.String(), Workers: workers}

			// A warm-up campaign like (b) fills the caches and gives the
			// candidates that carry the machine's speed across the first
			// round (bracket).
			fmt.Fprintf(w, "warm-up campaign, budget %d …\n", budget)
			warm, _, err := setup.campaign(ctx, budget, 1, batch, 0, inFlight)
			if err != nil {
				return err
			}
			prev := warm
			for r := range rounds {
				cpuPath, memPath := cpuprofile, memprofile
				if r > 0 {
					cpuPath, memPath = "", ""
				}
				fmt.Fprintf(w, "round %d of %d: (a), (b) with budget %d, (a) …\n", r+1, rounds, budget)
				round, evs, err := setup.round(ctx, prev, budget, batch, inFlight, cpuPath, memPath)
				if err != nil {
					return err
				}
				rep.Rounds = append(rep.Rounds, round)
				prev = evs
			}
			rep.pipelineRound = medianRound(rep.Rounds)
			for _, n := range counts {
				b := max(200, 100*n)
				fmt.Fprintf(w, "(c) %d evaluator(s), %s per candidate, budget %d …\n", n, delay, b)
				_, span, err := setup.campaign(ctx, b, n, 4, delay, 16*n)
				if err != nil {
					return err
				}
				rep.Scaling = append(rep.Scaling, scalingPoint{Evaluators: n, Rate: span.rate(), CoresBusy: span.coresBusy(), Steal: span.steal})
			}
			for i := range rep.Scaling {
				rep.Scaling[i].Speedup = rep.Scaling[i].Rate / rep.Scaling[0].Rate * float64(rep.Scaling[0].Evaluators)
				rep.Scaling[i].Efficiency = rep.Scaling[i].Speedup / float64(rep.Scaling[i].Evaluators)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			printPipelineReport(cmd.OutOrStdout(), &rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "data directory (default: CRUCIBLE_DATA, ../shared, or the user cache)")
	f.IntVar(&budget, "budget", 600, "evaluations of the one-evaluator campaign (b)")
	f.IntVar(&batch, "batch", 16, "evaluator batch size for (a) and (b)")
	f.DurationVar(&delay, "delay", 20*time.Millisecond, "artificial oracle cost per candidate for (c)")
	f.StringVar(&replicas, "replicas", "1,2,4,8", "evaluator replica counts for (c)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the first campaign (b) to this file")
	f.StringVar(&memprofile, "memprofile", "", "write the allocations up to the end of the first campaign (b) to this file, and up to its start to this file + .base (go tool pprof -base)")
	f.IntVar(&inFlight, "in-flight", 16, "generations in flight (the campaign's max_in_flight) for (b)")
	f.StringVar(&natsURL, "nats", "", "run the campaigns on this NATS server instead of an embedded one (streams in memory, deleted afterwards)")
	f.StringVar(&redisURL, "redis", "", "run the campaigns on this Redis server instead of an embedded one (keys deleted afterwards)")
	f.IntVar(&workers, "workers", 0, "oracle workers of the evaluator, for (a) and (b) (0 = one per CPU)")
	f.IntVar(&proposerConc, "proposer-concurrency", 8, "generation requests the proposer handles at once")
	f.IntVar(&rounds, "rounds", 5, "rounds of (b) then (a); the report gives the round with the median ratio, and every round")
	return cmd
}

// round times the oracle alone on the previous campaign's candidates,
// runs campaign (b), then times the oracle on (b)'s own candidates and on
// the previous campaign's again: (b) is compared with (a) from those three
// timings (bracket), which carries the machine's speed before (b) over to
// its own candidates. Campaign (b) is profiled into cpuPath and memPath
// when those are not empty. It returns campaign (b).
func (p *pipelineSetup) round(ctx context.Context, prev *benchCampaign, budget, batch, inFlight int, cpuPath, memPath string) (pipelineRound, *benchCampaign, error) {
	var (
		r    pipelineRound
		res  *benchCampaign
		span campaignSpan
	)
	before, err := benchOracle(ctx, p.cold, prev, batch)
	if err != nil {
		return r, nil, err
	}
	err = profiled(cpuPath, memPath, func() (err error) {
		res, span, err = p.campaign(ctx, budget, 1, batch, 0, inFlight)
		return err
	})
	if err != nil {
		return r, nil, err
	}
	after, err := benchOracle(ctx, p.cold, res, batch)
	if err != nil {
		return r, nil, err
	}
	again, err := benchOracle(ctx, p.cold, prev, batch)
	if err != nil {
		return r, nil, err
	}
	a := bracket(before, after, again)
	r.PipelineRate = span.rate()
	r.OracleRate = a.rate
	r.PipelineRatio = r.PipelineRate / r.OracleRate
	r.Steal = span.steal
	r.OracleSteal = a.steal
	if span.cpu > 0 && span.evaluations > 0 {
		r.CPUPerEvaluation = 1000 * span.cpu / float64(span.evaluations)
		r.OracleCPUPerEvaluation = 1000 * a.cpuPer
		r.CoresBusy = span.coresBusy()
		r.AllocPerEvaluation = span.alloc / float64(span.evaluations) / 1024
	}
	if span.wall > 0 && span.oracle > 0 {
		r.OracleBusy = span.oracle / span.wall
		r.OracleSpeed = float64(span.evaluations) / span.oracle / r.OracleRate
	}
	return r, res, nil
}

// medianRound returns the round with the median ratio (of an even number,
// the lower middle one).
func medianRound(rs []pipelineRound) pipelineRound {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b pipelineRound) int { return cmp.Compare(a.PipelineRatio, b.PipelineRatio) })
	return sorted[(len(sorted)-1)/2]
}

// profiled runs f with a CPU profile into cpuPath and allocation profiles
// into memPath (before: memPath.base), where those are not empty.
func profiled(cpuPath, memPath string, f func() error) error {
	if err := writeAllocProfile(memPath, ".base"); err != nil {
		return err
	}
	stop, err := startCPUProfile(cpuPath)
	if err != nil {
		return err
	}
	err = f()
	stop()
	if err != nil {
		return err
	}
	return writeAllocProfile(memPath, "")
}

// startCPUProfile profiles the process into path until stop is called;
// with an empty path it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// writeAllocProfile writes the allocations so far to path+suffix; with an
// empty path it does nothing.
func writeAllocProfile(path, suffix string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		return err
	}
	// The profile holds what was allocated up to the last collection;
	// without one now it would miss up to a collection cycle's worth
	// (seconds of a campaign at the local mode's GOGC).
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseInts(s string) ([]int, error) {
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

// campaignSpan is the part of a campaign the rates are taken over: from
// the first to the last evaluation of a proposed candidate.
type campaignSpan struct {
	wall        float64  // seconds
	cpu         float64  // CPU seconds of the process (0 = not measured)
	alloc       float64  // bytes the process allocated on the heap
	oracle      float64  // seconds the evaluators' oracle worked on the span's evaluations
	steal       *float64 // share of the machine's CPU time a hypervisor took (nil = not reported)
	proposed    int      // evaluations of proposed candidates (all inside the span)
	evaluations int      // evaluations inside the span, seeds included
}

// rate is the proposed candidates' evaluations/s over the span.
func (s campaignSpan) rate() float64 {
	if s.wall <= 0 {
		return 0
	}
	return float64(s.proposed-1) / s.wall
}

// coresBusy is the process's CPU seconds per second of the span.
func (s campaignSpan) coresBusy() float64 {
	if s.wall <= 0 {
		return 0
	}
	return s.cpu / s.wall
}

// pipelineSetup is what every campaign of the benchmark shares.
type pipelineSetup struct {
	servers             local.Options // NATSURL and RedisURL ("" = embedded)
	oracle              *oracle.Oracle
	db                  *reference.DB
	proposerConcurrency int
}

// campaign runs one campaign on a fresh in-process stack and returns it
// with its span: the evaluations and the CPU the process used between the
// first and the last proposed candidate's evaluation.
func (p *pipelineSetup) campaign(ctx context.Context, budget, evaluators, batch int, delay time.Duration, inFlight int) (*benchCampaign, campaignSpan, error) {
	id := fmt.Sprintf("bench-%d-%d", evaluators, time.Now().UnixNano())
	orc, err := p.cold()
	if err != nil {
		return nil, campaignSpan{}, err
	}
	opts := local.Options{NATSURL: p.servers.NATSURL, RedisURL: p.servers.RedisURL, Oracle: orc, Evaluators: evaluators}
	if opts.NATSURL != "" || opts.RedisURL != "" {
		// Real servers: the run gets its own namespace and leaves nothing.
		opts.Namespace, opts.MemoryStreams = id, true
	}
	opts.Evaluator.Batch, opts.Evaluator.Delay = batch, delay
	opts.Proposer = func(s *store.Store) proposer.Config {
		cfg := wire.Proposer(p.db, s, wire.ProposerOptions{})
		cfg.Concurrency = p.proposerConcurrency
		return cfg
	}
	st, err := local.Start(ctx, opts)
	if err != nil {
		return nil, campaignSpan{}, err
	}
	defer st.Close()
	if opts.Namespace != "" {
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
			defer cancel()
			_ = st.Purge(cctx)
		}()
	}
	t, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		return nil, campaignSpan{}, err
	}
	spec := &messages.CampaignSpec{ID: id, Task: t, Budget: budget, Seed: 1, MaxInFlight: inFlight}
	stop := sampleCPU(20 * time.Millisecond)
	res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 20 * time.Minute})
	samples := stop()
	if err != nil {
		return nil, campaignSpan{}, err
	}
	first, last := evaluationSpan(res.Evaluations)
	span := campaignSpan{wall: last.Sub(first).Seconds(), proposed: len(res.Evaluations), evaluations: len(res.Evaluations)}
	for _, ev := range res.Evaluations {
		span.oracle += ev.OracleSeconds
	}
	for _, ev := range res.Seeds {
		if !ev.EvaluatedAt.Before(first) && !ev.EvaluatedAt.After(last) {
			span.evaluations++
			span.oracle += ev.OracleSeconds
		}
	}
	span.cpu = samples.between(first, last)
	span.alloc = samples.allocatedBetween(first, last)
	span.steal = samples.stealShare(first, last)
	finds, err := st.Store.Finds(ctx, id)
	if err != nil {
		return nil, campaignSpan{}, err
	}
	return &benchCampaign{Result: res, items: oracleItems(res, finds)}, span, nil
}

// benchCampaign is a campaign's results and what its evaluator gave the
// oracle (oracleItems), which (a) times.
type benchCampaign struct {
	*local.Result
	items []evaluator.Item
}

// oracleItems are a campaign's candidates as the evaluator gave them to
// the oracle: each with the campaign's finds (the hull phases its
// evaluations added) that were evaluated before the candidate was
// proposed (the evaluator read at least those), as extra hull phases.
func oracleItems(res *local.Result, finds []store.Find) []evaluator.Item {
	evaluated := map[string]time.Time{}
	for _, ev := range append(slices.Clip(res.Evaluations), res.Seeds...) {
		evaluated[ev.ID] = ev.EvaluatedAt
	}
	finds = slices.Clone(finds)
	slices.SortStableFunc(finds, func(a, b store.Find) int { return evaluated[a.ID].Compare(evaluated[b.ID]) })
	extra := evaluator.FindEntries(finds)
	var items []evaluator.Item
	for _, ev := range res.Evaluations {
		s, err := ev.Candidate.Structure.Crystal()
		if err != nil {
			continue
		}
		k := sort.Search(len(finds), func(i int) bool { return !evaluated[finds[i].ID].Before(ev.Candidate.ProposedAt) })
		items = append(items, evaluator.Item{Structure: s, StatedFormula: ev.Candidate.Structure.Formula, Extra: extra[:k:k]})
	}
	return items
}

// evaluationSpan returns the first and the last evaluation time.
func evaluationSpan(evs []*messages.Evaluation) (first, last time.Time) {
	for i, ev := range evs {
		if i == 0 || ev.EvaluatedAt.Before(first) {
			first = ev.EvaluatedAt
		}
		if i == 0 || ev.EvaluatedAt.After(last) {
			last = ev.EvaluatedAt
		}
	}
	return first, last
}

// cpuSamples are the process's CPU seconds and heap allocations, and the
// machine's stolen time, at increasing times.
type cpuSamples struct {
	at    []time.Time
	cpu   []float64 // CPU seconds of the process
	alloc []float64 // bytes the process has allocated on the heap
	// Stolen time is read less often (reading the kernel's statistics,
	// 36–39 µs here, costs about 40 times the process's CPU time): steal
	// holds the seconds a hypervisor took from the machine's cpus CPUs,
	// summed, at the times stealAt (nil = not reported).
	stealAt []time.Time
	steal   []float64
	cpus    int
}

// stealEvery is how many samples of CPU time there are to one of stolen
// time.
const stealEvery = 25

// sampleCPU samples the process's CPU time and heap allocations, and the
// machine's stolen time, every period until the returned function is
// called. Where CPU time is not available there are no samples.
func sampleCPU(period time.Duration) (stop func() cpuSamples) {
	var s cpuSamples
	if _, ok := cputime.Process(); !ok {
		return func() cpuSamples { return s }
	}
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	take := func(last bool) {
		c, _ := cputime.Process()
		metrics.Read(allocs)
		var a float64
		if allocs[0].Value.Kind() == metrics.KindUint64 {
			a = float64(allocs[0].Value.Uint64())
		}
		now := time.Now()
		if len(s.at)%stealEvery == 0 || last {
			if st, cpus, ok := cputime.Steal(); ok {
				s.stealAt, s.steal, s.cpus = append(s.stealAt, now), append(s.steal, st.Seconds()), cpus
			}
		}
		s.at, s.cpu, s.alloc = append(s.at, now), append(s.cpu, c.Seconds()), append(s.alloc, a)
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			take(false)
			select {
			case <-done:
				take(true)
				return
			case <-t.C:
			}
		}
	}()
	return func() cpuSamples {
		close(done)
		<-stopped
		return s
	}
}

// valueAt interpolates the values v sampled at times at at time t,
// clamped to the samples.
func valueAt(at []time.Time, v []float64, t time.Time) float64 {
	n := len(at)
	i := sort.Search(n, func(i int) bool { return !at[i].Before(t) })
	switch {
	case n == 0:
		return 0
	case i == 0:
		return v[0]
	case i == n:
		return v[n-1]
	}
	f := t.Sub(at[i-1]).Seconds() / at[i].Sub(at[i-1]).Seconds()
	return v[i-1] + f*(v[i]-v[i-1])
}

// between is the CPU seconds used from a to b.
func (s cpuSamples) between(a, b time.Time) float64 {
	return valueAt(s.at, s.cpu, b) - valueAt(s.at, s.cpu, a)
}

// allocatedBetween is the bytes allocated from a to b.
func (s cpuSamples) allocatedBetween(a, b time.Time) float64 {
	return valueAt(s.at, s.alloc, b) - valueAt(s.at, s.alloc, a)
}

// stealShare is the share of the machine's CPU time a hypervisor took
// from a to b; nil where steal is not reported.
func (s cpuSamples) stealShare(a, b time.Time) *float64 {
	if s.steal == nil || !b.After(a) {
		return nil
	}
	return stealShare(valueAt(s.stealAt, s.steal, b)-valueAt(s.stealAt, s.steal, a), b.Sub(a), s.cpus)
}

// stealShare is stolen seconds (summed over cpus CPUs) over the CPU time
// of wall.
func stealShare(stolen float64, wall time.Duration, cpus int) *float64 {
	return ptr(min(1, max(0, stolen/(wall.Seconds()*float64(cpus)))))
}

func ptr[T any](v T) *T { return &v }

// cold returns the oracle with no hull diagram built: each campaign (b)
// and each pass of (a) start from the same state, so that both include
// building the diagrams of the chemical systems the candidates reach.
func (p *pipelineSetup) cold() (evaluator.Oracle, error) {
	o, err := p.oracle.Cold()
	if err != nil {
		return nil, err
	}
	return evaluator.HierarchicalOracle{Oracle: o}, nil
}

// oracleTiming is (a) on one campaign's candidates.
type oracleTiming struct {
	rate   float64  // structures/s
	cpuPer float64  // CPU seconds of the process per structure
	steal  *float64 // share of the machine's CPU time a hypervisor took (nil = not reported)
}

// bracket is (a) for a campaign (b), from the oracle timed on the
// previous campaign's candidates before it (before) and after it (again),
// and on its own candidates after it (after). Two campaigns of the same
// spec propose different candidates (of the same seed and budget here,
// 109 formulas in common out of about 570, and 13 % apart in the mean
// square of their sites, which the oracle's cost follows), so (a) is
// taken on (b)'s own candidates; the machine's speed before (b) is
// carried over to them by the previous campaign's, timed on both sides:
// (a) averages the rate after (b) with that rate scaled by before/again.
// CPU per structure is treated alike; steal is the three timings' mean.
func bracket(before, after, again oracleTiming) oracleTiming {
	t := oracleTiming{rate: after.rate, cpuPer: after.cpuPer}
	if before.rate > 0 && again.rate > 0 {
		t.rate = (after.rate + after.rate*before.rate/again.rate) / 2
	}
	if before.cpuPer > 0 && again.cpuPer > 0 {
		t.cpuPer = (after.cpuPer + after.cpuPer*before.cpuPer/again.cpuPer) / 2
	}
	if before.steal != nil && after.steal != nil && again.steal != nil {
		t.steal = ptr((*before.steal + *after.steal + *again.steal) / 3)
	}
	return t
}

// benchOracle evaluates a campaign's candidates in batches, as its
// evaluator did (oracleItems), each pass over them on a cold oracle,
// repeating until a few seconds have passed.
func benchOracle(ctx context.Context, cold func() (evaluator.Oracle, error), c *benchCampaign, batch int) (oracleTiming, error) {
	items := c.items
	if len(items) == 0 {
		return oracleTiming{}, fmt.Errorf("no candidate structures to time")
	}
	n := 0
	var elapsed, cpu, stolen time.Duration
	_, cpus, stealOK := cputime.Steal()
	for elapsed < 3*time.Second || n < len(items) {
		orc, err := cold()
		if err != nil {
			return oracleTiming{}, err
		}
		cpu0, _ := cputime.Process()
		steal0, _, _ := cputime.Steal()
		start := time.Now()
		for i := 0; i < len(items); i += batch {
			if _, err := orc.Evaluate(ctx, items[i:min(i+batch, len(items))]); err != nil {
				return oracleTiming{}, err
			}
		}
		elapsed += time.Since(start)
		cpu1, _ := cputime.Process()
		steal1, _, _ := cputime.Steal()
		cpu += cpu1 - cpu0
		stolen += steal1 - steal0
		n += len(items)
	}
	t := oracleTiming{rate: float64(n) / elapsed.Seconds(), cpuPer: cpu.Seconds() / float64(n)}
	if stealOK {
		t.steal = stealShare(stolen.Seconds(), elapsed, cpus)
	}
	return t, nil
}

func printPipelineReport(w io.Writer, r *pipelineReport) {
	fmt.Fprintf(w, "GOMAXPROCS %d, oracle workers %s\n", r.GOMAXPROCS, workersText(r.Workers))
	if len(r.Rounds) > 1 {
		for i, x := range r.Rounds {
			fmt.Fprintf(w, "round %d: (a) %8.1f structures/s, (b) %8.1f evaluations/s = %.0f%% (oracle busy %.0f%%, at %.0f%% speed)%s\n", i+1, x.OracleRate, x.PipelineRate, 100*x.PipelineRatio, 100*x.OracleBusy, 100*x.OracleSpeed, stealText(x.OracleSteal, x.Steal))
		}
		fmt.Fprintf(w, "the round with the median ratio:\n")
	}
	fmt.Fprintf(w, "(a) oracle alone:            %8.1f structures/s\n", r.OracleRate)
	fmt.Fprintf(w, "(b) pipeline, 1 evaluator:   %8.1f evaluations/s  = %.0f%% of (a)\n", r.PipelineRate, 100*r.PipelineRatio)
	if r.CPUPerEvaluation > 0 {
		fmt.Fprintf(w, "    CPU per evaluation %.2f ms (oracle %.2f ms, services and brokers %.2f ms); %.2f of %d cores busy\n",
			r.CPUPerEvaluation, r.OracleCPUPerEvaluation, r.CPUPerEvaluation-r.OracleCPUPerEvaluation, r.CoresBusy, r.GOMAXPROCS)
		fmt.Fprintf(w, "    heap allocated per evaluation %.0f KiB (the whole process)\n", r.AllocPerEvaluation)
	}
	if r.OracleBusy > 0 {
		fmt.Fprintf(w, "    the evaluator's oracle worked %.0f%% of the time, at %.0f%% of its speed in (a)\n", 100*r.OracleBusy, 100*r.OracleSpeed)
	}
	if r.Steal != nil && r.OracleSteal != nil {
		fmt.Fprintf(w, "    the hypervisor took %.0f%% of the machine's CPU time during (a), %.0f%% during (b) (steal)\n", 100**r.OracleSteal, 100**r.Steal)
	}
	fmt.Fprintf(w, "(c) oracle delay %s per candidate:\n", r.Delay)
	fmt.Fprintf(w, "    evaluators  evaluations/s  speed-up  efficiency  cores busy  steal\n")
	for _, p := range r.Scaling {
		steal := "     -"
		if p.Steal != nil {
			steal = fmt.Sprintf("%5.0f%%", 100**p.Steal)
		}
		fmt.Fprintf(w, "    %10d  %13.1f  %7.2fx  %9.0f%%  %10.2f  %s\n", p.Evaluators, p.Rate, p.Speedup, 100*p.Efficiency, p.CoresBusy, steal)
	}
	if worst := r.worstSteal(); worst > stealWarning {
		fmt.Fprintf(w, "warning: the hypervisor took up to %.0f%% of the machine's CPU time (steal) during these runs; wall-clock rates, and ratios of rates measured at different times, move with it whatever the program does: compare figures measured while it stays near 0\n", 100*worst)
	}
}

// stealWarning is the share of stolen CPU time above which the report
// warns that its rates are not comparable.
const stealWarning = 0.05

// worstSteal is the largest share of stolen CPU time of any measurement.
func (r *pipelineReport) worstSteal() float64 {
	var worst float64
	for _, x := range r.Rounds {
		for _, s := range []*float64{x.OracleSteal, x.Steal} {
			if s != nil {
				worst = max(worst, *s)
			}
		}
	}
	for _, p := range r.Scaling {
		if p.Steal != nil {
			worst = max(worst, *p.Steal)
		}
	}
	return worst
}

// stealText is a round's stolen shares of CPU time, when reported.
func stealText(a, b *float64) string {
	if a == nil || b == nil {
		return ""
	}
	return fmt.Sprintf(", steal (a) %.0f%% (b) %.0f%%", 100**a, 100**b)
}

func workersText(n int) string {
	if n == 0 {
		return "one per CPU"
	}
	return strconv.Itoa(n)
}
