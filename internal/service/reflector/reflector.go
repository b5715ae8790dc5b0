// Package reflector is the service that learns from evaluations: it adds
// each to its island's success or failure pool and the campaign's counters
// (atomically and once), requests the next generation when one completes,
// writes a reflection with directives into the campaign's memory bank at
// the end of each episode, and finishes the campaign when its budget is
// spent.
package reflector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/control"
	"github.com/crucible-sci/crucible/internal/service/specs"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Config tunes the reflector.
type Config struct {
	// Concurrency is the number of evaluations in flight (default 32).
	Concurrency int
	// Batch is the most evaluations recorded in one store call (default
	// 16): the evaluations ready at once are recorded together, each
	// campaign's in one atomic script, then their follow-ups run in order.
	Batch int
	// Linger is how long the reflector waits for the rest of a batch once
	// an evaluation arrives (default 5 ms): an evaluator publishes a
	// batch's evaluations together, and recording them in one call
	// instead of one or two at a time saves store calls and fetches.
	// Negative: take only what is ready at once.
	Linger       time.Duration
	DrainTimeout time.Duration
	// ReconcileAtStart reconciles Redis with the streams once when the
	// replica starts, whatever the server's run id says (Redis Cluster,
	// whose restarts are not detected).
	ReconcileAtStart bool
	// LLM reflects for campaigns with reflector llm; nil makes them
	// reflect by the rules, with the reason recorded.
	LLM LLM
}

// LLM is a language-model reflector (MADE §4.1, SciMem App. E): given the
// episode's input and what the rules concluded, it returns the
// reflection to apply — its bullets, its directives (checked against the
// evidence with reflection.CheckDirectives) and its memory edits — and
// its exchanges for the audit trail. On an unusable answer it returns the
// rules' output with Fallback saying why; an error is an endpoint failure
// worth retrying.
type LLM interface {
	Reflect(ctx context.Context, spec *messages.CampaignSpec, in *reflection.Input, rules *reflection.Output) (*LLMReflection, error)
}

// LLMReflection is what an LLM reflector returns.
type LLMReflection struct {
	Output  reflection.Output
	Dropped []messages.DroppedDirective
	// RefusedEdits are the memory edits refused, each with why.
	RefusedEdits []string
	// Fallback says why the rules' output stands in, if it does.
	Fallback string
	Prompts  []*messages.Prompt
}

// Service is a reflector replica.
type Service struct {
	bus   *bus.Bus
	store *store.Store
	log   *zap.Logger
	cfg   Config
	ctl   *control.Control
	specs *specs.Cache
}

var metricEvaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "crucible", Subsystem: "reflector", Name: "evaluations_total",
	Help: "Evaluations recorded, by outcome (new, duplicate).",
}, []string{"outcome"})

// Collectors are the reflector's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricEvaluations, metricReconciled}
}

// New builds a reflector.
func New(b *bus.Bus, s *store.Store, log *zap.Logger, cfg Config) *Service {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 32
	}
	if cfg.Batch < 1 {
		cfg.Batch = 16
	}
	if cfg.Linger == 0 {
		cfg.Linger = 5 * time.Millisecond
	}
	return &Service{
		bus: b, store: s, log: log, cfg: cfg,
		ctl:   &control.Control{Bus: b, Store: s, Log: log},
		specs: specs.New(s),
	}
}

