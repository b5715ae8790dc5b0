package evaluator

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// verify checks a candidate's provenance before it is evaluated: a
// candidate the proposer did not record (or recorded otherwise), or one
// for a campaign that accepts no more work, is a permanent failure (a
// dead letter with the reason). skip: the candidate's generation is
// complete, so this is a late redelivery of a candidate evaluated
// already, or a replay of one; evaluating it again could change nothing.
func (s *Service) verify(ctx context.Context, c *messages.Candidate) (skip bool, err error) {
	errs := []error{nil}
	skips := s.verifyAll(ctx, []*messages.Candidate{c}, errs)
	return skips[0], errs[0]
}

// verifyAll verifies the candidates of a batch (nil ones are skipped) in
// one store round trip, setting errs[i] for those that fail.
func (s *Service) verifyAll(ctx context.Context, cs []*messages.Candidate, errs []error) (skip []bool) {
	skip = make([]bool, len(cs))
	var todo []*messages.Candidate
	var at []int
	for i, c := range cs {
		if c != nil {
			todo = append(todo, c)
			at = append(at, i)
		}
	}
	if len(todo) == 0 {
		return skip
	}
	chks, verrs := s.store.VerifyCandidates(ctx, todo)
	for k, c := range todo {
		i, err := at[k], verrs[k]
		switch {
		case err == nil && chks[k].Done:
			s.log.Debug("candidate of a complete generation: not evaluated again",
				zap.String("campaign", c.Campaign), zap.String("candidate", c.ID))
			skip[i] = true
		case err == nil:
		case errors.Is(err, store.ErrForged), errors.Is(err, store.ErrClosed):
			errs[i] = bus.Permanent(err)
		case errors.Is(err, store.ErrNotFound):
			errs[i] = fmt.Errorf("candidate %s: %w", c.ID, s.specs.Missing(c.Campaign, err))
		default:
			errs[i] = err
		}
	}
	return skip
}

// Rederive scores an evaluation's values again against the campaign's
// task, as the evaluator scored them: the flags it returns (feasible,
// stable, hull outlier, novel) are what the values say, whatever the
// evaluation claims.
func Rederive(spec *messages.CampaignSpec, ev *messages.Evaluation) *messages.Evaluation {
	o := Outcome{
		Valid: ev.Valid, Properties: ev.Properties, Known: ev.Known, Novelty: ev.Novelty,
		EAboveHull: ev.EAboveHull, HullEnergy: ev.HullEnergy, EAboveHullCalibrated: ev.EAboveHullCalibrated,
	}
	return Score(spec, &ev.Candidate, &o)
}

// CheckFlags derives an evaluation's flags again from its values
// (Rederive) and returns a store.ErrForged error naming both when the
// flags it claims (feasible, stable, hull outlier, novel) disagree: an
// evaluation no evaluator wrote, which the reflector must not count nor
// the judge weigh.
func CheckFlags(spec *messages.CampaignSpec, ev *messages.Evaluation) error {
	re := Rederive(spec, ev)
	if re.Feasible != ev.Feasible || re.Stable != ev.Stable || re.HullOutlier != ev.HullOutlier || re.Novel != ev.Novel {
		return fmt.Errorf("%w: evaluation %s claims feasible %v, stable %v, hull outlier %v, novel %v; its values give %v, %v, %v, %v",
			store.ErrForged, ev.ID, ev.Feasible, ev.Stable, ev.HullOutlier, ev.Novel, re.Feasible, re.Stable, re.HullOutlier, re.Novel)
	}
	return nil
}

// lateRedelivery reports whether err is a closed campaign's refusal of a
// message delivered before: work handed out before the campaign
// completed, whose evaluation was published but whose acknowledgement was
// lost (a replica killed in between). It is acknowledged, not
// dead-lettered; work first delivered after completion is.
func lateRedelivery(d *bus.Delivery, err error) bool {
	return err != nil && errors.Is(err, store.ErrClosed) && d.Deliveries > 1
}
