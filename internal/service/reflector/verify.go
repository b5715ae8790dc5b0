package reflector

import (
	"context"
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// verifyAll checks the provenance of a batch's evaluations (nil ones are
// skipped) before they are recorded, in one store round trip: each must
// be of a candidate the proposer recorded, with the same content
// (store.VerifyCandidates), in a campaign that accepts work, and claim
// the flags its values give (evaluator.CheckFlags): an evaluation counted
// for the judge that the judge refuses would leave an ordered campaign's
// next generation waiting for a verdict that never comes. Otherwise
// errs[i] is a permanent failure: a dead letter with the reason, nothing
// counted. An evaluation of a complete generation, or of a campaign that
// accepts no more work, passes only when it is the one recorded already
// (its follow-ups are repeated idempotently).
func (s *Service) verifyAll(ctx context.Context, evs []*messages.Evaluation, digests []string, errs []error) {
	var todo []*messages.Candidate
	var at []int
	for i, ev := range evs {
		if ev == nil {
			continue
		}
		if ev.ID != ev.Candidate.ID || ev.Campaign != ev.Candidate.Campaign {
			errs[i] = bus.Permanent(fmt.Errorf("%w: evaluation %s of campaign %s names candidate %s of campaign %s",
				store.ErrForged, ev.ID, ev.Campaign, ev.Candidate.ID, ev.Candidate.Campaign))
			continue
		}
		// A campaign that cannot be read is the store check's to report.
		if spec, err := s.specs.Get(ctx, ev.Campaign); err == nil {
			if err := evaluator.CheckFlags(spec, ev); err != nil {
				errs[i] = bus.Permanent(err)
				continue
			}
		}
		todo = append(todo, &ev.Candidate)
		at = append(at, i)
	}
	if len(todo) == 0 {
		return
	}
	chks, verrs := s.store.VerifyCandidates(ctx, todo)
	for k, c := range todo {
		i, err := at[k], verrs[k]
		switch {
		case err == nil && !chks[k].Done:
		case err == nil, errors.Is(err, store.ErrClosed):
			// A complete generation holds only recorded candidates; a
			// closed campaign counts nothing more.
			digest, recorded, derr := s.store.EvaluationDigest(ctx, c.Campaign, c.ID)
			switch {
			case derr != nil:
				errs[i] = derr
			case recorded && otherThanRecorded(store.Outcome{Duplicate: true, Digest: digest}, digests[i]):
				errs[i] = errOther(evs[i])
			case recorded:
			case err == nil:
				errs[i] = bus.Permanent(fmt.Errorf("%w: candidate %s: generation %d is complete", store.ErrForged, c.ID, c.Generation))
			default:
				errs[i] = bus.Permanent(err)
			}
		case errors.Is(err, store.ErrForged):
			errs[i] = bus.Permanent(err)
		case errors.Is(err, store.ErrNotFound):
			errs[i] = fmt.Errorf("evaluation %s: %w", c.ID, s.specs.Missing(c.Campaign, err))
		default:
			errs[i] = err
		}
	}
}
