package store

import (
	"context"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestReserveLLMCall(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "calls", 4, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if r, err := s.ReserveLLMCall(ctx, "calls", 3, 0); err != nil || !r.OK() {
			t.Fatalf("call %d: %+v %v", i, r, err)
		}
	}
	if r, err := s.ReserveLLMCall(ctx, "calls", 3, 0); err != nil || r.Spent != BudgetCalls || r.Used != 3 {
		t.Fatalf("fourth call of three: %+v %v", r, err)
	}
	st, err := s.State(ctx, "calls")
	if err != nil {
		t.Fatal(err)
	}
	if st.Counters.LLMRequests != 3 {
		t.Fatalf("%d requests counted, want 3 (a refused call is not counted)", st.Counters.LLMRequests)
	}
	// No budget: always allowed.
	if r, err := s.ReserveLLMCall(ctx, "calls", 0, 0); err != nil || !r.OK() {
		t.Fatalf("unbounded call: %+v %v", r, err)
	}
}

// TestReserveLLMTokens: the token budget counts the prompt and completion
// tokens of every exchange recorded so far; a request is refused once they
// reach it, and is not counted then.
func TestReserveLLMTokens(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "tokens", 4, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		prompt, completion int
		spent              string
		used               int
	}{
		{0, 0, "", 0},
		{60, 30, "", 90},
		{9, 0, "", 99},
		{1, 0, BudgetTokens, 100},
		{0, 500, BudgetTokens, 600},
	}
	for i, c := range steps {
		if err := s.AddLLMUsage(ctx, "tokens", 1, c.prompt, c.completion); err != nil {
			t.Fatal(err)
		}
		r, err := s.ReserveLLMCall(ctx, "tokens", 10, 100)
		if err != nil || r.Spent != c.spent || r.Used != c.used {
			t.Fatalf("step %d: %+v %v, want spent %q used %d", i, r, err, c.spent, c.used)
		}
	}
	st, err := s.State(ctx, "tokens")
	if err != nil {
		t.Fatal(err)
	}
	if st.Counters.LLMRequests != 3 {
		t.Fatalf("%d requests counted, want 3", st.Counters.LLMRequests)
	}
	// The call budget is checked first.
	if r, err := s.ReserveLLMCall(ctx, "tokens", 3, 100); err != nil || r.Spent != BudgetCalls {
		t.Fatalf("both spent: %+v %v", r, err)
	}
}