// Run consumes evaluations and lifecycle actions until ctx is cancelled,
// then drains.
func (s *Service) Run(ctx context.Context) error {
	spec, err := messages.ConsumerByName(messages.ConsumerReflector)
	if err != nil {
		return err
	}
	ctl, err := messages.ConsumerByName(messages.ConsumerControl)
	if err != nil {
		return err
	}
	errc := make(chan error, 3)
	go func() { errc <- s.reconcileLoop(ctx) }()
	go func() {
		errc <- s.bus.RunBatch(ctx, spec, bus.RunOptions{Concurrency: s.cfg.Concurrency, MaxBatch: s.cfg.Batch, Linger: s.cfg.Linger, DrainTimeout: s.cfg.DrainTimeout, Service: "reflector", Ready: s.store.Ready}, s.handleBatch)
	}()
	go func() {
		errc <- s.bus.Run(ctx, ctl, bus.RunOptions{Concurrency: 1, DrainTimeout: s.cfg.DrainTimeout, Service: "reflector", Ready: s.store.Ready}, s.handleControl)
	}()
	return errors.Join(<-errc, <-errc, <-errc)
}

// handleControl applies a lifecycle action (control.Apply); a repeat
// changes nothing twice.
func (s *Service) handleControl(ctx context.Context, d *bus.Delivery) error {
	var m messages.Control
	if err := bus.Decode(d, &m); err != nil {
		return err
	}
	spec, err := s.store.Spec(ctx, m.Campaign)
	if errors.Is(err, store.ErrNotFound) {
		return bus.Permanent(fmt.Errorf("control %s: %w", m.ID, err))
	}
	if err != nil {
		return err
	}
	_, err = s.ctl.Apply(ctx, spec, &m, messages.UserOfSubject(messages.SubjectControl, d.Subject))
	return err
}

// pending is a decoded evaluation of a batch and where it came from.
type pending struct {
	at   int // index in the batch
	ev   *messages.Evaluation
	spec *messages.CampaignSpec
}

// handleBatch records a batch's evaluations, one store call per campaign
// (in delivery order), then runs each one's follow-ups. An evaluation
// fails alone (it is retried; recording is idempotent): when a campaign's
// store call fails, its evaluations are recorded one by one.
func (s *Service) handleBatch(ctx context.Context, ds []*bus.Delivery) []error {
	errs := make([]error, len(ds))
	byCampaign := map[string][]pending{}
	digests := make([]string, len(ds))
	var campaigns []string
	evs := make([]*messages.Evaluation, len(ds))
	for i, d := range ds {
		var ev messages.Evaluation
		if err := bus.Decode(d, &ev); err != nil {
			errs[i] = err
			continue
		}
		evs[i] = &ev
		digests[i] = messages.DigestBytes(d.Data)
	}
	s.verifyAll(ctx, evs, digests, errs)
	for i, ev := range evs {
		if ev == nil || errs[i] != nil {
			continue
		}
		spec, err := s.specs.Get(ctx, ev.Campaign)
		if err != nil {
			errs[i] = fmt.Errorf("evaluation %s: %w", ev.ID, err)
			continue
		}
		if _, ok := byCampaign[ev.Campaign]; !ok {
			campaigns = append(campaigns, ev.Campaign)
		}
		byCampaign[ev.Campaign] = append(byCampaign[ev.Campaign], pending{at: i, ev: ev, spec: spec})
	}
	for _, c := range campaigns {
		ps := byCampaign[c]
		if ps[0].spec.Ordered {
			// An ordered campaign records seeds, then candidates, in their
			// order; one delivered ahead of its turn waits (errNotYet).
			sort.SliceStable(ps, func(i, j int) bool { return candidateOrder(&ps[i].ev.Candidate, &ps[j].ev.Candidate) })
		}
		recs := make([]*store.EvaluationRecord, len(ps))
		for k, p := range ps {
			recs[k] = Record(p.ev, p.spec)
			recs[k].Digest = digests[p.at]
		}
		outs, err := s.store.RecordEvaluations(ctx, c, recs)
		if err != nil && len(recs) > 1 {
			// One bad evaluation must not fail the others with it (and
			// take them to the dead letters after MaxDeliver): record each
			// alone; those recorded already come back as repeats.
			s.log.Warn("recording a batch failed; recording its evaluations one by one", zap.String("campaign", c), zap.Int("batch", len(recs)), zap.Error(err))
			for k, p := range ps {
				o, err := s.store.RecordEvaluation(ctx, c, recs[k])
				if err == nil && o.Wait {
					err = bus.Later(errNotYet, notYetDelay)
				} else if err == nil && otherThanRecorded(o, recs[k].Digest) {
					err = errOther(p.ev)
				} else if err == nil {
					err = s.followUp(ctx, p.spec, p.ev, o)
				}
				errs[p.at] = err
			}
			continue
		}
		if err != nil {
			errs[ps[0].at] = err
			continue
		}
		for k, p := range ps {
			if outs[k].Wait {
				errs[p.at] = bus.Later(errNotYet, notYetDelay)
				continue
			}
			if otherThanRecorded(outs[k], recs[k].Digest) {
				errs[p.at] = errOther(p.ev)
				continue
			}
			errs[p.at] = s.followUp(ctx, p.spec, p.ev, outs[k])
		}
	}
	return errs
}

