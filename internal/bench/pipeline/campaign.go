package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/task"
)

// round times the oracle alone on the previous campaign's candidates,
// runs campaign (b), then times the oracle on (b)'s own candidates and on
// the previous campaign's again: (b) is compared with (a) from those three
// timings (bracket), which carries the machine's speed before (b) over to
// its own candidates. Campaign (b) is profiled into cpuPath and memPath
// when those are not empty. It returns campaign (b).
func (p *setup) round(ctx context.Context, prev *run, budget, batch, inFlight int, cpuPath, memPath string) (Round, *run, error) {
	var (
		r    Round
		res  *run
		span campaignSpan
	)
	before, err := timeOracle(ctx, p.cold, prev, batch)
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
	after, err := timeOracle(ctx, p.cold, res, batch)
	if err != nil {
		return r, nil, err
	}
	again, err := timeOracle(ctx, p.cold, prev, batch)
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

// setup is what every campaign of the benchmark shares.
type setup struct {
	servers             local.Options // NATSURL and RedisURL ("" = embedded)
	oracle              *oracle.Oracle
	db                  *reference.DB
	proposerConcurrency int
}

// campaign runs one campaign on a fresh in-process stack and returns it
// with its span: the evaluations and the CPU the process used between the
// first and the last proposed candidate's evaluation.
func (p *setup) campaign(ctx context.Context, budget, evaluators, batch int, delay time.Duration, inFlight int) (*run, campaignSpan, error) {
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
	return &run{Result: res, items: oracleItems(res, finds)}, span, nil
}

// run is a campaign's results and what its evaluator gave the
// oracle (oracleItems), which (a) times.
type run struct {
	*local.Result
	items []evaluator.Item
}

// oracleItems are a campaign's candidates as the evaluator gave them to
// the oracle: each with the campaign's finds (the hull phases its
// accepted discoveries added) that were evaluated before the candidate was
// proposed (about those the evaluator read: the judge adds a find soon
// after its evaluation), as extra hull phases.
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

// cold returns the oracle with no hull diagram built: each campaign (b)
// and each pass of (a) start from the same state, so that both include
// building the diagrams of the chemical systems the candidates reach.
func (p *setup) cold() (evaluator.Oracle, error) {
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
// spec propose different candidates, of different sizes, which the
// oracle's cost follows, so (a) is taken on (b)'s own candidates; the
// machine's speed before (b) is carried over to them by the previous
// campaign's, timed on both sides: (a) averages the rate after (b) with
// that rate scaled by before/again. CPU per structure is treated alike;
// steal is the three timings' mean.
func bracket(before, after, again oracleTiming) oracleTiming {
	t := oracleTiming{rate: after.rate, cpuPer: after.cpuPer}
	if before.rate > 0 && again.rate > 0 {
		t.rate = (after.rate + after.rate*before.rate/again.rate) / 2
	}
	if before.cpuPer > 0 && again.cpuPer > 0 {
		t.cpuPer = (after.cpuPer + after.cpuPer*before.cpuPer/again.cpuPer) / 2
	}
	if before.steal != nil && after.steal != nil && again.steal != nil {
		t.steal = new((*before.steal + *after.steal + *again.steal) / 3)
	}
	return t
}

// timeOracle evaluates a campaign's candidates in batches, as its
// evaluator did (oracleItems), each pass over them on a cold oracle,
// repeating until a few seconds have passed.
func timeOracle(ctx context.Context, cold func() (evaluator.Oracle, error), c *run, batch int) (oracleTiming, error) {
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
