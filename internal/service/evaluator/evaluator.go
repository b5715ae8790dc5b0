// Package evaluator is the service that evaluates candidates: every replica
// pulls batches from the one shared durable consumer of CANDIDATES, asks
// the oracle for properties and stability, scores them against the
// campaign's task (LLEMA's margins), and publishes evaluations. Adding a
// replica adds throughput; a replica that dies leaves its unacknowledged
// candidates to be redelivered to the others.
//
// A replica has one or both of two roles. The screen role does the above.
// For a campaign with the relax oracle, a screened candidate that passes
// the campaign's screen (PassesScreen) is not published as an evaluation
// but as a relax job on RELAX; the relax role (its own durable consumer)
// relaxes the candidate with the M3GNet potential, evaluates the relaxed
// structure and publishes that evaluation, with the screened numbers and
// the relaxation in it. Either way a candidate gets exactly one
// evaluation (message id evaluation/<candidate>), so the campaign's
// accounting is that of a one-step oracle.
package evaluator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/specs"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Item is one structure to evaluate.
type Item struct {
	Structure *crystal.Structure
	// StatedFormula is the formula the generator claimed; a mismatch with
	// the species is a validity failure.
	StatedFormula string
	// Extra are the campaign's own phases on or below the hull (its
	// finds), added to the reference phases of the stability calculation.
	// Items share the slice: it is read only.
	Extra []hull.Entry
	// Properties are the properties the campaign's task needs
	// (task.Task.Required); the oracle predicts those of its own
	// surrogates only when asked.
	Properties []string
}

// Outcome is the oracle's answer for one item.
type Outcome struct {
	Valid   bool
	Reasons []messages.Reason
	// Warnings say what could not be evaluated for a valid structure.
	Warnings        []messages.Reason
	OxidationStates map[string]float64
	Properties      map[string]messages.PropertyValue
	// Known: the reduced formula is in the reference data.
	Known bool
	// Novelty is what the structure is with respect to the known
	// compounds; nil from an oracle that does not say (novelty is then
	// the formula's).
	Novelty       *messages.Novelty
	EAboveHull    *float64
	HullEnergy    *float64
	Decomposition map[string]float64
	// EAboveHullCalibrated is EAboveHull's calibrated error, when it rests
	// on a calibrated surrogate formation energy.
	EAboveHullCalibrated *messages.Calibrated
	// SpaceGroup is the structure's space group at the default
	// tolerances, nil when none was found or the oracle does not say.
	SpaceGroup *spacegroup.Name
}

// Oracle evaluates a batch of structures. It must return one outcome per
// item; a structure it cannot evaluate is an invalid outcome with the
// reason, not an error. An error means the whole batch could not be
// evaluated (and will be retried).
type Oracle interface {
	Evaluate(ctx context.Context, items []Item) ([]Outcome, error)
}

// Config tunes an evaluator replica.
type Config struct {
	// Batch is the most candidates evaluated in one oracle call.
	Batch int
	// Delay is added per candidate: an artificial oracle cost for
	// benchmarks (a DFT-like oracle), 0 in production.
	Delay        time.Duration
	DrainTimeout time.Duration
	// Name identifies the replica in evaluations (default: host name).
	Name string
	// Role is RoleScreen, RoleRelax or RoleBoth (the default): which work
	// queues the replica serves.
	Role string
	// RelaxWorkers is the number of relaxations run at once by the relax
	// role, one per goroutine (default GOMAXPROCS).
	RelaxWorkers int
}

// Roles of an evaluator replica.
const (
	// RoleScreen evaluates candidates (CANDIDATES) and queues relax jobs.
	RoleScreen = "screen"
	// RoleRelax relaxes screened candidates (RELAX).
	RoleRelax = "relax"
	// RoleBoth serves both queues in one process.
	RoleBoth = "both"
)

