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
		if ok, err := s.ReserveLLMCall(ctx, "calls", 3); err != nil || !ok {
			t.Fatalf("call %d: %v %v", i, ok, err)
		}
	}
	if ok, err := s.ReserveLLMCall(ctx, "calls", 3); err != nil || ok {
		t.Fatalf("fourth call of three: %v %v", ok, err)
	}
	st, err := s.State(ctx, "calls")
	if err != nil {
		t.Fatal(err)
	}
	if st.Counters.LLMRequests != 3 {
		t.Fatalf("%d requests counted, want 3 (a refused call is not counted)", st.Counters.LLMRequests)
	}
	// No budget: always allowed.
	if ok, err := s.ReserveLLMCall(ctx, "calls", 0); err != nil || !ok {
		t.Fatalf("unbounded call: %v %v", ok, err)
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
