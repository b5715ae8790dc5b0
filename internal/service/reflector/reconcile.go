package reflector

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Reconciliation: when Redis comes back from an earlier state (a
// snapshot, a truncated AOF, a replica promoted while it lagged), the
// streams hold what it forgot. While the state is not reconciled every
// service waits (store.Ready); one reflector replica re-applies, campaign
// by campaign and in the order they happened:
//
//  1. lifecycle actions (the CAMPAIGNS stream's control subjects; each is
//     applied once by id);
//  2. reservations of generations still queued (PROPOSE) or journaled
//     (the proposers' ProposalRecords), where Redis lost them;
//  3. the journaled proposals of generations Redis lost, recorded again
//     with the same candidates, so their candidates stay recorded ones;
//  4. evaluations in EVALUATIONS that Redis does not hold, through the
//     reflector's own recording path (each once; follow-ups repeated
//     idempotently);
//  5. the judge's verdicts in DISCOVERIES (each counted once);
//
// then marks the state reconciled for the server's run. Every step is
// idempotent: reconciling a Redis that lost nothing changes nothing.

// Reconciled counts what a reconciliation re-applied.
type Reconciled struct {
	Campaigns, Controls, Reservations, Proposals, Evaluations, Verdicts int
	// Refused are evaluations the recording path still refused after the
	// proposals were restored (each logged with its reason).
	Refused int
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
		zap.Int("controls", rec.Controls), zap.Int("reservations", rec.Reservations), zap.Int("proposals", rec.Proposals),
		zap.Int("evaluations", rec.Evaluations), zap.Int("verdicts", rec.Verdicts), zap.Int("refused", rec.Refused))
	return nil
}

// Reconcile re-applies, for every campaign Redis knows that has not
// finished, what the streams hold and Redis lacks (see above). A campaign
// Redis does not know at all (submitted within the lost seconds) is not
// recreated: its submission must be sent again.
func (s *Service) Reconcile(ctx context.Context) (Reconciled, error) {
	var total Reconciled
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
		total.Controls += r.Controls
		total.Reservations += r.Reservations
		total.Proposals += r.Proposals
		total.Evaluations += r.Evaluations
		total.Verdicts += r.Verdicts
		total.Refused += r.Refused
	}
	for kind, n := range map[string]int{"control": total.Controls, "reservation": total.Reservations, "proposal": total.Proposals,
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

func (s *Service) reconcileCampaign(ctx context.Context, spec *messages.CampaignSpec) (Reconciled, error) {
	var r Reconciled
	c := spec.ID
	log := s.log.With(zap.String("campaign", c))

	// 1. Lifecycle actions, in the order they were sent.
	controls, _, err := readAll[messages.Control](ctx, s, messages.StreamCampaigns, messages.Subject(messages.SubjectControl, c), false)
	if err != nil {
		return r, err
	}
	for _, m := range controls {
		res, err := s.ctl.Apply(ctx, spec, m)
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
	reserve := func(g, slots, ep int, trigger string) error {
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
