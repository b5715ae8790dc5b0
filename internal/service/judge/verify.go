package judge

import (
	"context"
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// verify decides whether an evaluation is judged, trusting neither its
// flags nor that it comes from an evaluator:
//
//   - feasibility, stability (with the hull-outlier rule) and novelty are
//     derived again from the evaluation's values and the campaign's task
//     (evaluator.CheckFlags); flags that disagree with the values are a
//     permanent failure (a dead letter with both);
//   - an evaluation that is not a stable (or outlying) feasible proposed
//     candidate by its values is acknowledged unjudged (judge false);
//   - an evaluation the reflector recorded must be the one it recorded
//     for its candidate (the digest of its message): another evaluation
//     of the candidate is a permanent failure; one not recorded yet must
//     be of a candidate the proposer recorded, with the same content
//     (else a permanent failure). It is judged at once rather than after
//     the reflector: an ordered campaign's next generation reads the
//     finds the judge appends, and a candidate gets one verdict whichever
//     of its evaluations comes first.
func (s *Service) verify(ctx context.Context, d *bus.Delivery, spec *messages.CampaignSpec, ev *messages.Evaluation) (judge bool, err error) {
	if err := evaluator.CheckFlags(spec, ev); err != nil {
		return false, bus.Permanent(err)
	}
	if !ev.ForJudge() {
		return false, nil
	}
	if ev.ID != ev.Candidate.ID || ev.Campaign != ev.Candidate.Campaign {
		return false, bus.Permanent(fmt.Errorf("%w: evaluation %s of campaign %s names candidate %s of campaign %s",
			store.ErrForged, ev.ID, ev.Campaign, ev.Candidate.ID, ev.Candidate.Campaign))
	}
	checkRecorded := func() (bool, error) {
		digest, recorded, err := s.store.EvaluationDigest(ctx, ev.Campaign, ev.ID)
		if err != nil || !recorded {
			return false, err
		}
		// An evaluation recorded before digests were kept has none.
		if digest != "" && digest != messages.DigestBytes(d.Data) {
			return false, bus.Permanent(fmt.Errorf("%w: evaluation %s differs from the evaluation of the candidate the reflector recorded", store.ErrForged, ev.ID))
		}
		return true, nil
	}
	if recorded, err := checkRecorded(); recorded || err != nil {
		return recorded, err
	}
	_, err = s.store.VerifyCandidate(ctx, &ev.Candidate)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrClosed):
		// The reflector may have recorded the evaluation, and completed
		// the campaign with it, since it was looked for: the record
		// comes before the completion, so it is there now if the
		// evaluation was the campaign's.
		if recorded, rerr := checkRecorded(); recorded || rerr != nil {
			return recorded, rerr
		}
		return false, bus.Permanent(err)
	case errors.Is(err, store.ErrForged):
		return false, bus.Permanent(err)
	case errors.Is(err, store.ErrNotFound):
		return false, fmt.Errorf("evaluation %s: %w", ev.ID, s.specs.Missing(ev.Campaign, err))
	}
	return false, err
}