// otherThanRecorded reports whether a repeat of a recorded evaluation is
// another message than the one recorded for its candidate: a second
// evaluation, which is not counted (its candidate has one) and whose
// follow-ups are not repeated (the recorded message's redelivery repeats
// them).
func otherThanRecorded(o store.Outcome, digest string) bool {
	return o.Duplicate && o.Digest != "" && digest != "" && o.Digest != digest
}

// errOther is the dead letter's reason for a second evaluation of a
// candidate.
func errOther(ev *messages.Evaluation) error {
	return bus.Permanent(fmt.Errorf("%w: evaluation %s differs from the evaluation recorded for its candidate", store.ErrForged, ev.ID))
}

// errNotYet is why an ordered campaign's evaluation delivered ahead of its
// turn is delivered again (after notYetDelay, or the bus's backoff).
var errNotYet = errors.New("an earlier candidate of this ordered campaign is not recorded yet")

const notYetDelay = 20 * time.Millisecond

// candidateOrder is the order in which an ordered campaign records
// evaluations: seeds by index, then candidates by generation and index.
func candidateOrder(a, b *messages.Candidate) bool {
	if a.Seed != b.Seed {
		return a.Seed
	}
	if a.Generation != b.Generation {
		return a.Generation < b.Generation
	}
	return a.Index < b.Index
}

