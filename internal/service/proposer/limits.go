package proposer

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/strictjson"
)

// Limits are the operator's quotas on submissions, enforced when a
// proposer accepts a campaign (0: none).
type Limits struct {
	// MaxBudget is the largest budget a campaign may ask for.
	MaxBudget int
	// MaxCampaigns is how many campaigns may run at once (running or
	// finishing their generations in flight).
	MaxCampaigns int
	// Users are the quotas of each client user that submits as itself
	// (messages.SubmitSubject): its name, or "*" for every user not
	// named. They apply on top of the installation's.
	Users UserLimits
}

// UserLimits are the quotas of client users, by NATS user name ("*":
// every user not named).
type UserLimits map[string]UserLimit

// UserLimit is one user's quota (0: none).
type UserLimit struct {
	// MaxBudget is the largest budget one of the user's campaigns may ask
	// for.
	MaxBudget int `json:"max_budget"`
	// MaxCampaigns is how many of the user's campaigns may run at once.
	MaxCampaigns int `json:"max_campaigns"`
}

// ReadUserLimits reads a file of user quotas, a JSON object from user
// name (or "*") to {"max_budget": N, "max_campaigns": M}, strictly: an
// unknown key, a negative quota or a name that is no NATS user name a
// submission can carry is an error.
func ReadUserLimits(path string) (UserLimits, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("user limits: %w", err)
	}
	var u UserLimits
	if err := strictjson.Decode(data, &u); err != nil {
		return nil, fmt.Errorf("user limits %s: %w", path, err)
	}
	for name, l := range u {
		if name != "*" && !messages.ValidSubmitter(name) {
			return nil, fmt.Errorf("user limits %s: %q is not a user name a submission carries (letters, digits, '-' and '_', at most 64)", path, name)
		}
		if l.MaxBudget < 0 || l.MaxCampaigns < 0 {
			return nil, fmt.Errorf("user limits %s: %s: a quota is negative", path, name)
		}
	}
	return u, nil
}

// of is the quota of user: its own, else "*"'s; none for a submission
// without a user.
func (u UserLimits) of(user string) (UserLimit, string) {
	if user == "" {
		return UserLimit{}, ""
	}
	if l, ok := u[user]; ok {
		return l, user
	}
	return u["*"], "*"
}

// ErrLimit is a submission beyond the operator's limits.
var ErrLimit = errors.New("over the operator's limit")

// counted reports whether the limits count running campaigns.
func (l Limits) counted() bool {
	if l.MaxCampaigns > 0 {
		return true
	}
	for _, u := range l.Users {
		if u.MaxCampaigns > 0 {
			return true
		}
	}
	return false
}

// create stores a campaign once (false for a redelivered submission of a
// campaign created already). A new one must be within the operator's
// limits (an error wrapping ErrLimit says why not); when they count
// running campaigns, the count and the creation are made under the
// installation's submission lock.
func (s *Service) create(ctx context.Context, spec *messages.CampaignSpec, seeds int) (bool, error) {
	if _, err := s.store.Spec(ctx, spec.ID); err == nil {
		return s.store.CreateCampaign(ctx, spec, seeds)
	} else if !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if s.cfg.Limits.counted() {
		unlock, err := s.store.LockSubmissions(ctx)
		if err != nil {
			return false, err
		}
		defer unlock()
	}
	if err := s.checkLimits(ctx, spec); err != nil {
		return false, err
	}
	return s.store.CreateCampaign(ctx, spec, seeds)
}

// checkLimits reports why a new campaign exceeds the limits, the
// installation's or its submitter's, or nil.
func (s *Service) checkLimits(ctx context.Context, spec *messages.CampaignSpec) error {
	l := s.cfg.Limits
	if l.MaxBudget > 0 && spec.Budget > l.MaxBudget {
		return fmt.Errorf("%w: budget %d is more than the maximum of %d per campaign (proposer --max-budget)", ErrLimit, spec.Budget, l.MaxBudget)
	}
	user := spec.SubmittedBy
	u, entry := l.Users.of(user)
	if u.MaxBudget > 0 && spec.Budget > u.MaxBudget {
		return fmt.Errorf("%w: budget %d is more than the maximum of %d per campaign for user %s (proposer --user-limits, entry %q)", ErrLimit, spec.Budget, u.MaxBudget, user, entry)
	}
	if l.MaxCampaigns == 0 && u.MaxCampaigns == 0 {
		return nil
	}
	all, theirs, err := s.store.ActiveCampaigns(ctx, user)
	if err != nil {
		return err
	}
	if l.MaxCampaigns > 0 && all >= l.MaxCampaigns {
		return fmt.Errorf("%w: the maximum of %d campaigns running at once is reached (proposer --max-campaigns); submit again when one has finished", ErrLimit, l.MaxCampaigns)
	}
	if u.MaxCampaigns > 0 && theirs >= u.MaxCampaigns {
		return fmt.Errorf("%w: user %s has %d campaigns running, its maximum (proposer --user-limits, entry %q); submit again when one has finished", ErrLimit, user, theirs, entry)
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
