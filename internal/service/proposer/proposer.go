// Package proposer is the service that turns campaigns into candidates. It
// consumes submissions (validate, store the campaign, seed the islands with
// known materials, start the first generations) and generation requests
// (choose an island by Boltzmann sampling, show the generator the island's
// best and worst, check and deduplicate what it proposes, publish the
// candidates). Any number of replicas share its two durable consumers.
package proposer

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/control"
	"github.com/crucible-sci/crucible/internal/service/specs"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/island"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Config tunes a proposer replica.
type Config struct {
	// Provided are the properties plug-in model servers provide (the data
	// directory's registry); a campaign constraining a property neither
	// Crucible nor these provide is rejected.
	Provided []string
	// Generators by kind ("evolve", "llm"); a campaign asking for a kind
	// that is not configured is rejected at submission.
	Generators map[string]Generator
	// Seeder picks the seed materials; nil starts with empty islands.
	Seeder Seeder
	// Known reports whether a reduced formula is in the reference data.
	Known func(formula string) bool
	// RuleCount is the number of chemistry rules the generators know
	// (rules are sampled from 0..RuleCount-1).
	RuleCount int
	// Concurrency is the number of generation requests handled at once,
	// beyond those of generators that say how many they serve at once
	// (Concurrent): their calls add to it, so that generations waiting on
	// an LLM endpoint do not take every handler from the others.
	Concurrency int
	// MaxAttempts is how many deliveries of a generation request may fail
	// (generator errors) before the generation is recorded as empty with
	// the reason, so the campaign moves on instead of stalling.
	MaxAttempts  int
	DrainTimeout time.Duration
	Checks       CheckOptions
	// Limits are the operator's quotas, checked before a campaign is
	// created.
	Limits Limits
}

// Service is a proposer replica.
type Service struct {
	bus   *bus.Bus
	store *store.Store
	log   *zap.Logger
	cfg   Config
	ctl   *control.Control
	specs *specs.Cache
	rec   *recorder
}

var (
	metricCandidates = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "proposer", Name: "candidates_total",
		Help: "Candidates proposed, by outcome (published, rejected, duplicate).",
	}, []string{"outcome"})
	metricGenerate = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "proposer", Name: "generate_seconds",
		Help: "Time a generator takes for one generation, by generator.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 16),
	}, []string{"generator"})
)

// Collectors are the proposer's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricCandidates, metricGenerate, metricRecordBatch}
}

// New builds a proposer replica.
func New(b *bus.Bus, s *store.Store, log *zap.Logger, cfg Config) *Service {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 8
	}
	for _, g := range cfg.Generators {
		if c, ok := g.(Concurrent); ok {
			cfg.Concurrency += c.Concurrency()
		}
	}
	if cfg.MaxAttempts < 1 {
		cfg.MaxAttempts = 5
	}
	if cfg.Known == nil {
		cfg.Known = func(string) bool { return false }
	}
	return &Service{bus: b, store: s, log: log, cfg: cfg, ctl: &control.Control{Bus: b, Store: s, Log: log}, specs: specs.New(s),
		rec: newRecorder(s, recordWait)}
}

// Run consumes submissions and generation requests until ctx is cancelled.
func (s *Service) Run(ctx context.Context) error {
	submit, err := messages.ConsumerByName(messages.ConsumerProposerSubmit)
	if err != nil {
		return err
	}
	generate, err := messages.ConsumerByName(messages.ConsumerProposer)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() {
		errc <- s.bus.Run(ctx, submit, bus.RunOptions{Concurrency: 2, DrainTimeout: s.cfg.DrainTimeout, Service: "proposer", Ready: s.store.Ready}, s.handleSubmit)
	}()
	go func() {
		errc <- s.bus.Run(ctx, generate, bus.RunOptions{Concurrency: s.cfg.Concurrency, DrainTimeout: s.cfg.DrainTimeout, Service: "proposer", Ready: s.store.Ready}, s.handleGenerate)
	}()
	return errors.Join(<-errc, <-errc)
}

