package proposer

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

func TestSeenCacheSnapshots(t *testing.T) {
	url, _ := testsrv.Redis(t)
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{URL: url, Namespace: testsrv.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.DeleteNamespace(ctx); st.Close() })
	spec := &messages.CampaignSpec{ID: "seen", Budget: 10, Task: task.Task{Name: "t", Constraints: []task.Constraint{task.AtLeast("band_gap", 1)}}}
	spec.ApplyDefaults()
	if _, err := st.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	propose := func(trigger, fp string) {
		g, ok, err := st.RequestGeneration(ctx, "seen", trigger)
		if err != nil || !ok {
			t.Fatalf("request: %v %v", ok, err)
		}
		c := &messages.Candidate{ID: messages.CandidateID("seen", g.Generation, 0), Fingerprint: fp}
		if _, err := st.RecordProposal(ctx, "seen", &store.Proposal{Generation: g.Generation, Candidates: []*messages.Candidate{c}}); err != nil {
			t.Fatal(err)
		}
	}
	propose("a", "fp1")

	c := seenCache{refresh: time.Hour}
	s, err := c.set(ctx, st, "seen")
	if err != nil {
		t.Fatal(err)
	}
	if !s.has("fp1") || s.has("fp2") {
		t.Fatal("the first snapshot is not the store's")
	}
	// Another replica proposes fp2: a fresh snapshot does not know yet (the
	// store will reject the duplicate), a refreshed one does.
	propose("b", "fp2")
	if s, _ = c.set(ctx, st, "seen"); s.has("fp2") {
		t.Error("a fresh snapshot was reloaded")
	}
	s.add("fp3") // proposed by this replica
	c.refresh = time.Nanosecond
	if s, _ = c.set(ctx, st, "seen"); !s.has("fp2") || !s.has("fp3") {
		t.Error("the refreshed snapshot lacks fp2 or the local fp3")
	}
	other, _ := c.set(ctx, st, "other")
	if other.has("fp1") {
		t.Error("another campaign shares the snapshot")
	}
}