func TestMarkExhausted(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "tired", 4, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkExhausted(ctx, "tired", "the campaign's 8 LLM calls are spent"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkExhausted(ctx, "tired", "a later reason"); err != nil {
		t.Fatal(err)
	}
	st, err := s.State(ctx, "tired")
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != messages.StateExhausted || st.ExhaustedReason() != "the campaign's 8 LLM calls are spent" {
		t.Fatalf("status %s, reason %q", st.Status, st.ExhaustedReason())
	}
	if _, ok, err := s.RequestGeneration(ctx, "tired", "after"); err != nil || ok {
		t.Fatalf("an exhausted campaign granted a generation: %v %v", ok, err)
	}
}

// TestReserveLLMCallExtended: the LLM limits an extension sets replace
// those the caller passes (the spec's), and the reservation says which
// applied; an extension without limits keeps them.
func TestReserveLLMCallExtended(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, "ext", 4, 2, 1), 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if r, err := s.ReserveLLMCall(ctx, "ext", 2, 0); err != nil || !r.OK() || r.MaxCalls != 2 {
			t.Fatalf("call %d: %+v %v", i, r, err)
		}
	}
	if r, err := s.ReserveLLMCall(ctx, "ext", 2, 0); err != nil || r.Spent != BudgetCalls {
		t.Fatalf("third call of two: %+v %v", r, err)
	}
	extend := func(id string, budget, calls, tokens int) {
		t.Helper()
		c := &messages.Control{Campaign: "ext", ID: id, Action: messages.ActionExtend, Budget: budget, MaxLLMCalls: calls, MaxLLMTokens: tokens}
		if r, err := s.ApplyControl(ctx, c, 1); err != nil || !r.Changed {
			t.Fatalf("extend %s: %+v %v", id, r, err)
		}
	}
	extend("e1", 8, 4, 0)
	for i := 0; i < 2; i++ {
		if r, err := s.ReserveLLMCall(ctx, "ext", 2, 0); err != nil || !r.OK() || r.MaxCalls != 4 || r.MaxTokens != 0 {
			t.Fatalf("call %d after the extension to 4: %+v %v", 3+i, r, err)
		}
	}
	if r, err := s.ReserveLLMCall(ctx, "ext", 2, 0); err != nil || r.Spent != BudgetCalls || r.Used != 4 || r.MaxCalls != 4 {
		t.Fatalf("fifth call of four: %+v %v", r, err)
	}
	extend("e2", 9, 0, 50) // no new call limit: 4 stays
	if err := s.AddLLMUsage(ctx, "ext", 1, 50, 0); err != nil {
		t.Fatal(err)
	}
	r, err := s.ReserveLLMCall(ctx, "ext", 2, 0)
	if err != nil || r.Spent != BudgetCalls || r.MaxCalls != 4 || r.MaxTokens != 50 {
		t.Fatalf("after an extension of the tokens only: %+v %v", r, err)
	}
	st, err := s.State(ctx, "ext")
	if err != nil || st.MaxLLMCalls != 4 || st.MaxLLMTokens != 50 {
		t.Fatalf("state: %+v %v", st, err)
	}
}

// TestDebateAccount: the judge's debates count their requests and tokens
// in an account of their own (the judge may not write the campaign's
// state), under the same budgets as the campaign's other exchanges, and
// State reports both accounts together.
func TestDebateAccount(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "debates", 4, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if r, err := s.ReserveLLMCall(ctx, "debates", 4, 100); err != nil || !r.OK() {
			t.Fatalf("proposal call %d: %+v %v", i, r, err)
		}
	}
	if err := s.AddLLMUsage(ctx, "debates", 2, 30, 10); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ReserveDebateCall(ctx, "debates", 4, 100); err != nil || !r.OK() || r.Used != 40 {
		t.Fatalf("debate call: %+v %v, want allowed with 40 tokens used", r, err)
	}
	if err := s.AddDebateUsage(ctx, "debates", 1, 50, 10); err != nil {
		t.Fatal(err)
	}
	// 100 tokens: the debate's spent the budget for everyone.
	if r, err := s.ReserveLLMCall(ctx, "debates", 4, 100); err != nil || r.Spent != BudgetTokens || r.Used != 100 {
		t.Fatalf("proposal call after the debate: %+v %v, want the token budget spent at 100", r, err)
	}
	if r, err := s.ReserveDebateCall(ctx, "debates", 4, 0); err != nil || !r.OK() {
		t.Fatalf("debate call without a token budget: %+v %v", r, err)
	}
	// 4 requests in all: the call budget is spent for both accounts.
	if r, err := s.ReserveLLMCall(ctx, "debates", 4, 0); err != nil || r.Spent != BudgetCalls || r.Used != 4 {
		t.Fatalf("fifth call of four: %+v %v", r, err)
	}
	if err := s.ReleaseDebateCall(ctx, "debates"); err != nil {
		t.Fatal(err)
	}
	st, err := s.State(ctx, "debates")
	if err != nil {
		t.Fatal(err)
	}
	c := st.Counters
	if c.LLMRequests != 3 || c.LLMCalls != 3 || c.PromptTokens != 80 || c.CompletionTokens != 20 {
		t.Fatalf("counters %d requests, %d calls, %d+%d tokens; want 3, 3, 80+20", c.LLMRequests, c.LLMCalls, c.PromptTokens, c.CompletionTokens)
	}
}
