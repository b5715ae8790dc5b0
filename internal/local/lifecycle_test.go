package local_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// waitState waits for a campaign's state to satisfy ok.
func waitState(t *testing.T, st *local.Stack, campaign, what string, ok func(*store.State) bool) *store.State {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if s, err := st.Store.State(context.Background(), campaign); err == nil && ok(s) {
			return s
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("campaign %s: %s did not happen", campaign, what)
	return nil
}

// TestLifecycle pauses, resumes, extends, cancels and deletes campaigns
// on a running stack: a paused campaign drains its generations in flight
// and reserves no more; a resumed one ends on its budget exactly; an
// extended one runs again to the new budget; a cancelled one finishes
// with every proposed candidate evaluated; a deleted one is gone.
func TestLifecycle(t *testing.T) {
	st := start(t, local.Options{})
	ctx := context.Background()
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	wait := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		t.Cleanup(cancel)
		return c
	}

	spec := &messages.CampaignSpec{ID: "life", Task: easyTask(), Budget: 40, Seed: 3, Episodes: 2, BatchSize: 4, MaxInFlight: 2}
	if err := cl.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	waitEvaluated(t, st, spec.ID, 8)
	if r, err := cl.Pause(wait(), spec.ID); err != nil || r.Status != messages.StatePaused || !r.Changed {
		t.Fatalf("pause: %+v, %v", r, err)
	}
	if r, err := cl.Pause(wait(), spec.ID); err != nil || r.Changed {
		t.Fatalf("pause again: %+v, %v; want nothing to do", r, err)
	}
	paused := waitState(t, st, spec.ID, "drain after pause", func(s *store.State) bool { return s.Inflight == 0 })
	if paused.Status != messages.StatePaused || paused.Counters.Evaluated >= spec.Budget {
		t.Fatalf("after the pause: %s with %d evaluated", paused.Status, paused.Counters.Evaluated)
	}
	if paused.Counters.Evaluated != paused.Counters.Proposed {
		t.Errorf("paused with %d proposed, %d evaluated: in-flight work not drained", paused.Counters.Proposed, paused.Counters.Evaluated)
	}
	if _, err := cl.Resume(wait(), spec.ID); err != nil {
		t.Fatal(err)
	}
	final, err := cl.WaitDone(wait(), spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateCompleted || final.Summary.Evaluated != 40 || final.Summary.Proposed != 40 {
		t.Fatalf("after resume: %s, %d evaluated, %d proposed; want completed, 40, 40", final.State, final.Summary.Evaluated, final.Summary.Proposed)
	}
	if len(final.Summary.DiscoveryCurve) != final.Summary.NStable {
		t.Errorf("discovery curve of %d points for N_stable %d", len(final.Summary.DiscoveryCurve), final.Summary.NStable)
	}

	// Extend the completed campaign: it runs again to the new budget.
	if r, err := cl.Extend(wait(), spec.ID, &client.Extension{Budget: 52}); err != nil || r.Status != messages.StateRunning {
		t.Fatalf("extend: %+v, %v", r, err)
	}
	if _, err := cl.Extend(wait(), spec.ID, &client.Extension{Budget: 50}); !errors.Is(err, client.ErrRefused) {
		t.Errorf("extend to a smaller budget: %v, want refused", err)
	}
	final, err = cl.WaitDone(wait(), spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateCompleted || final.Summary.Evaluated != 52 || final.Summary.Budget != 52 {
		t.Fatalf("after extend: %s, %d of %d evaluated; want completed, 52 of 52", final.State, final.Summary.Evaluated, final.Summary.Budget)
	}
	if n := final.Summary.Episodes[1].Evaluated; n != 32 {
		t.Errorf("last episode evaluated %d, want its 20 and the extension's 12", n)
	}

	// Cancel a second campaign mid-way. It is a named user's (its
	// submission and her actions go on her subjects): another user's
	// actions on it are refused, changing nothing; hers apply.
	spec2 := &messages.CampaignSpec{ID: "life2", Task: easyTask(), Budget: 200, Seed: 4, BatchSize: 4, MaxInFlight: 2}
	alice, bob := &client.Client{Bus: st.Bus, Store: st.Store, Submitter: "alice"}, &client.Client{Bus: st.Bus, Store: st.Store, Submitter: "bob"}
	if err := alice.Submit(ctx, spec2); err != nil {
		t.Fatal(err)
	}
	waitEvaluated(t, st, spec2.ID, 8)
	if r, err := bob.Cancel(wait(), spec2.ID); !errors.Is(err, client.ErrRefused) || r.Changed ||
		!strings.Contains(err.Error(), "campaign life2 is user alice's; user bob may act only on its own campaigns") {
		t.Fatalf("bob cancels alice's campaign: %+v, %v; want refused", r, err)
	}
	if s, err := st.Store.State(ctx, spec2.ID); err != nil || s.Status != messages.StateRunning {
		t.Fatalf("after bob's refused cancel: %v %v, want running", s.Status, err)
	}
	if _, err := alice.Cancel(wait(), spec2.ID); err != nil {
		t.Fatal(err)
	}
	final, err = cl.WaitDone(wait(), spec2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateCancelled || final.Summary == nil {
		t.Fatalf("cancelled: %s, summary %v", final.State, final.Summary != nil)
	}
	if s := final.Summary; s.Evaluated >= 200 || s.Evaluated != s.Proposed {
		t.Errorf("cancelled with %d proposed, %d evaluated of 200", s.Proposed, s.Evaluated)
	}
	if _, err := cl.Resume(wait(), spec2.ID); !errors.Is(err, client.ErrRefused) {
		t.Errorf("resume a cancelled campaign: %v, want refused", err)
	}
	list, err := cl.List(ctx, messages.StateCancelled)
	if err != nil || len(list) != 1 || list[0].ID != spec2.ID {
		t.Errorf("list --state cancelled: %+v, %v", list, err)
	}
	if err := cl.Delete(wait(), spec2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Show(ctx, spec2.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("show a deleted campaign: %v", err)
	}
	if list, _ := cl.List(ctx); len(list) != 1 {
		t.Errorf("%d campaigns after the delete, want 1", len(list))
	}
	// None of its messages is left on CAMPAIGNS, its submission included
	// (a Redis rebuilt from the streams would create it again).
	if _, err := st.Bus.ReadSubject(ctx, messages.StreamCampaigns, "crucible.campaigns.>", func(subject string, _ []byte) error {
		if messages.CampaignOfSubject(subject) == spec2.ID {
			t.Errorf("a message of the deleted campaign is left: %s", subject)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