// handleSubmit validates and starts a campaign. A spec that is not valid is
// rejected with a status event that says why (and the message is
// acknowledged: resubmitting the same spec cannot fix it).
func (s *Service) handleSubmit(ctx context.Context, d *bus.Delivery) error {
	var spec messages.CampaignSpec
	if err := bus.Decode(d, &spec); err != nil {
		s.reject(ctx, d.Campaign(), err)
		return err
	}
	// Who submitted it is what the server let publish the subject.
	spec.SubmittedBy = messages.SubmitterOfSubject(d.Subject)
	log := s.log.With(zap.String("campaign", spec.ID))
	gen, ok := s.cfg.Generators[spec.Generator.Kind]
	if !ok {
		err := fmt.Errorf("generator %q is not configured on this proposer", spec.Generator.Kind)
		s.reject(ctx, spec.ID, err)
		return nil
	}
	if sc, ok := gen.(SpecChecker); ok {
		if err := sc.CheckSpec(&spec); err != nil {
			s.reject(ctx, spec.ID, err)
			return nil
		}
	}
	if err := spec.Task.CheckProviders(s.cfg.Provided); err != nil {
		s.reject(ctx, spec.ID, err)
		return nil
	}
	var seeds []Proposed
	if s.cfg.Seeder != nil {
		var err error
		if seeds, err = s.cfg.Seeder.Seeds(ctx, &spec); err != nil {
			return fmt.Errorf("seeds of %s: %w", spec.ID, err)
		}
	}
	created, err := s.create(ctx, &spec, len(seeds))
	if errors.Is(err, ErrLimit) {
		s.reject(ctx, spec.ID, err)
		return nil
	}
	if err != nil {
		return err
	}
	if created {
		log.Info("campaign started", zap.String("task", spec.Task.Name), zap.Int("budget", spec.Budget), zap.Int("seeds", len(seeds)))
		status := &messages.Status{Schema: messages.SchemaVersion, Campaign: spec.ID, State: messages.StateRunning,
			Message: fmt.Sprintf("%d seed materials on %d islands", len(seeds), spec.Islands), At: time.Now().UTC()}
		if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectStatus, spec.ID), status); err != nil {
			return err
		}
	}
	// Seeds (republished harmlessly on a redelivery: same ids) are
	// evaluated like candidates; when the last one is recorded the
	// reflector starts the first generations.
	cands := make([]*messages.Candidate, len(seeds))
	for i, p := range seeds {
		c := s.candidate(&spec, p, -1, i%spec.Islands, 0)
		c.ID, c.Seed, c.Index = messages.SeedCandidateID(spec.ID, i), true, i
		c.Operator = "seed"
		if spec.Ordered {
			// Seeds are judged against the reference phases alone.
			c.HullFinds = new(int)
		}
		cands[i] = c
	}
	// The seeds' digests are recorded before they are published: the
	// evaluators and the reflector take only the recorded seeds.
	if err := s.store.RecordSeeds(ctx, spec.ID, cands); err != nil {
		return err
	}
	for _, c := range cands {
		if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectCandidates, spec.ID), c); err != nil {
			return err
		}
	}
	if len(seeds) == 0 {
		return s.ctl.Start(ctx, &spec, "start")
	}
	return nil
}

func (s *Service) reject(ctx context.Context, campaign string, reason error) {
	if messages.ValidateCampaignID(campaign) != nil {
		return // the dead letter records it
	}
	status := &messages.Status{Schema: messages.SchemaVersion, Campaign: campaign, State: messages.StateRejected, Message: reason.Error(), At: time.Now().UTC()}
	if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectStatus, campaign), status); err != nil {
		s.log.Error("publishing a rejection failed", zap.String("campaign", campaign), zap.Error(err))
	}
	s.log.Warn("campaign rejected", zap.String("campaign", campaign), zap.Error(reason))
}

// generationSeed derives a generation's random seed from the campaign's.
func generationSeed(spec *messages.CampaignSpec, g int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%d", spec.Seed, spec.ID, g)
	return h.Sum64()
}

