package local_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestOperatorLimits: a campaign over the proposer's maximum budget, and
// one beyond its maximum of running campaigns, are rejected at
// submission with the limit in the reason; within them a campaign runs.
func TestOperatorLimits(t *testing.T) {
	o, db := deps(t)
	opts := local.Options{Oracle: o, Namespace: testsrv.Namespace()}
	opts.Proposer = func(s *store.Store) proposer.Config {
		c := wire.Proposer(db, s, wire.ProposerOptions{})
		c.Limits = proposer.Limits{MaxBudget: 30, MaxCampaigns: 1}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st, err := local.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)

	big := &messages.CampaignSpec{ID: "big", Task: easyTask(), Budget: 1000000, Seed: 1}
	if _, err := local.Run(ctx, st, big, local.RunOptions{}); err == nil || !strings.Contains(err.Error(), "budget 1000000 is more than the maximum of 30") {
		t.Fatalf("budget over the maximum: %v", err)
	}
	// A campaign within the limits runs; while it runs (its status stays
	// running until its last evaluation) a second one is refused.
	first := &messages.CampaignSpec{ID: "first", Task: easyTask(), Budget: 30, Seed: 1}
	done := make(chan error, 1)
	go func() {
		_, err := local.Run(ctx, st, first, local.RunOptions{})
		done <- err
	}()
	for {
		if s, err := st.Store.State(ctx, first.ID); err == nil && s.Status == messages.StateRunning {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	second := &messages.CampaignSpec{ID: "second", Task: easyTask(), Budget: 10, Seed: 1}
	if _, err := local.Run(ctx, st, second, local.RunOptions{}); err == nil || !strings.Contains(err.Error(), "the maximum of 1 campaigns running at once is reached") {
		t.Errorf("a campaign beyond the maximum running: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the campaign within the limits: %v", err)
	}
	third := &messages.CampaignSpec{ID: "third", Task: easyTask(), Budget: 10, Seed: 1}
	if _, err := local.Run(ctx, st, third, local.RunOptions{}); err != nil {
		t.Errorf("a campaign after the first finished: %v", err)
	}
}
