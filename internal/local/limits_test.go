package local_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// startLimited starts a local stack whose proposer enforces limits, its
// oracle taking delay more per candidate.
func startLimited(t *testing.T, ctx context.Context, limits proposer.Limits, delay time.Duration) *local.Stack {
	t.Helper()
	o, db := deps(t)
	opts := local.Options{Oracle: o, Namespace: testsrv.Namespace()}
	opts.Evaluator.Delay = delay
	opts.Proposer = func(s *store.Store) proposer.Config {
		c := wire.Proposer(db, s, wire.ProposerOptions{})
		c.Limits = limits
		return c
	}
	st, err := local.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return st
}

// TestOperatorLimits: a campaign over the proposer's maximum budget, and
// one beyond its maximum of running campaigns, are rejected at
// submission with the limit in the reason; within them a campaign runs.
func TestOperatorLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	st := startLimited(t, ctx, proposer.Limits{MaxBudget: 30, MaxCampaigns: 1}, 0)

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

// TestUserLimits: a client user that submits as itself has its own quotas
// (its entry, else "*"'s) on top of the installation's: a second campaign
// of a user at its maximum is refused while another user's runs, a budget
// over "*"'s maximum is refused naming the user and the entry, and a
// submission without a user has none. The submitter is the subject's: a
// submitted_by in the body is replaced.
func TestUserLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// 0.1 s a candidate: the first campaign runs seconds, while the
	// others are submitted.
	st := startLimited(t, ctx, proposer.Limits{Users: proposer.UserLimits{"alice": {MaxCampaigns: 1}, "carol": {MaxCampaigns: 1}, "*": {MaxBudget: 20}}},
		100*time.Millisecond)
	as := func(user string) *client.Client { return &client.Client{Bus: st.Bus, Store: st.Store, Submitter: user} }
	submit := func(user, id string, budget int, by string) {
		t.Helper()
		spec := &messages.CampaignSpec{ID: id, Task: easyTask(), Budget: budget, Seed: 1, SubmittedBy: by}
		if err := as(user).Submit(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	// The proposer's answer: the campaign runs (its spec says by whom),
	// or is rejected with a reason.
	answer := func(id string) (state, why string) {
		t.Helper()
		for ctx.Err() == nil {
			if s, err := st.Store.State(ctx, id); err == nil && s.Status != "" {
				return s.Status, ""
			}
			sub, _ := st.Bus.ReadSubject(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, id), func(_ string, data []byte) error {
				var s messages.Status
				if messages.Decode(data, &s) == nil && s.State == messages.StateRejected {
					state, why = s.State, s.Message
				}
				return nil
			})
			if sub > 0 && state != "" {
				return state, why
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal(ctx.Err())
		return "", ""
	}
	submittedBy := func(id string) string {
		t.Helper()
		spec, err := st.Store.Spec(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return spec.SubmittedBy
	}

	submit("alice", "alice-1", 40, "")
	if s, why := answer("alice-1"); s != messages.StateRunning {
		t.Fatalf("alice's first campaign (her entry sets no maximum budget): %s %s", s, why)
	}
	submit("alice", "alice-2", 10, "")
	if s, why := answer("alice-2"); s != messages.StateRejected || !strings.Contains(why, `user alice has 1 campaigns running, its maximum (proposer --user-limits, entry "alice")`) {
		t.Errorf("alice's second campaign while her first runs: %s %q", s, why)
	}
	submit("bob", "bob-big", 30, "")
	if s, why := answer("bob-big"); s != messages.StateRejected || !strings.Contains(why, `budget 30 is more than the maximum of 20 per campaign for user bob (proposer --user-limits, entry "*")`) {
		t.Errorf("bob's campaign over the budget of \"*\": %s %q", s, why)
	}
	submit("bob", "bob-1", 10, "")
	if s, why := answer("bob-1"); s == messages.StateRejected {
		t.Errorf("bob's campaign while alice's runs: rejected: %s", why)
	}
	submit("", "nobody", 40, "mallory")
	if s, why := answer("nobody"); s == messages.StateRejected {
		t.Errorf("a campaign without a user: rejected: %s", why)
	}
	// Four of carol's at once (the proposer accepts two submissions at a
	// time): one runs and three are refused. (The race this guards
	// against is rarely met here; TestCreateWithinLimitsConcurrently
	// widens it.)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := &messages.CampaignSpec{ID: fmt.Sprintf("carol-%d", i), Task: easyTask(), Budget: 10, Seed: 1}
			if err := as("carol").Submit(ctx, spec); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	carols := ""
	for i := range 4 {
		id := fmt.Sprintf("carol-%d", i)
		if s, _ := answer(id); s != messages.StateRejected {
			carols = id
			if s, err := as("").WaitDone(ctx, id); err != nil || s.State != messages.StateCompleted {
				t.Errorf("%s: %v %v", id, s, err)
			}
		}
	}
	if _, n, err := st.Store.ActiveCampaigns(ctx, "carol"); err != nil || carols == "" {
		t.Errorf("none of carol's four campaigns ran (%d running, %v)", n, err)
	}
	for i := range 4 {
		if id := fmt.Sprintf("carol-%d", i); id != carols {
			if s, why := answer(id); s != messages.StateRejected || !strings.Contains(why, "user carol has 1 campaigns running") {
				t.Errorf("%s, submitted with %s: %s %q", id, carols, s, why)
			}
		}
	}
	for id, want := range map[string]string{"alice-1": "alice", "bob-1": "bob", "nobody": ""} {
		if got := submittedBy(id); got != want {
			t.Errorf("%s: submitted_by %q, want %q", id, got, want)
		}
	}
	for _, id := range []string{"alice-1", "bob-1", "nobody"} {
		if s, err := as("").WaitDone(ctx, id); err != nil || s.State != messages.StateCompleted {
			t.Errorf("%s: %v %v", id, s, err)
		}
	}
	// Her first finished, alice may run another.
	submit("alice", "alice-3", 10, "")
	if s, why := answer("alice-3"); s == messages.StateRejected {
		t.Errorf("alice's campaign after her first finished: rejected: %s", why)
	}
}