// followUp does what recording an evaluation made due, each step
// idempotent, in order: the first generations after the seeds, the next
// generation, the episode's reflection, the end of the campaign.
func (s *Service) followUp(ctx context.Context, spec *messages.CampaignSpec, ev *messages.Evaluation, o store.Outcome) error {
	if o.Duplicate {
		metricEvaluations.WithLabelValues("duplicate").Inc()
		s.log.Debug("evaluation seen before; repeating its follow-ups",
			zap.String("campaign", ev.Campaign), zap.Int("generation", ev.Candidate.Generation), zap.String("candidate", ev.ID))
	} else {
		metricEvaluations.WithLabelValues("new").Inc()
	}
	if o.SeedsDone {
		if err := s.ctl.Start(ctx, spec, "start"); err != nil {
			return err
		}
	}
	if o.GenerationDone {
		trigger := fmt.Sprintf("after/%d", ev.Candidate.Generation)
		var err error
		switch {
		case o.Next != nil: // reserved when the evaluation was recorded
			err = s.ctl.Publish(ctx, spec, *o.Next, trigger)
		case !o.NextReserved: // recorded by an older reflector
			_, err = s.ctl.Request(ctx, spec, trigger)
		}
		if err != nil {
			return err
		}
	}
	if o.EpisodeDone {
		if err := s.endEpisode(ctx, spec, ev.Candidate.Episode); err != nil {
			return err
		}
	}
	if o.CampaignDone {
		if err := s.ctl.Finish(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}

// Record turns an evaluation into what the store keeps of it.
func Record(ev *messages.Evaluation, spec *messages.CampaignSpec) *store.EvaluationRecord {
	c := &ev.Candidate
	props := make(map[string]float64, len(ev.Properties))
	for k, v := range ev.Properties {
		props[k] = v.Value
	}
	// The oracle predicts invalid candidates too; the campaign's energy
	// statistics stay those of valid ones.
	var ehull *float64
	if ev.Valid {
		ehull = ev.EAboveHull
	}
	r := &store.EvaluationRecord{
		Position: c.Index,
		ID:       ev.ID, Generation: c.Generation, Episode: c.Episode, Island: c.Island, Seed: c.Seed,
		Score: ev.Score, Feasible: ev.Feasible, Stable: ev.Stable, Valid: ev.Valid, Known: ev.Known, Novel: ev.Novel,
		Formula: c.Formula, EAboveHull: ehull, PoolSize: spec.PoolSize, ForJudge: ev.ForJudge(),
		Member: store.Member{
			ID: ev.ID, Formula: c.Formula, Structure: c.Structure, Score: ev.Score, Feasible: ev.Feasible,
			Stable: ev.Stable, Valid: ev.Valid, EAboveHull: ev.EAboveHull, Properties: props, Margins: ev.Margins,
			Reasons: ev.Reasons, Operator: c.Operator, Parents: c.Parents, Seed: c.Seed, Generation: c.Generation,
			Island: c.Island, Rule: c.Rule, Rationale: c.Rationale,
		},
	}
	// The campaign's hull grows from the judge's accepted discoveries
	// only (store.FindOf), not from every candidate below it.
	if ev.Feasible && !c.Seed {
		h := &store.HitDoc{Formula: c.Formula, Score: ev.Score, Novel: ev.Novel, EAboveHull: ev.EAboveHull,
			Margins: make(map[string]float64, len(ev.Margins)), Values: make(map[string]float64, len(ev.Margins))}
		for _, m := range ev.Margins {
			h.Margins[m.Property] = m.Margin
			if v, ok := ev.Properties[m.Property]; ok {
				h.Values[m.Property] = v.Value
			}
		}
		r.Hit = h
	}
	if ev.Valid && ev.SpaceGroup != nil {
		r.SpaceGroup = ev.SpaceGroup.Number
	}
	return r
}

// endEpisode writes the episode's reflection into the memory bank,
// publishes it, and starts the next episode, if any.
func (s *Service) endEpisode(ctx context.Context, spec *messages.CampaignSpec, episode int) error {
	st, err := s.store.State(ctx, spec.ID)
	if err != nil {
		return err
	}
	comps, err := s.store.Compositions(ctx, spec.ID)
	if err != nil {
		return err
	}
	exps, err := s.store.Experiences(ctx, spec.MemoryContext)
	if err != nil {
		return err
	}
	dirs, err := s.store.Directives(ctx, spec.MemoryContext)
	if err != nil {
		return err
	}
	in := reflection.Input{
		Campaign: spec.ID, Context: spec.MemoryContext, Episode: episode, Task: spec.Task,
		StabilityThreshold: spec.StabilityThreshold, Counters: st.Counters,
		EpisodeEvaluated: st.EpisodeBudget(episode, spec.Episodes), Directives: dirs,
	}
	for _, c := range comps {
		in.Compositions = append(in.Compositions, *c)
	}
	sort.Slice(in.Compositions, func(i, j int) bool { return in.Compositions[i].Formula < in.Compositions[j].Formula })
	in.Existing = exps
	if spec.Reflector.Mode == messages.ReflectorLLM {
		log, err := s.store.EvaluationLog(ctx, spec.ID, episode)
		if err != nil {
			return err
		}
		for _, e := range log {
			in.Log = append(in.Log, reflection.Query{Index: e.Index, Formula: e.Formula, EAboveHull: e.EAboveHull,
				Valid: e.Valid, Hit: e.Hit, Stable: e.Stable, Known: e.Known, Novel: e.Novel})
		}
	}
	if episode > 0 {
		if prev, err := s.store.EpisodeStats(ctx, spec.ID, episode-1); err != nil {
			return err
		} else if prev != nil {
			var p discovery.EpisodeStats
			if json.Unmarshal(prev, &p) == nil {
				in.Previous = &p
			}
		}
	}
	if recent, _, err := s.store.Bank(ctx, spec.MemoryContext, spec.ReflectionWindow); err != nil {
		return err
	} else {
		for _, r := range recent {
			in.Recent = append(in.Recent, r.Bullets...)
		}
	}
	out := reflection.Reflect(in)
	stats, err := json.Marshal(out.Stats)
	if err != nil {
		return err
	}
	if err := s.store.SetEpisodeStats(ctx, spec.ID, episode, stats); err != nil {
		return err
	}
	message := fmt.Sprintf("episode %d of %d done: reflection off", episode+1, spec.Episodes)
	if spec.Reflector.Mode != messages.ReflectorOff {
		r, err := s.reflect(ctx, spec, &in, &out)
		if err != nil {
			return err
		}
		message = fmt.Sprintf("episode %d of %d done: %d bullets, %d directives (%s)", episode+1, spec.Episodes, len(r.Bullets), len(r.Directives), r.Mode)
	}
	status := &messages.Status{
		Schema: messages.SchemaVersion, Campaign: spec.ID, State: messages.StateEpisode, Episode: episode,
		Message: message, Counters: st.Counters, At: time.Now().UTC(),
	}
	if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectStatus, spec.ID), status); err != nil {
		return err
	}
	next, err := s.store.AdvanceEpisode(ctx, spec.ID, episode)
	if err != nil || !next {
		return err
	}
	return s.ctl.Start(ctx, spec, fmt.Sprintf("episode%d", episode+1))
}

