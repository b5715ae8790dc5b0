package proposer

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/crystal"
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
	// A candidate with a fingerprint, or, for a new formula, without.
	propose := func(trigger, formula, fp string) {
		g, ok, err := st.RequestGeneration(ctx, "seen", trigger)
		if err != nil || !ok {
			t.Fatalf("request: %v %v", ok, err)
		}
		c := &messages.Candidate{ID: messages.CandidateID("seen", g.Generation, 0), Formula: formula, Fingerprint: fp}
		p := &store.Proposal{Generation: g.Generation, Candidates: []*messages.Candidate{c}, Fingerprint: messages.Structure.Fingerprint}
		if _, err := st.RecordProposal(ctx, "seen", p); err != nil {
			t.Fatal(err)
		}
	}
	propose("a", "NaCl", "NaCl-fp1")
	propose("a2", "KBr", "")

	c := seenCache{refresh: time.Hour}
	s, err := c.set(ctx, st, "seen")
	if err != nil {
		t.Fatal(err)
	}
	if !s.has("NaCl-fp1") || s.has("NaCl-fp2") || !s.hasFormula("NaCl") || !s.hasFormula("KBr") || s.hasFormula("LiF") {
		t.Fatal("the first snapshot is not the store's")
	}
	// Another replica proposes NaCl-fp2 and LiF: a fresh snapshot does not
	// know yet (the store will reject a duplicate), a refreshed one does.
	propose("b", "NaCl", "NaCl-fp2")
	propose("b2", "LiF", "")
	if s, _ = c.set(ctx, st, "seen"); s.has("NaCl-fp2") || s.hasFormula("LiF") {
		t.Error("a fresh snapshot was reloaded")
	}
	s.add("CsI", "CsI-fp3", nil) // proposed by this replica
	rbf := crystaltest.Build(t, "rocksalt", "RbF")
	s.add("RbF", "", rbf)
	if !s.hasStructure(rbf.Copy()) || s.hasStructure(crystaltest.Build(t, "cscl", "RbF")) {
		t.Error("the fingerprint-less RbF is not found by its very structure, or another is")
	}
	// Another build of the same structure (a supercell) is found by its
	// fingerprint, which the fingerprint-less one gets when asked.
	sc, err := rbf.Supercell(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	fpSC, err := crystal.Fingerprint(sc)
	if err != nil {
		t.Fatal(err)
	}
	cscl, err := crystal.Fingerprint(crystaltest.Build(t, "cscl", "RbF"))
	if err != nil {
		t.Fatal(err)
	}
	if s.hasStructure(sc) || !s.has(fpSC) || s.has(cscl) {
		t.Error("a supercell of the fingerprint-less RbF is not found by its fingerprint, or caesium chloride RbF is")
	}
	c.refresh = time.Nanosecond
	if s, _ = c.set(ctx, st, "seen"); !s.has("NaCl-fp2") || !s.has("CsI-fp3") || !s.hasFormula("LiF") || !s.hasFormula("CsI") || !s.hasFormula("RbF") {
		t.Error("the refreshed snapshot lacks the store's NaCl-fp2 and LiF or the local CsI and RbF")
	}
	other, _ := c.set(ctx, st, "other")
	if other.has("NaCl-fp1") || other.hasFormula("NaCl") {
		t.Error("another campaign shares the snapshot")
	}
}