func (s *Service) handleGenerate(ctx context.Context, d *bus.Delivery) error {
	var req messages.GenerationRequest
	if err := bus.Decode(d, &req); err != nil {
		return err
	}
	// Proposals finished while this one is generated wait for it, to be
	// recorded together.
	ticket := s.rec.begin(req.Campaign)
	defer ticket.end()
	spec, err := s.specs.Get(ctx, req.Campaign)
	if err != nil {
		return fmt.Errorf("generation %d: %w", req.Generation, err)
	}
	if err := s.verifyRequest(ctx, d, &req); err != nil {
		if errors.Is(err, errSkip) {
			return nil
		}
		return err
	}
	log := s.log.With(zap.String("campaign", req.Campaign), zap.Int("episode", req.Episode), zap.Int("generation", req.Generation))
	done, stored, err := s.store.GenerationStatus(ctx, req.Campaign, req.Generation)
	switch {
	case err != nil || done:
		return err // done: proposed and evaluated already, a late redelivery
	case stored != nil:
		// Proposed before a crash: publish exactly what was recorded.
		return s.publish(ctx, spec, &req, record(&req, stored, nil), stored, log)
	}

	if spec.Ordered {
		s.awaitJudge(ctx, req.Campaign, log)
	}
	in, err := s.input(ctx, spec, &req)
	if err != nil {
		return err
	}
	gen := s.cfg.Generators[spec.Generator.Kind]
	start := time.Now()
	out, gerr := gen.Propose(ctx, in)
	metricGenerate.WithLabelValues(gen.Name()).Observe(time.Since(start).Seconds())
	if out != nil {
		s.publishPrompts(ctx, d, out.Prompts, log)
	}
	if gerr != nil {
		exhausted := errors.Is(gerr, ErrExhausted)
		fields := append([]zap.Field{zap.Error(gerr), zap.Uint64("delivery", d.Deliveries)}, errorFields(gerr)...)
		if !exhausted && d.Deliveries < uint64(s.cfg.MaxAttempts) {
			log.Warn("generator failed; the request will be retried", fields...)
			// A service that said when to come back (Retry-After) is
			// asked again no sooner.
			var later interface{ RetryDelay() time.Duration }
			if errors.As(gerr, &later) && later.RetryDelay() > 0 {
				return bus.RetryAfter(gerr, later.RetryDelay())
			}
			return gerr
		}
		// Give up on this generation, as data: it is recorded empty with
		// the reason, its slots go back to the budget, and a new
		// generation is requested; repeated failures end the campaign as
		// exhausted instead of stalling it. A generator that can do no
		// more for the campaign ends it at once.
		code := "generator_failed"
		switch {
		case exhausted:
			code = "generator_exhausted"
			if err := s.store.MarkExhausted(ctx, req.Campaign, gerr.Error()); err != nil {
				return err
			}
			log.Warn("generator exhausted; the campaign ends when its generations in flight are done", fields...)
		case errors.Is(gerr, ErrUnreachable):
			// Unreachable on every attempt: a new generation would meet
			// the same endpoint.
			code = "generator_unreachable"
			reason := fmt.Sprintf("%v; %d attempts of this generation failed", gerr, d.Deliveries)
			if err := s.store.MarkExhausted(ctx, req.Campaign, reason); err != nil {
				return err
			}
			log.Warn("generator unreachable on every attempt; the campaign ends when its generations in flight are done", fields...)
		default:
			log.Error("generator failed on every attempt; recording an empty generation", fields...)
		}
		failed := &Output{Rejected: []Rejected{{Reasons: []messages.Reason{{Code: code, Detail: gerr.Error()}}}}}
		if out != nil {
			failed.PromptTokens, failed.CompletionTokens, failed.Calls = out.PromptTokens, out.CompletionTokens, out.Calls
		}
		out = failed
	}
	p := &store.Proposal{Generation: req.Generation, Island: in.Island,
		PromptTokens: out.PromptTokens, CompletionTokens: out.CompletionTokens, LLMCalls: out.Calls,
		Fingerprint: messages.Structure.Fingerprint}
	// Evaluations so far of the formulas the memory bank caps (the only
	// counts the checks read).
	var capped []string
	for _, d := range in.Directives {
		if d.Kind == messages.DirectiveCapComposition {
			capped = append(capped, d.Formula)
		}
	}
	counts, err := s.store.CompositionCounts(ctx, req.Campaign, capped...)
	if err != nil {
		return err
	}
	checker := newChecker(spec, in.Directives, counts, s.cfg.Known, s.cfg.Checks)
	// An ordered campaign's candidates are judged against the finds
	// recorded before their proposal: with one generation at a time, those
	// of every earlier generation, whenever they are evaluated.
	var hullFinds *int
	if spec.Ordered {
		n, err := s.store.FindCount(ctx, req.Campaign)
		if err != nil {
			return err
		}
		hullFinds = &n
	}
	// Every rejected proposal is a generated candidate (LLEMA's
	// denominators) but a generator's failure to answer; memorisation is
	// counted before the checks filter anything.
	rejected := 0
	for i, prop := range out.Candidates {
		if len(p.Candidates) >= req.Slots {
			break
		}
		c := s.candidate(spec, prop, req.Generation, in.Island, i)
		c.Episode, c.HullFinds = req.Episode, hullFinds
		if reasons := checker.check(prop, c); len(reasons) > 0 {
			p.Rejected = append(p.Rejected, rejectedMember(c, prop, reasons))
			metricCandidates.WithLabelValues("rejected").Inc()
			rejected++
			if c.Known {
				p.RejectedKnown++
			}
			continue
		}
		p.Candidates = append(p.Candidates, c)
	}
	for _, r := range out.Rejected {
		c := s.candidate(spec, r.Proposed, req.Generation, in.Island, -1)
		p.Rejected = append(p.Rejected, rejectedMember(c, r.Proposed, r.Reasons))
		metricCandidates.WithLabelValues("rejected").Inc()
		if gerr == nil {
			rejected++
			if c.Known {
				p.RejectedKnown++
			}
		}
	}
	p.RejectedCandidates = &rejected
	accepted, err := ticket.record(ctx, p)
	if err != nil {
		return err
	}
	metricCandidates.WithLabelValues("duplicate").Add(float64(len(p.Candidates) - len(accepted)))
	rec := record(&req, accepted, p)
	rec.Island = in.Island
	return s.publish(ctx, spec, &req, rec, accepted, log)
}