// reflect writes the episode's reflection into the memory bank and
// publishes it: the rules' output, or the LLM reflector's with reflector
// llm (its exchanges published to the audit trail first).
func (s *Service) reflect(ctx context.Context, spec *messages.CampaignSpec, in *reflection.Input, out *reflection.Output) (*messages.Reflection, error) {
	r := &messages.Reflection{
		Schema: messages.SchemaVersion, Campaign: spec.ID, Context: spec.MemoryContext, Episode: in.Episode,
		Mode: messages.ReflectorRules, At: time.Now().UTC(),
	}
	if spec.Reflector.Mode == messages.ReflectorLLM {
		if s.cfg.LLM == nil {
			r.Fallback = "this reflector has no LLM configured"
		} else {
			lr, err := s.cfg.LLM.Reflect(ctx, spec, in, out)
			if lr != nil {
				for _, p := range lr.Prompts {
					if perr := s.bus.Publish(ctx, messages.Subject(messages.SubjectPrompts, spec.ID), p); perr != nil {
						s.log.Warn("publishing a reflection prompt failed", zap.String("campaign", spec.ID), zap.Error(perr))
					}
				}
			}
			if err != nil {
				return nil, err
			}
			out, r.Dropped, r.RefusedEdits, r.Fallback = &lr.Output, lr.Dropped, lr.RefusedEdits, lr.Fallback
			if lr.Fallback == "" {
				r.Mode = messages.ReflectorLLM
			}
		}
		if r.Fallback != "" {
			s.log.Warn("LLM reflection unusable; the rules reflect instead", zap.String("campaign", spec.ID), zap.Int("episode", in.Episode), zap.String("reason", r.Fallback))
		}
	}
	r.Bullets, r.Directives = out.Bullets, out.Directives
	if _, err := s.store.ApplyReflection(ctx, spec.MemoryContext, r.MsgID(), r, out.Revoke, out.Ops); err != nil {
		return nil, err
	}
	if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectReflections, spec.ID), r); err != nil {
		return nil, err
	}
	return r, nil
}
