package judge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// errNotRecorded: the reflector has not recorded the evaluation yet; the
// judge waits for it (bus.Later), so that it judges the evaluation that
// was counted and no other.
var errNotRecorded = errors.New("evaluation not recorded by the reflector yet")

// notRecordedDelay is how soon an evaluation waiting for the reflector is
// delivered again (the bus's backoff lengthens it).
const notRecordedDelay = 200 * time.Millisecond

// verify decides whether an evaluation is judged, trusting neither its
// flags nor that it comes from an evaluator:
//
//   - feasibility, stability (with the hull-outlier rule) and novelty are
//     derived again from the evaluation's values and the campaign's task
//     (evaluator.Rederive); flags that disagree with the values are a
//     permanent failure (a dead letter with both);
//   - an evaluation that is not a stable (or outlying) feasible proposed
//     candidate by its values is acknowledged unjudged (judge false);
//   - the evaluation must be the one the reflector recorded for its
//     candidate (the digest of its message), and the candidate one the
//     proposer recorded: another evaluation of the candidate, or one of a
//     candidate no proposer recorded, is a permanent failure; one not
//     recorded yet waits.
func (s *Service) verify(ctx context.Context, d *bus.Delivery, spec *messages.CampaignSpec, ev *messages.Evaluation) (judge bool, err error) {
	re := evaluator.Rederive(spec, ev)
	if re.Feasible != ev.Feasible || re.Stable != ev.Stable || re.HullOutlier != ev.HullOutlier || re.Novel != ev.Novel {
		return false, bus.Permanent(fmt.Errorf("%w: evaluation %s claims feasible %v, stable %v, hull outlier %v, novel %v; its values give %v, %v, %v, %v",
			store.ErrForged, ev.ID, ev.Feasible, ev.Stable, ev.HullOutlier, ev.Novel, re.Feasible, re.Stable, re.HullOutlier, re.Novel))
	}
	if !ev.ForJudge() {
		return false, nil
	}
	if ev.ID != ev.Candidate.ID || ev.Campaign != ev.Candidate.Campaign {
		return false, bus.Permanent(fmt.Errorf("%w: evaluation %s of campaign %s names candidate %s of campaign %s",
			store.ErrForged, ev.ID, ev.Campaign, ev.Candidate.ID, ev.Candidate.Campaign))
	}
	digest, recorded, err := s.store.EvaluationDigest(ctx, ev.Campaign, ev.ID)
	if err != nil {
		return false, err
	}
	if recorded {
		// An evaluation recorded before digests were kept has none.
		if digest != "" && digest != messages.DigestBytes(d.Data) {
			return false, bus.Permanent(fmt.Errorf("%w: evaluation %s differs from the evaluation of the candidate the reflector recorded", store.ErrForged, ev.ID))
		}
		return true, nil
	}
	_, err = s.store.VerifyCandidate(ctx, &ev.Candidate)
	switch {
	case err == nil:
		return false, bus.Later(errNotRecorded, notRecordedDelay)
	case errors.Is(err, store.ErrForged), errors.Is(err, store.ErrClosed):
		return false, bus.Permanent(err)
	case errors.Is(err, store.ErrNotFound):
		return false, bus.Permanent(fmt.Errorf("evaluation %s: unknown campaign %s", ev.ID, ev.Campaign))
	}
	return false, err
}