// record is the journal entry of a recorded generation (p: the proposal
// as recorded, nil when only the accepted candidates are known). Its
// rejected counts are those the store added: the proposal's rejections
// and the duplicates it dropped.
func record(req *messages.GenerationRequest, accepted []*messages.Candidate, p *store.Proposal) *messages.ProposalRecord {
	r := &messages.ProposalRecord{Schema: messages.SchemaVersion, Campaign: req.Campaign, Episode: req.Episode,
		Generation: req.Generation, Slots: req.Slots, Trigger: req.Trigger, Candidates: accepted}
	if len(accepted) > 0 {
		r.Island = accepted[0].Island
	}
	if p == nil {
		return r
	}
	r.Counts = true
	r.Rejected, r.RejectedKnown = len(p.Rejected), p.RejectedKnown
	if p.RejectedCandidates != nil {
		r.Rejected = *p.RejectedCandidates
	}
	kept := make(map[string]bool, len(accepted))
	for _, c := range accepted {
		kept[c.ID] = true
	}
	for _, c := range p.Candidates {
		if !kept[c.ID] {
			r.Rejected++
			if c.Known {
				r.RejectedKnown++
			}
		}
	}
	r.PromptTokens, r.CompletionTokens, r.LLMCalls = p.PromptTokens, p.CompletionTokens, p.LLMCalls
	return r
}

// errorFields are the log fields an error describes itself with (an LLM
// endpoint's failure: the endpoint, the kind, the HTTP status).
func errorFields(err error) []zap.Field {
	var f interface{ LogFields() []zap.Field }
	if errors.As(err, &f) {
		return f.LogFields()
	}
	return nil
}

// publishPrompts publishes the audit records of a generator's LLM
// exchanges. A record that cannot be published is logged, not retried by
// failing the generation: asking the model again would cost more than the
// record is worth.
// judgeWait bounds how long an ordered campaign's generation waits for the
// judge (awaitJudge).
const judgeWait = time.Minute

// awaitJudge waits until the judge has weighed every evaluation recorded
// for it: an ordered campaign's candidates are judged against the finds of
// every earlier generation (messages.Candidate.HullFinds), and those come
// from the judge's verdicts. A judge that does not catch up within
// judgeWait (down, or far behind) is logged and not waited for: the
// campaign goes on, and that run is not reproducible.
func (s *Service) awaitJudge(ctx context.Context, campaign string, log *zap.Logger) {
	deadline := time.Now().Add(judgeWait)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		n, err := s.store.JudgePending(ctx, campaign)
		if err != nil || n == 0 {
			return
		}
		if time.Now().After(deadline) {
			log.Warn("the judge has not weighed the earlier generations' hits; proposing without their finds", zap.Int("pending", n))
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

func (s *Service) publishPrompts(ctx context.Context, d *bus.Delivery, prompts []*messages.Prompt, log *zap.Logger) {
	for _, p := range prompts {
		p.Attempt = max(int(d.Deliveries), 1)
		if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectPrompts, p.Campaign), p); err != nil {
			log.Warn("publishing an LLM prompt record failed", zap.Int("index", p.Index), zap.Error(err))
		}
	}
}

