package reflector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/control"
	"github.com/crucible-sci/crucible/internal/service/specs"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Reconciliation: when Redis comes back from an earlier state (a
// snapshot, a truncated AOF, a replica promoted while it lagged), the
// streams hold what it forgot. While the state is not reconciled every
// service waits (store.Ready); one reflector replica re-applies, campaign
// by campaign and in the order they happened:
//
//  1. campaigns a proposer started within the lost seconds, created
//     again from their submission and seeds;
//  2. reservations of generations still queued (PROPOSE) or journaled
//     (the proposers' ProposalRecords), where Redis lost them;
//  3. the journaled proposals of generations Redis lost, recorded again
//     with the same candidates, so their candidates stay recorded ones,
//     then lifecycle actions (the CAMPAIGNS stream's control subjects;
//     each applied once by id; a resume's generations count the restored
//     ones in flight);
//  4. evaluations in EVALUATIONS that Redis does not hold, through the
//     reflector's own recording path (each once; follow-ups repeated
//     idempotently);
//  5. the judge's verdicts in DISCOVERIES (each counted once);
//
// then marks the state reconciled for the server's run. Every step is
// idempotent: reconciling a Redis that lost nothing changes nothing.

// Reconciled counts what a reconciliation re-applied.
type Reconciled struct {
	// Recreated are campaigns submitted and started within the seconds
	// Redis lost, created again from their submission and seeds.
	Recreated                                                           int
	Campaigns, Controls, Reservations, Proposals, Evaluations, Verdicts int
	// Refused are evaluations the recording path still refused after the
	// proposals were restored (each logged with its reason).
	Refused int
}

// add adds a campaign's counts (not Campaigns or Recreated).
func (t *Reconciled) add(r Reconciled) {
	t.Controls += r.Controls
	t.Reservations += r.Reservations
	t.Proposals += r.Proposals
	t.Evaluations += r.Evaluations
	t.Verdicts += r.Verdicts
	t.Refused += r.Refused
}

var metricReconciled = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "crucible", Subsystem: "reflector", Name: "reconciled_total",
	Help: "What reconciling Redis with the streams re-applied, by kind.",
}, []string{"kind"})

// reconcileEvery is how often the reflector asks whether Redis needs
// reconciling (a new connection after a restart makes the services ask at
// once; the reflector notices within this).
const reconcileEvery = 500 * time.Millisecond

