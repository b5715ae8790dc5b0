package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// lifecycle pauses and resumes the chaos campaign once it is 40%
// evaluated, and cancels a second campaign mid-way, all while services
// are killed: the control messages are redelivered to reflectors that
// die, and each change must happen once. The main campaign is then held
// to every guarantee by Verify; the pause must have stopped its new
// generations, and the cancelled campaign must finish as cancelled with
// every proposed candidate evaluated.
func lifecycle(ctx context.Context, cl *client.Client, spec *messages.CampaignSpec, logf func(string, ...any)) error {
	if err := waitFor(ctx, cl, spec.ID, func(s stateView) bool { return s.evaluated >= spec.Budget*4/10 }); err != nil {
		return fmt.Errorf("before the pause: %w", err)
	}
	if err := retryControl(ctx, func(c context.Context) error { _, err := cl.Pause(c, spec.ID); return err }); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	if err := waitFor(ctx, cl, spec.ID, func(s stateView) bool { return s.inflight == 0 }); err != nil {
		return fmt.Errorf("draining after the pause: %w", err)
	}
	drained, err := cl.Store.State(ctx, spec.ID)
	if err != nil {
		return err
	}
	if drained.Status != messages.StatePaused {
		return fmt.Errorf("after the pause: %s", drained.Status)
	}
	// Watch the paused campaign for a second: no generation may start.
	for i := 0; i < 4; i++ {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		if s, err := cl.Store.State(ctx, spec.ID); err == nil && s.Int("next_gen") != drained.Int("next_gen") {
			return fmt.Errorf("generation %d reserved while paused", s.Int("next_gen")-1)
		}
	}
	logf("paused at %d of %d evaluated; resuming", drained.Counters.Evaluated, spec.Budget)
	if err := retryControl(ctx, func(c context.Context) error { _, err := cl.Resume(c, spec.ID); return err }); err != nil {
		return fmt.Errorf("resume: %w", err)
	}

	other := *spec
	other.ID, other.Budget, other.Episodes, other.Seed = spec.ID+"-cancel", 80, 1, spec.Seed+1
	if err := retryControl(ctx, func(c context.Context) error { return cl.Submit(c, &other) }); err != nil {
		return fmt.Errorf("submit %s: %w", other.ID, err)
	}
	if err := waitFor(ctx, cl, other.ID, func(s stateView) bool { return s.evaluated >= 8 }); err != nil {
		return fmt.Errorf("before the cancel: %w", err)
	}
	if err := retryControl(ctx, func(c context.Context) error { _, err := cl.Cancel(c, other.ID); return err }); err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	final, err := cl.WaitDone(ctx, other.ID)
	if err != nil {
		return fmt.Errorf("waiting for the cancelled campaign: %w", err)
	}
	if final.State != messages.StateCancelled || final.Summary == nil {
		return fmt.Errorf("cancelled campaign ended %s", final.State)
	}
	if s := final.Summary; s.Evaluated != s.Proposed || s.Evaluated >= other.Budget {
		return fmt.Errorf("cancelled campaign: %d proposed, %d evaluated of %d", s.Proposed, s.Evaluated, other.Budget)
	}
	logf("cancelled %s at %d of %d evaluated", other.ID, final.Summary.Evaluated, other.Budget)
	return nil
}

type stateView struct{ evaluated, inflight int }

// waitFor polls a campaign's state until ok, through outages.
func waitFor(ctx context.Context, cl *client.Client, campaign string, ok func(stateView) bool) error {
	for {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := cl.Store.State(sctx, campaign)
		cancel()
		if err == nil && ok(stateView{evaluated: s.Counters.Evaluated, inflight: s.Inflight}) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// retryControl repeats a lifecycle call that failed for the chaos (a
// reflector killed before it applied the action, a server restarting); a
// refusal is final.
func retryControl(ctx context.Context, f func(context.Context) error) error {
	for {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := f(c)
		cancel()
		if err == nil || errors.Is(err, client.ErrRefused) || errors.Is(err, client.ErrExists) || ctx.Err() != nil {
			if errors.Is(err, client.ErrExists) {
				return nil // an earlier attempt got through
			}
			return err
		}
	}
}