// Service is an evaluator replica.
type Service struct {
	bus    *bus.Bus
	store  *store.Store
	oracle Oracle
	log    *zap.Logger
	cfg    Config
	specs  *specs.Cache

	mu    sync.Mutex
	finds map[string]findsEntry
	// The oracle takes one call at a time (it uses every core it is
	// given); a handler holding oracleTurn (a token) serves the calls queued
	// behind it, see evaluate.
	oracleTurn chan struct{}
	queueMu    sync.Mutex
	queue      []*oracleCall
}

// oracleCall is one handler's candidates waiting for the oracle, and what
// it gave them.
type oracleCall struct {
	items   []Item
	outs    []Outcome
	elapsed time.Duration // the call's share of the oracle's time
	err     error
	done    chan struct{}
}

// findsEntry is what an evaluator holds of a campaign's finds: the hull
// entries of the first n of them (those that parse), and for each entry
// the position of its find.
type findsEntry struct {
	n       int
	entries []hull.Entry
	pos     []int
}

// of returns the entries that extend c's reference phases: every find,
// or those recorded before c was proposed when c says how many (an
// ordered campaign).
func (e findsEntry) of(c *messages.Candidate) []hull.Entry {
	if c.HullFinds == nil {
		return e.entries
	}
	k, _ := slices.BinarySearch(e.pos, *c.HullFinds)
	return e.entries[:k:k]
}

var (
	metricEvaluated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "candidates_total",
		Help: "Candidates evaluated, by result (valid, invalid).",
	}, []string{"result"})
	metricBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "batch_size",
		Help: "Candidates per oracle call.", Buckets: prometheus.LinearBuckets(1, 4, 16),
	})
	metricLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "candidate_latency_seconds",
		Help:    "Time from a candidate's proposal to its evaluation's publication.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
	})
)

// Collectors are the evaluator's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricEvaluated, metricBatch, metricLatency, metricRelaxQueued, metricRelaxed, metricRelaxSteps, metricRelaxSeconds}
}

// New builds an evaluator replica.
func New(b *bus.Bus, s *store.Store, o Oracle, log *zap.Logger, cfg Config) *Service {
	if cfg.Batch < 1 {
		cfg.Batch = 16
	}
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	if cfg.Role == "" {
		cfg.Role = RoleBoth
	}
	if cfg.RelaxWorkers < 1 {
		cfg.RelaxWorkers = runtime.GOMAXPROCS(0)
	}
	return &Service{bus: b, store: s, oracle: o, log: log, cfg: cfg, specs: specs.New(s), finds: map[string]findsEntry{}, oracleTurn: make(chan struct{}, 1)}
}