// reconcileLoop reconciles the state whenever Redis's server run is not
// the one it was reconciled for, until ctx ends.
func (s *Service) reconcileLoop(ctx context.Context) error {
	t := time.NewTicker(reconcileEvery)
	defer t.Stop()
	// The service's store is fenced (its connections to an unreconciled
	// Redis are refused); the reconciliation works through one that is
	// not, on a view of the service that uses it.
	st := s.store.Unfenced()
	if st != s.store {
		defer st.Close()
	}
	u := *s
	u.store, u.specs = st, specs.New(st)
	u.ctl = &control.Control{Bus: s.bus, Store: st, Log: s.log}
	s = &u
	for s.cfg.ReconcileAtStart && ctx.Err() == nil {
		start := time.Now()
		rec, err := s.Reconcile(ctx)
		if err == nil {
			s.log.Info("Redis reconciled with the streams at start", zap.Duration("took", time.Since(start)), zap.Int("campaigns", rec.Campaigns),
				zap.Int("evaluations", rec.Evaluations), zap.Int("proposals", rec.Proposals), zap.Int("verdicts", rec.Verdicts))
			break
		}
		s.log.Warn("reconciling Redis with the streams at start failed; trying again", zap.Error(err))
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	for {
		if err := s.reconcileIfDue(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("reconciling Redis with the streams failed; trying again", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// reconcileIfDue reconciles when the state is due and this replica gets
// the lock.
func (s *Service) reconcileIfDue(ctx context.Context) error {
	run, due, err := s.store.Reconciling(ctx)
	if err != nil || !due {
		return err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	owner := hex.EncodeToString(b[:])
	ok, err := s.store.LockReconcile(ctx, owner, 10*time.Minute)
	if err != nil || !ok {
		return err
	}
	defer func() { _ = s.store.UnlockReconcile(context.WithoutCancel(ctx), owner) }()
	s.log.Warn("Redis was restarted or replaced; reconciling its state with the streams before the services go on", zap.String("run", run))
	start := time.Now()
	rec, err := s.Reconcile(ctx)
	if err != nil {
		return err
	}
	if err := s.store.MarkReconciled(ctx, run); err != nil {
		return err
	}
	s.log.Info("Redis reconciled with the streams", zap.Duration("took", time.Since(start)), zap.Int("campaigns", rec.Campaigns),
		zap.Int("recreated", rec.Recreated), zap.Int("controls", rec.Controls), zap.Int("reservations", rec.Reservations), zap.Int("proposals", rec.Proposals),
		zap.Int("evaluations", rec.Evaluations), zap.Int("verdicts", rec.Verdicts), zap.Int("refused", rec.Refused))
	return nil
}

// Reconcile re-applies, for every campaign Redis knows that has not
// finished, what the streams hold and Redis lacks (see above); a campaign
// a proposer started within the lost seconds is created again first.
func (s *Service) Reconcile(ctx context.Context) (Reconciled, error) {
	var total Reconciled
	recreated, err := s.recreateCampaigns(ctx)
	if err != nil {
		return total, err
	}
	total.Recreated = recreated
	ids, err := s.store.Campaigns(ctx)
	if err != nil {
		return total, err
	}
	for _, id := range ids {
		st, err := s.store.State(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return total, err
		}
		if st.Status == messages.StateCompleted || st.Status == messages.StateRejected {
			continue
		}
		spec, err := s.store.Spec(ctx, id)
		if err != nil {
			return total, err
		}
		r, err := s.reconcileCampaign(ctx, spec)
		if err != nil {
			return total, fmt.Errorf("reconcile %s: %w", id, err)
		}
		total.Campaigns++
		total.add(r)
	}
	for kind, n := range map[string]int{"campaign": total.Recreated, "control": total.Controls, "reservation": total.Reservations, "proposal": total.Proposals,
		"evaluation": total.Evaluations, "verdict": total.Verdicts, "refused": total.Refused} {
		metricReconciled.WithLabelValues(kind).Add(float64(n))
	}
	return total, nil
}

// readAll decodes every message of stream on subject into a T, skipping
// (and logging) any that does not decode: the services dead-lettered
// those when they met them.
func readAll[T any, PT interface {
	*T
	messages.Message
}](ctx context.Context, s *Service, stream, subject string, queue bool) ([]PT, [][]byte, error) {
	var out []PT
	var raw [][]byte
	read := s.bus.ReadSubject
	if queue {
		read = s.bus.ReadQueue
	}
	_, err := read(ctx, stream, subject, func(_ string, data []byte) error {
		m := PT(new(T))
		if err := messages.Decode(data, m); err != nil {
			s.log.Debug("reconcile: skipping a message that does not decode", zap.String("subject", subject), zap.Error(err))
			return nil
		}
		out = append(out, m)
		raw = append(raw, data)
		return nil
	})
	return out, raw, err
}

// controlsOf reads a campaign's lifecycle actions on CAMPAIGNS in the
// order they were sent, with or without a user in their subject, with
// the user each came from ("" for none).
func (s *Service) controlsOf(ctx context.Context, campaign string) ([]*messages.Control, []string, error) {
	var out []*messages.Control
	var senders []string
	_, err := s.bus.ReadSubject(ctx, messages.StreamCampaigns, messages.SubjectControl+".>", func(subject string, data []byte) error {
		if messages.CampaignOfSubject(subject) != campaign {
			return nil
		}
		var m messages.Control
		if err := messages.Decode(data, &m); err != nil {
			s.log.Debug("reconcile: skipping a lifecycle action that does not decode", zap.String("subject", subject), zap.Error(err))
			return nil
		}
		out = append(out, &m)
		senders = append(senders, messages.UserOfSubject(messages.SubjectControl, subject))
		return nil
	})
	return out, senders, err
}

func (s *Service) reconcileCampaign(ctx context.Context, spec *messages.CampaignSpec) (Reconciled, error) {
	var r Reconciled
	c := spec.ID
	log := s.log.With(zap.String("campaign", c))

	// 2. Reservations: the journal's, then the requests still queued.
	records, _, err := readAll[messages.ProposalRecord](ctx, s, messages.StreamCampaigns, messages.Subject(messages.SubjectProposals, c), false)
	if err != nil {
		return r, err
	}
	queued, _, err := readAll[messages.GenerationRequest](ctx, s, messages.StreamPropose, messages.Subject(messages.SubjectPropose, c), true)
	if err != nil {
		return r, err
	}
	byGen := map[int]*messages.ProposalRecord{}
	for _, rec := range records {
		if _, seen := byGen[rec.Generation]; !seen {
			byGen[rec.Generation] = rec
		}
	}
	gens := make([]int, 0, len(byGen))
	for g := range byGen {
		gens = append(gens, g)
	}
	sort.Ints(gens)
	controls, senders, err := s.controlsOf(ctx, c)
	if err != nil {
		return r, err
	}
	var permitted []*messages.Control // what a reservation may follow from
	for i, m := range controls {
		if control.Forbidden(spec, senders[i]) == "" {
			permitted = append(permitted, m)
		}
	}
	st, err := s.store.State(ctx, c)
	if err != nil {
		return r, err
	}
	plausible := plausibility(spec, st.Int("next_gen"), gens, len(queued), permitted)
	reserve := func(g, slots, ep int, trigger string) error {
		if why := plausible(g, slots, trigger); why != "" {
			// Anyone who may publish requests could have queued it: only
			// what a real reservation could have been is restored (an
			// implausible request then fails its check as unreserved).
			log.Warn("reconcile: not restoring an implausible reservation", zap.Int("generation", g), zap.String("trigger", trigger), zap.String("why", why))
			return nil
		}
		ok, err := s.store.RestoreReservation(ctx, c, store.Generation{Generation: g, Slots: slots, Episode: ep}, trigger)
		if ok {
			r.Reservations++
		}
		return err
	}
	for _, g := range gens {
		rec := byGen[g]
		if err := reserve(g, rec.Slots, rec.Episode, rec.Trigger); err != nil {
			return r, err
		}
	}
	for _, q := range queued {
		if err := reserve(q.Generation, q.Slots, q.Episode, q.Trigger); err != nil {
			return r, err
		}
	}

	// 3. Proposals Redis lost, recorded again as journaled.
	have, err := s.store.GenerationRecorded(ctx, c, gens)
	if err != nil {
		return r, err
	}
	var lost []*store.Proposal
	for i, g := range gens {
		if have[i] {
			continue
		}
		rec := byGen[g]
		rejected := rec.Rejected
		lost = append(lost, &store.Proposal{Generation: g, Island: rec.Island, Candidates: rec.Candidates,
			RejectedCandidates: &rejected, RejectedKnown: rec.RejectedKnown, PromptTokens: rec.PromptTokens,
			CompletionTokens: rec.CompletionTokens, LLMCalls: rec.LLMCalls, Fingerprint: messages.Structure.Fingerprint})
	}
	if len(lost) > 0 {
		for i, res := range s.store.RecordProposals(ctx, c, lost) {
			if res.Err != nil {
				return r, res.Err
			}
			if len(res.Published) != len(lost[i].Candidates) {
				log.Error("reconcile: a journaled generation recorded again accepts other candidates than the first time",
					zap.Int("generation", lost[i].Generation), zap.Int("journaled", len(lost[i].Candidates)), zap.Int("accepted", len(res.Published)))
			}
			r.Proposals++
		}
	}

	// 3b. Lifecycle actions, in the order they were sent, once the
	// reservations are back: a resume requests generations up to the
	// campaign's limit in flight, which counts the restored ones.
	for i, m := range controls {
		res, err := s.ctl.Apply(ctx, spec, m, senders[i])
		if err != nil {
			return r, err
		}
		if res.Changed {
			r.Controls++
		}
	}
	if len(controls) > 0 {
		// An extension changes the budget the rest is recorded against.
		if spec, err = s.store.Spec(ctx, c); err != nil {
			return r, err
		}
	}

	// 4. Evaluations Redis does not hold, through the recording path.
	evs, raws, err := readAll[messages.Evaluation](ctx, s, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, c), false)
	if err != nil {
		return r, err
	}
	first := map[string]int{}
	var ids []string
	for i, ev := range evs {
		if _, seen := first[ev.ID]; !seen {
			first[ev.ID] = i
			ids = append(ids, ev.ID)
		}
	}
	recorded, err := s.store.Evaluated(ctx, c, ids)
	if err != nil {
		return r, err
	}
	var missing []int
	for k, id := range ids {
		if !recorded[k] {
			missing = append(missing, first[id])
		}
	}
	if spec.Ordered {
		sort.SliceStable(missing, func(a, b int) bool { return candidateOrder(&evs[missing[a]].Candidate, &evs[missing[b]].Candidate) })
	}
	for len(missing) > 0 {
		var waiting []int
		for lo := 0; lo < len(missing); lo += s.cfg.Batch {
			part := missing[lo:min(lo+s.cfg.Batch, len(missing))]
			ds := make([]*bus.Delivery, len(part))
			for k, i := range part {
				ds[k] = &bus.Delivery{Subject: messages.Subject(messages.SubjectEvaluations, c), Data: raws[i], Stream: messages.StreamEvaluations}
			}
			for k, err := range s.handleBatch(ctx, ds) {
				switch {
				case err == nil:
					r.Evaluations++
				case errors.Is(err, errNotYet):
					waiting = append(waiting, part[k])
				case errors.Is(err, bus.ErrPermanent):
					r.Refused++
					log.Warn("reconcile: an evaluation on the stream is refused", zap.String("candidate", evs[part[k]].ID), zap.Error(err))
				default:
					return r, err
				}
			}
		}
		if len(waiting) == len(missing) {
			// An ordered campaign's evaluation whose predecessor is not on
			// the stream yet: recorded when its turn comes, as usual.
			log.Warn("reconcile: evaluations wait for their turn", zap.Int("waiting", len(waiting)))
			break
		}
		missing = waiting
	}

	// 5. The judge's verdicts.
	for _, subject := range []string{messages.SubjectDiscoveries, messages.SubjectVerdicts} {
		vs, _, err := readAll[messages.Verdict](ctx, s, messages.StreamDiscoveries, messages.Subject(subject, c), false)
		if err != nil {
			return r, err
		}
		for _, v := range vs {
			added, err := s.store.RecordVerdict(ctx, c, v.ID, v.Accepted, store.JudgedClass(&v.Evaluation), store.FindOf(&v.Evaluation, v.Accepted))
			if err != nil {
				return r, err
			}
			if !v.Accepted {
				if err := s.store.RecordJudgeRejection(ctx, c, v.ID); err != nil {
					return r, err
				}
			}
			if added {
				r.Verdicts++
			}
		}
	}
	return r, nil
}

// recreateCampaigns creates again the campaigns a proposer started (its
// "running" status is on the stream, no rejection is) whose state Redis
// lost: the submitted spec, and the seeds the proposer published (found
// on EVALUATIONS once evaluated, in the CANDIDATES queue before), whose
// digests are recorded again so they stay recorded seeds. A campaign
// without seeds is started, as its proposer started it.
func (s *Service) recreateCampaigns(ctx context.Context) (int, error) {
	// The submitter is the subject's, as the proposer took it.
	var subs []*messages.CampaignSpec
	_, err := s.bus.ReadSubject(ctx, messages.StreamCampaigns, messages.SubjectSubmit+".>", func(subject string, data []byte) error {
		var spec messages.CampaignSpec
		if err := messages.Decode(data, &spec); err != nil {
			s.log.Debug("reconcile: skipping a submission that does not decode", zap.String("subject", subject), zap.Error(err))
			return nil
		}
		spec.SubmittedBy = messages.SubmitterOfSubject(subject)
		subs = append(subs, &spec)
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	done := map[string]bool{}
	for _, spec := range subs {
		if done[spec.ID] {
			continue
		}
		done[spec.ID] = true
		if _, err := s.store.Spec(ctx, spec.ID); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return n, err
		}
		statuses, _, err := readAll[messages.Status](ctx, s, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, spec.ID), false)
		if err != nil {
			return n, err
		}
		started, rejected := false, false
		for _, st := range statuses {
			started = started || st.State == messages.StateRunning
			rejected = rejected || st.State == messages.StateRejected
		}
		if !started || rejected {
			continue // never started: its submission is still the proposer's
		}
		seeds := map[int]*messages.Candidate{}
		evs, _, err := readAll[messages.Evaluation](ctx, s, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, spec.ID), false)
		if err != nil {
			return n, err
		}
		for _, ev := range evs {
			if c := ev.Candidate; c.Seed && seeds[c.Index] == nil {
				seeds[c.Index] = &c
			}
		}
		queued, _, err := readAll[messages.Candidate](ctx, s, messages.StreamCandidates, messages.Subject(messages.SubjectCandidates, spec.ID), true)
		if err != nil {
			return n, err
		}
		for _, c := range queued {
			if c.Seed && seeds[c.Index] == nil {
				seeds[c.Index] = c
			}
		}
		list := make([]*messages.Candidate, 0, len(seeds))
		for _, c := range seeds {
			list = append(list, c)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Index < list[j].Index })
		if _, err := s.store.CreateCampaign(ctx, spec, len(list)); err != nil {
			return n, err
		}
		if err := s.store.RecordSeeds(ctx, spec.ID, list); err != nil {
			return n, err
		}
		if len(list) == 0 {
			if err := s.ctl.Start(ctx, spec, "start"); err != nil {
				return n, err
			}
		}
		s.log.Warn("reconcile: a campaign Redis lost was created again from its submission", zap.String("campaign", spec.ID), zap.Int("seeds", len(list)))
		n++
	}
	return n, nil
}

// plausibility returns the check a reservation to restore must pass
// (the reason it fails, "" when it passes): its trigger is one the
// services use — after/<g> or refill/<g> of a generation Redis or the
// journal knows, start/<k>, episode<n>/<k> or <action id>/<k> of an
// action on the stream, with k below the campaign's limit in flight — its
// slots at most the batch size, and its number within reach of the
// generations known (next, the journal's, the queued requests'): a
// request queued by someone who may publish requests but reserved
// nothing does not become a reservation.
func plausibility(spec *messages.CampaignSpec, next int, journaled []int, queued int, controls []*messages.Control) func(g, slots int, trigger string) string {
	known := map[int]bool{}
	last := next - 1
	for _, g := range journaled {
		known[g] = true
		last = max(last, g)
	}
	actions := map[string]bool{}
	for _, c := range controls {
		actions[c.ID] = true
	}
	reach := last + queued + spec.MaxInFlight + 1
	return func(g, slots int, trigger string) string {
		switch {
		case slots < 1 || slots > spec.BatchSize:
			return fmt.Sprintf("%d slots, the batch is %d", slots, spec.BatchSize)
		case g < 0 || g > reach:
			return fmt.Sprintf("generation %d beyond the %d known", g, last)
		}
		at := strings.LastIndexByte(trigger, '/')
		if at < 0 {
			return "not a trigger the services use"
		}
		head, n := trigger[:at], trigger[at+1:]
		k, err := strconv.Atoi(n)
		if err != nil || k < 0 {
			return "not a trigger the services use"
		}
		switch {
		case head == "after" || head == "refill":
			if k >= next && !known[k] {
				return fmt.Sprintf("generation %d is not known", k)
			}
			return ""
		case k >= spec.MaxInFlight:
			return fmt.Sprintf("request %d of at most %d at once", k, spec.MaxInFlight)
		case head == "start" || actions[head]:
			return ""
		case strings.HasPrefix(head, "episode"):
			if _, err := strconv.Atoi(strings.TrimPrefix(head, "episode")); err == nil {
				return ""
			}
		}
		return "not a trigger the services use"
	}
}
