package store

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestApplyControlOnce: a lifecycle action applied again (a redelivered
// control message) returns its first result and changes nothing, and
// each transition is allowed only from the states that allow it.
func TestApplyControlOnce(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "ctl", 10, 2, 2)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	apply := func(id, action string, budget int) ControlResult {
		t.Helper()
		r, err := s.ApplyControl(ctx, &messages.Control{Campaign: "ctl", ID: id, Action: action, Budget: budget}, 4)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	steps := []struct {
		id, action string
		budget     int
		want       ControlResult
	}{
		{"p1", "pause", 0, ControlResult{Status: "paused", Changed: true}},
		{"p2", "pause", 0, ControlResult{Status: "paused"}},
		{"r1", "resume", 0, ControlResult{Status: "running", Changed: true, Kick: 4}},
		{"p1", "pause", 0, ControlResult{Status: "paused", Changed: true}}, // redelivered: the first result, no change
		{"e1", "extend", 8, ControlResult{Status: "running", Refused: "the budget is 10 already; extend raises it"}},
		{"e2", "extend", 16, ControlResult{Status: "running", Changed: true, Kick: 4}},
		{"c1", "cancel", 0, ControlResult{Status: "cancelled", Changed: true, Finish: true}},
		{"r2", "resume", 0, ControlResult{Status: "cancelled", Refused: "the campaign is cancelled"}},
		{"e3", "extend", 20, ControlResult{Status: "cancelled", Refused: "the campaign was cancelled"}},
	}
	for _, st := range steps {
		if got := apply(st.id, st.action, st.budget); got != st.want {
			t.Errorf("%s %s: %+v, want %+v", st.id, st.action, got, st.want)
		}
	}
	state, err := s.State(ctx, "ctl")
	if err != nil {
		t.Fatal(err)
	}
	if state.Status != "cancelled" || state.Budget != 16 || state.Extended != 6 {
		t.Errorf("state %s, budget %d (+%d), want cancelled, 16 (+6)", state.Status, state.Budget, state.Extended)
	}
	// 16 over two episodes: the submitted 10 split 5 and 5, the last
	// episode with the extension's 6.
	if a, b := state.EpisodeBudget(0, 2), state.EpisodeBudget(1, 2); a != 5 || b != 11 {
		t.Errorf("episode budgets %d, %d, want 5, 11", a, b)
	}
	if r, ok, err := s.ControlApplied(ctx, "ctl", "c1"); err != nil || !ok || !r.Finish {
		t.Errorf("ControlApplied(c1) = %+v, %v, %v", r, ok, err)
	}
	if err := s.DeleteCampaign(ctx, "ctl"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.State(ctx, "ctl"); err == nil {
		t.Error("the state survived the delete")
	}
	if ids, _ := s.Campaigns(ctx); len(ids) != 0 {
		t.Errorf("index after the delete: %v", ids)
	}
}

// TestFinishedTime: a campaign's finish time is recorded once (a repeated
// finish keeps the first), and an extension that reopens a completed
// campaign clears it, so its wall time runs again until it finishes.
func TestFinishedTime(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "fin", 10, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	first := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, at := range []time.Time{first, first.Add(time.Hour)} {
		if err := s.MarkFinished(ctx, "fin", at); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := s.State(ctx, "fin"); err != nil || !st.Finished.Equal(first) {
		t.Fatalf("finished %v %v, want %v", st.Finished, err, first)
	}
	if err := s.rdb.HSet(ctx, s.stateKey("fin"), "status", "completed").Err(); err != nil {
		t.Fatal(err)
	}
	if r, err := s.ApplyControl(ctx, &messages.Control{Campaign: "fin", ID: "e1", Action: "extend", Budget: 20}, 4); err != nil || r.Status != "running" {
		t.Fatalf("extend: %+v %v", r, err)
	}
	if st, err := s.State(ctx, "fin"); err != nil || !st.Finished.IsZero() {
		t.Fatalf("after the extension: finished %v %v, want none", st.Finished, err)
	}
}