// publish sends a generation's candidates, then keeps the campaign moving
// when the generation fell short of its slots.
func (s *Service) publish(ctx context.Context, spec *messages.CampaignSpec, req *messages.GenerationRequest, rec *messages.ProposalRecord, cands []*messages.Candidate, log *zap.Logger) error {
	// The journal entry goes first: a candidate on the stream is always
	// one a record accounts for, whatever Redis later forgets.
	if err := s.bus.Publish(ctx, messages.Subject(messages.SubjectProposals, spec.ID), rec); err != nil {
		return err
	}
	out := make([]bus.Outgoing, len(cands))
	for i, c := range cands {
		out[i] = bus.Outgoing{Subject: messages.Subject(messages.SubjectCandidates, spec.ID), Message: c}
	}
	if err := errors.Join(s.bus.PublishAll(ctx, out)...); err != nil {
		return err
	}
	metricCandidates.WithLabelValues("published").Add(float64(len(cands)))
	log.Debug("generation proposed", zap.Int("candidates", len(cands)), zap.Int("slots", req.Slots))
	// A generation short of its slots gave them back; another is
	// requested for them at once, unless the campaign is ordered, where
	// the next generation waits for this one's evaluations (and takes
	// the slots back then), unless there are none.
	if len(cands) < req.Slots && (!spec.Ordered || len(cands) == 0) {
		if _, err := s.ctl.Request(ctx, spec, fmt.Sprintf("refill/%d", req.Generation)); err != nil {
			return err
		}
	}
	if len(cands) == 0 {
		st, err := s.store.State(ctx, spec.ID)
		if err != nil {
			return err
		}
		if messages.EndsWhenDrained(st.Status) && st.Inflight == 0 {
			return s.ctl.Finish(ctx, spec)
		}
	}
	return nil
}

// MaxExperiences bounds the memory-bank lessons a generation is shown.
const MaxExperiences = 8

// input gathers what the generator sees: the island chosen by Boltzmann
// sampling over mean scores (LLEMA §2.4), its top-k pools, the memory.
func (s *Service) input(ctx context.Context, spec *messages.CampaignSpec, req *messages.GenerationRequest) (*Input, error) {
	seed := generationSeed(spec, req.Generation)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	stats, err := s.store.Islands(ctx, spec.ID, spec.Islands)
	if err != nil {
		return nil, err
	}
	scores := make([]float64, len(stats))
	counts := make([]int, len(stats))
	total := 0
	for i, st := range stats {
		scores[i], counts[i] = st.MeanScore, st.N
		total += st.N
	}
	isl, err := island.Select(rng, scores, counts, total)
	if err != nil {
		return nil, err
	}
	in := &Input{Spec: spec, Request: req, Island: isl, Seed: seed}
	view, err := s.store.Island(ctx, spec.ID, isl, spec.TopK)
	if err != nil {
		return nil, err
	}
	in.Successes, in.Failures, in.Rejects = view.Successes, view.Failures, view.Rejects
	// With the reflector off the campaign learns nothing and reads no
	// bank: neither its own reflections nor other campaigns'.
	if spec.Reflector.Mode != messages.ReflectorOff {
		if in.Reflections, in.Directives, err = s.store.Bank(ctx, spec.MemoryContext, spec.ReflectionWindow); err != nil {
			return nil, err
		}
		lessons, err := s.store.Experiences(ctx, spec.MemoryContext)
		if err != nil {
			return nil, err
		}
		var formulas []string
		for _, m := range append(append([]store.Member(nil), in.Successes...), in.Failures...) {
			formulas = append(formulas, m.Formula)
		}
		in.Experiences = reflection.Relevant(lessons, formulas, MaxExperiences)
	}
	// LLEMA App. D.2: rules join the prompt after generation 0.
	if req.Generation > 0 && s.cfg.RuleCount > 0 {
		n := min(spec.RulesPerPrompt, s.cfg.RuleCount)
		in.Rules = rng.Perm(s.cfg.RuleCount)[:n]
	}
	return in, nil
}

// candidate builds the wire candidate for a proposal.
func (s *Service) candidate(spec *messages.CampaignSpec, p Proposed, g, isl, index int) *messages.Candidate {
	c := &messages.Candidate{
		Schema: messages.SchemaVersion, Campaign: spec.ID, Generation: max(g, 0), Index: max(index, 0), Island: isl,
		Parents: p.Parents, Operator: p.Operator, Rule: p.Rule, Rationale: p.Rationale,
		Generator: spec.Generator.Kind, ProposedAt: time.Now().UTC(),
	}
	c.ID = messages.CandidateID(spec.ID, c.Generation, c.Index)
	if p.Structure != nil {
		c.Structure = messages.StructureOf(p.Structure)
		c.Formula = c.Structure.Formula
		c.Known = s.cfg.Known(c.Formula)
		if p.Formula != "" {
			c.Structure.Formula = p.Formula
		}
	}
	if c.Operator == "" {
		c.Operator = spec.Generator.Kind
	}
	return c
}

func rejectedMember(c *messages.Candidate, p Proposed, reasons []messages.Reason) store.Member {
	m := store.Member{ID: c.ID, Formula: c.Formula, Structure: c.Structure, Score: -1, Reasons: reasons,
		Operator: c.Operator, Parents: c.Parents, Generation: c.Generation, Island: c.Island, Rule: p.Rule, Rationale: p.Rationale}
	if m.Formula == "" {
		m.Formula = p.Formula
	}
	return m
}
