package proposer

import (
	"context"
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Limits are the operator's quotas on submissions, enforced when a
// proposer accepts a campaign (0: none).
type Limits struct {
	// MaxBudget is the largest budget a campaign may ask for.
	MaxBudget int
	// MaxCampaigns is how many campaigns may run at once (running or
	// finishing their generations in flight).
	MaxCampaigns int
}

// ErrLimit is a submission beyond the operator's limits.
var ErrLimit = errors.New("over the operator's limit")

// checkLimits reports why a new campaign exceeds the limits, or nil.
func (s *Service) checkLimits(ctx context.Context, spec *messages.CampaignSpec) error {
	l := s.cfg.Limits
	if l.MaxBudget > 0 && spec.Budget > l.MaxBudget {
		return fmt.Errorf("%w: budget %d is more than the maximum of %d per campaign (proposer --max-budget)", ErrLimit, spec.Budget, l.MaxBudget)
	}
	if l.MaxCampaigns > 0 {
		n, err := s.store.ActiveCampaigns(ctx)
		if err != nil {
			return err
		}
		if n >= l.MaxCampaigns {
			return fmt.Errorf("%w: the maximum of %d campaigns running at once is reached (proposer --max-campaigns); submit again when one has finished", ErrLimit, l.MaxCampaigns)
		}
	}
	return nil
}

// verifyRequest checks that a generation request is one its campaign
// reserved, for a campaign that accepts work: a forged request, one for
// a finished campaign or one naming an unknown campaign is a permanent
// failure (a dead letter with the reason) before any generator runs.
//
// A closed campaign's request delivered before (handed out before the
// campaign completed, its acknowledgement lost) is acknowledged instead:
// errSkip.
func (s *Service) verifyRequest(ctx context.Context, d *bus.Delivery, req *messages.GenerationRequest) error {
	err := s.store.VerifyRequest(ctx, req)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrClosed) && d.Deliveries > 1:
		return errSkip
	case errors.Is(err, store.ErrForged), errors.Is(err, store.ErrClosed):
		return bus.Permanent(err)
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("generation %d: %w", req.Generation, s.specs.Missing(req.Campaign, err))
	}
	return err
}

// errSkip: the message is acknowledged without being handled.
var errSkip = errors.New("skip")