// Run consumes its role's work queues until ctx is cancelled, then
// drains. The relax role without a relax tier, and an unknown role, are
// an error at once; both roles without a relax tier are the screen role.
func (s *Service) Run(ctx context.Context) error {
	relax, canRelax := s.oracle.(RelaxOracle)
	switch s.cfg.Role {
	case RoleScreen:
		return s.runScreen(ctx)
	case RoleBoth:
		if !canRelax {
			s.log.Warn("no relax tier: serving the screen role alone; campaigns with the relax oracle wait for a relax replica")
			return s.runScreen(ctx)
		}
	case RoleRelax:
		if !canRelax {
			return fmt.Errorf("evaluator: role %s needs the relax tier (the M3GNet potential and MP's corrections), which this oracle lacks", s.cfg.Role)
		}
	default:
		return fmt.Errorf("evaluator: role %q, want %s, %s or %s", s.cfg.Role, RoleScreen, RoleRelax, RoleBoth)
	}
	if s.cfg.Role == RoleRelax {
		return s.runRelax(ctx, relax)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() { errs <- s.runScreen(ctx) }()
	go func() { errs <- s.runRelax(ctx, relax) }()
	err := <-errs
	cancel() // one role ended: end the other
	return errors.Join(err, <-errs)
}

// runScreen consumes candidates.
func (s *Service) runScreen(ctx context.Context) error {
	spec, err := messages.ConsumerByName(messages.ConsumerEvaluator)
	if err != nil {
		return err
	}
	// At most two batches' worth of candidates in flight per replica:
	// while the oracle evaluates one, the candidates fetched meanwhile
	// (often a generation's two at a time) queue for it and are
	// evaluated together in the next oracle call (evaluate).
	return s.bus.RunBatch(ctx, spec, bus.RunOptions{Concurrency: 2 * s.cfg.Batch, MaxBatch: s.cfg.Batch, DrainTimeout: s.cfg.DrainTimeout, Service: "evaluator", Ready: s.store.Ready}, s.handleBatch)
}

func (s *Service) handleBatch(ctx context.Context, ds []*bus.Delivery) []error {
	errs := make([]error, len(ds))
	cands := make([]*messages.Candidate, len(ds))
	var items []Item
	var index []int // items[k] belongs to ds[index[k]]
	var specsOf []*messages.CampaignSpec
	findsOf := map[string]findsEntry{} // read once per campaign per batch
	decoded := make([]*messages.Candidate, len(ds))
	for i, d := range ds {
		var c messages.Candidate
		if err := bus.Decode(d, &c); err != nil {
			errs[i] = err
			continue
		}
		decoded[i] = &c
	}
	skips := s.verifyAll(ctx, decoded, errs)
	for i, d := range ds {
		if lateRedelivery(d, errs[i]) {
			skips[i], errs[i] = true, nil
		}
	}
	for i, c := range decoded {
		if c == nil || skips[i] || errs[i] != nil {
			continue
		}
		spec, err := s.specs.Get(ctx, c.Campaign)
		if err != nil {
			errs[i] = fmt.Errorf("candidate %s: %w", c.ID, err)
			continue
		}
		finds, ok := findsOf[c.Campaign]
		if !ok {
			if finds, err = s.campaignFinds(ctx, c.Campaign); err != nil {
				errs[i] = err
				continue
			}
			findsOf[c.Campaign] = finds
		}
		cands[i] = c
		st, err := c.Structure.Crystal()
		if err != nil {
			// Not even a structure: an invalid evaluation, not a retry.
			ev := s.invalid(c, messages.Reason{Code: "structure", Detail: err.Error()})
			errs[i] = s.publish(ctx, ev)
			cands[i] = nil
			continue
		}
		items = append(items, Item{Structure: st, StatedFormula: c.Structure.Formula, Extra: finds.of(c), Properties: spec.Task.Required()})
		index = append(index, i)
		specsOf = append(specsOf, spec)
	}
	if len(items) == 0 {
		return errs
	}
	outs, elapsed, err := s.evaluate(ctx, items) // one outcome per item, or err
	if err != nil {
		s.log.Warn("oracle failed on a batch; it will be retried", zap.Int("batch", len(items)), zap.Error(err))
		return fill(errs, index, err)
	}
	perItem := elapsed.Seconds() / float64(len(items))
	out := make([]bus.Outgoing, len(index))
	for k, i := range index {
		ev := Score(specsOf[k], cands[i], &outs[k])
		ev.Evaluator = s.cfg.Name
		ev.OracleSeconds = perItem
		ev.Tier = messages.TierScreen
		if specsOf[k].Oracle == messages.OracleRelax && PassesScreen(specsOf[k], ev) {
			// The relax role publishes this candidate's evaluation.
			job := &messages.RelaxJob{Schema: messages.SchemaVersion, Campaign: ev.Campaign, Screened: *ev, QueuedAt: time.Now().UTC()}
			out[k] = bus.Outgoing{Subject: messages.Subject(messages.SubjectRelax, ev.Campaign), Message: job}
			metricRelaxQueued.Inc()
			continue
		}
		out[k] = bus.Outgoing{Subject: messages.Subject(messages.SubjectEvaluations, ev.Campaign), Message: ev}
		s.count(ev)
	}
	for k, err := range s.bus.PublishAll(ctx, out) {
		i := index[k]
		errs[i] = err
		if _, queued := out[k].Message.(*messages.RelaxJob); err == nil && !queued {
			metricLatency.Observe(time.Since(cands[i].ProposedAt).Seconds())
		}
	}
	return errs
}

// evaluate has the oracle evaluate items and returns their outcomes (one
// per item, unless err) and their share of the oracle's time. The oracle
// takes one call at a time; calls made meanwhile queue, and the next
// handler to take the oracle evaluates every queued call it can (up to
// Batch candidates, whole calls in order, at least one) in one oracle
// call. Candidates reach the
// evaluator a generation (two, by default) at a time, and an oracle call
// of a few structures costs more per structure than a full one (the
// surrogates run model by model over up to 16 structures, and each call
// has its fixed costs): under load the queue fills, and the oracle gets
// full batches.
func (s *Service) evaluate(ctx context.Context, items []Item) ([]Outcome, time.Duration, error) {
	c := &oracleCall{items: items, done: make(chan struct{})}
	s.queueMu.Lock()
	s.queue = append(s.queue, c)
	s.queueMu.Unlock()
	for {
		select {
		case <-c.done:
			return c.outs, c.elapsed, c.err
		case s.oracleTurn <- struct{}{}:
		}
		select {
		case <-c.done: // served while this one waited for the oracle
			<-s.oracleTurn
			return c.outs, c.elapsed, c.err
		default:
		}
		s.serve(ctx, s.takeQueued())
		<-s.oracleTurn
	}
}

// takeQueued removes the first queued calls, whole and in order, up to
// Batch candidates in all but at least one call.
func (s *Service) takeQueued() []*oracleCall {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	n, k := 0, 0
	for k < len(s.queue) && (k == 0 || n+len(s.queue[k].items) <= s.cfg.Batch) {
		n += len(s.queue[k].items)
		k++
	}
	calls := slices.Clone(s.queue[:k])
	s.queue = slices.Delete(s.queue, 0, k)
	return calls
}

// serve runs the oracle (after the artificial delay, if any) on the calls'
// candidates together and hands each call its outcomes. It runs on the
// serving handler's context: a replica's handlers share one (cancelled
// at the end of the drain), and calls failed by it are redelivered.
func (s *Service) serve(ctx context.Context, calls []*oracleCall) {
	var items []Item
	for _, c := range calls {
		items = append(items, c.items...)
	}
	metricBatch.Observe(float64(len(items)))
	start := time.Now()
	var outs []Outcome
	err := sleep(ctx, time.Duration(len(items))*s.cfg.Delay)
	if err == nil {
		outs, err = s.oracle.Evaluate(ctx, items)
	}
	elapsed := time.Since(start)
	if err == nil && len(outs) != len(items) {
		err = fmt.Errorf("oracle returned %d outcomes for %d items", len(outs), len(items))
	}
	at := 0
	for _, c := range calls {
		n := len(c.items)
		if err != nil {
			c.err = err
		} else {
			c.outs = outs[at : at+n : at+n]
		}
		c.elapsed = elapsed * time.Duration(n) / time.Duration(max(1, len(items)))
		at += n
		close(c.done)
	}
}

func fill(errs []error, index []int, err error) []error {
	for _, i := range index {
		errs[i] = err
	}
	return errs
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Service) publish(ctx context.Context, ev *messages.Evaluation) error {
	s.count(ev)
	return s.bus.Publish(ctx, messages.Subject(messages.SubjectEvaluations, ev.Campaign), ev)
}

func (s *Service) count(ev *messages.Evaluation) {
	if ev.Valid {
		metricEvaluated.WithLabelValues("valid").Inc()
	} else {
		metricEvaluated.WithLabelValues("invalid").Inc()
	}
}

func (s *Service) invalid(c *messages.Candidate, r messages.Reason) *messages.Evaluation {
	return &messages.Evaluation{
		Schema: messages.SchemaVersion, ID: c.ID, Campaign: c.Campaign, Candidate: *c, Tier: messages.TierScreen,
		Reasons: []messages.Reason{r}, Score: -1, Evaluator: s.cfg.Name, EvaluatedAt: time.Now().UTC(),
	}
}

// campaignFinds returns the campaign's hull-extending finds as hull
// entries (a candidate's are findsEntry.of it). Finds only accumulate: a
// campaign's new ones are fetched and parsed once.
func (s *Service) campaignFinds(ctx context.Context, campaign string) (findsEntry, error) {
	s.mu.Lock()
	e := s.finds[campaign]
	s.mu.Unlock()
	fresh, err := s.store.FindsFrom(ctx, campaign, e.n)
	if err != nil || len(fresh) == 0 {
		return e, err
	}
	// New arrays: batches in flight keep reading the old ones.
	next := findsEntry{n: e.n + len(fresh), entries: slices.Clip(e.entries), pos: slices.Clip(e.pos)}
	for i := range fresh {
		for _, x := range FindEntries(fresh[i : i+1]) {
			next.entries = append(next.entries, x)
			next.pos = append(next.pos, e.n+i)
		}
	}
	s.mu.Lock()
	if len(s.finds) > 10000 {
		s.finds = map[string]findsEntry{}
	}
	if next.n > s.finds[campaign].n {
		s.finds[campaign] = next
	}
	s.mu.Unlock()
	return next, nil
}

// reasonElementRule is the reason code of a broken element rule.
const reasonElementRule = "element_rule"

// ReasonUncalibratedHullBound is the warning code of an evaluation below
// the hull whose energy above hull has no calibrated error, so that the
// hull-outlier bound is the judge's default.
const ReasonUncalibratedHullBound = "uncalibrated_hull_bound"

// Score turns the oracle's outcome into an evaluation: LLEMA's margins and
// score over the task's constraints (App. B.2), feasibility (a hit), the
// campaign's stability threshold, and novelty.
func Score(spec *messages.CampaignSpec, c *messages.Candidate, o *Outcome) *messages.Evaluation {
	ev := &messages.Evaluation{
		Schema: messages.SchemaVersion, ID: c.ID, Campaign: c.Campaign, Candidate: *c,
		Valid: o.Valid, Reasons: o.Reasons, Warnings: o.Warnings, OxidationStates: o.OxidationStates, Properties: o.Properties,
		EAboveHull: o.EAboveHull, HullEnergy: o.HullEnergy, Decomposition: o.Decomposition, EAboveHullCalibrated: o.EAboveHullCalibrated,
		Known: o.Known, SpaceGroup: o.SpaceGroup, EvaluatedAt: time.Now().UTC(), Unsupported: spec.Task.Unsupported(),
	}
	lookup := func(name string) (float64, bool) {
		if name == "e_above_hull" && o.EAboveHull != nil {
			return *o.EAboveHull, true
		}
		p, ok := o.Properties[name]
		if !ok || math.IsNaN(p.Value) {
			return 0, false
		}
		return p.Value, true
	}
	res := spec.Task.Evaluate(lookup)
	ev.Score = res.Score
	for i, k := range spec.Task.Constraints {
		v, ok := lookup(k.Property)
		if !ok {
			v = 0
		}
		ev.Margins = append(ev.Margins, messages.Margin{
			Property: k.Property, Kind: string(k.Kind), Value: v, Margin: res.Margins[i],
			Weight: k.EffectiveWeight(), Missing: !ok,
		})
	}
	feasible := o.Valid && res.Feasible
	// The metal rule: a band-gap constraint is met only by a structure the
	// metal classifier calls non-metallic (oracle.MetalRule), whatever the
	// bound.
	if gap, ok := o.Properties["band_gap"]; ok && gap.Metallic && constrains(spec.Task, "band_gap") {
		feasible = false
		ev.Reasons = append(ev.Reasons, messages.Reason{Code: "metallic",
			Detail: fmt.Sprintf("a metal by CGCNN's classifier (P(metal) = %.3g ≥ 0.5): its band gap is 0", deref(gap.MetalProbability))})
	}
	var violations []task.Violation
	if st, err := c.Structure.Crystal(); err == nil {
		violations = spec.Task.Violations(st)
	} else if comp, err := crystal.ParseFormula(c.Formula); err == nil {
		violations = spec.Task.CompositionViolations(comp)
	}
	for _, v := range violations {
		feasible = false
		ev.Reasons = append(ev.Reasons, messages.Reason{Code: v.Rule, Detail: v.Detail})
	}
	if !o.Valid {
		ev.Score = -1
	}
	// Calibrated errors: a surrogate value meets its constraint, and an
	// energy above hull the stability threshold, only by k calibrated
	// standard errors (the campaign's confidence_k).
	k := spec.EffectiveConfidenceK()
	for _, c := range spec.Task.Constraints {
		pv, ok := o.Properties[c.Property]
		if !ok || pv.Calibrated == nil || !o.Valid {
			continue
		}
		if d, sigma, decades := judge.CalibratedMargin(c, pv.Value, pv.Calibrated, pv.Calibrated.Q68); d < k*sigma {
			in := ""
			if decades {
				in = " decades"
			}
			feasible = false
			ev.Reasons = append(ev.Reasons, messages.Reason{Code: "within_calibrated_error",
				Detail: fmt.Sprintf("%s = %.4g is %.4g%s from its bound (%s), less than %g × its calibrated error %.4g%s", c.Property, pv.Value, d, in, c.String(), k, sigma, in)})
		}
	}
	threshold := spec.StabilityThreshold
	if c := o.EAboveHullCalibrated; c != nil {
		threshold -= k * c.Q68
	}
	ev.Feasible = feasible
	if o.Valid && o.EAboveHull != nil {
		e := *o.EAboveHull
		// Far below the hull of known ground states is more likely the
		// surrogate's error than a new ground state: not stable, and never
		// a reference phase of later candidates (pkg/judge). The bound is
		// the calibrated 95 % error of the energy above hull.
		bound, calibrated := judge.OutlierBound(ev.EAboveHullCalibrated, judge.DefaultSuspiciousBelowHull)
		ev.HullOutlierBound = bound
		ev.HullOutlier = e < -bound
		ev.Stable = e <= threshold && !ev.HullOutlier
		if e < 0 && !calibrated {
			ev.Warnings = append(ev.Warnings, messages.Reason{Code: ReasonUncalibratedHullBound, Detail: fmt.Sprintf(
				"the energy above hull has no calibrated error in this tier: the hull-outlier bound is the default %.4g eV/atom (run crucible calibrate)", bound)})
		}
		if ev.HullOutlier {
			what := "its calibrated 95 % error"
			if !calibrated {
				what = "the default bound"
			}
			ev.Warnings = append(ev.Warnings, messages.Reason{Code: "below_hull", Detail: fmt.Sprintf(
				"E_hull %.4g eV/atom is more than %.4g eV/atom (%s) below the hull of the known phases: a likely surrogate error, not counted stable",
				e, bound, what)})
		}
	}
	ev.Novelty = o.Novelty
	if o.Novelty != nil {
		ev.Novel = o.Valid && !c.Seed && o.Novelty.Novel()
	} else {
		ev.Novel = o.Valid && !c.Seed && !o.Known
	}
	return ev
}

// constrains reports whether the task constrains the property.
func constrains(t task.Task, property string) bool {
	for _, c := range t.Constraints {
		if c.Property == property {
			return true
		}
	}
	return false
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
