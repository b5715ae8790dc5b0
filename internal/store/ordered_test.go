package store

import (
	"context"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestOrderedRecording: an ordered campaign records seeds in the order of
// their index and a generation's candidates in the order of its accepted
// list; one delivered ahead of its turn waits, recording nothing. An
// unordered campaign records in delivery order.
func TestOrderedRecording(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for _, ordered := range []bool{true, false} {
		id := "unordered"
		if ordered {
			id = "ordered"
		}
		sp := spec(t, id, 4, 2, 1)
		sp.Ordered, sp.MaxInFlight = ordered, 1
		if _, err := s.CreateCampaign(ctx, sp, 2); err != nil {
			t.Fatal(err)
		}
		seed := func(i int) *EvaluationRecord {
			c := candidate(id, 0, i, "")
			c.ID, c.Seed = messages.SeedCandidateID(id, i), true
			r := evaluation(c, 0, 0.1, false)
			r.Seed, r.Position = true, i
			return r
		}
		record := func(r *EvaluationRecord) Outcome {
			t.Helper()
			o, err := s.RecordEvaluation(ctx, id, r)
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		if o := record(seed(1)); o.Wait != ordered {
			t.Fatalf("%s: seed 1 before seed 0: %+v", id, o)
		}
		// Unordered, seed 1 was recorded first and seed 0 completes them.
		if o := record(seed(0)); o.Wait || o.SeedsDone != !ordered {
			t.Fatalf("%s: seed 0: %+v", id, o)
		}
		if ordered {
			if o := record(seed(1)); o.Wait || !o.SeedsDone {
				t.Fatalf("seed 1 in turn: %+v", o)
			}
		}
		g, ok, err := s.RequestGeneration(ctx, id, "start/0")
		if err != nil || !ok {
			t.Fatalf("%s: request: %v %v", id, ok, err)
		}
		c0, c1 := candidate(id, g.Generation, 0, "a"), candidate(id, g.Generation, 1, "b")
		if _, err := s.RecordProposal(ctx, id, &Proposal{Generation: g.Generation, Candidates: []*messages.Candidate{c0, c1}}); err != nil {
			t.Fatal(err)
		}
		o := record(evaluation(c1, 0, 0.3, true))
		if o.Wait != ordered || (!ordered && o.Index != 1) {
			t.Fatalf("%s: candidate 1 before candidate 0: %+v", id, o)
		}
		wantIndex := 1 // ordered: the first recorded
		if !ordered {
			wantIndex = 2
		}
		if o := record(evaluation(c0, 0, 0.2, true)); o.Wait || o.Index != wantIndex {
			t.Fatalf("%s: candidate 0: %+v", id, o)
		}
		if ordered {
			if o := record(evaluation(c1, 0, 0.3, true)); o.Wait || o.Index != 2 || !o.GenerationDone {
				t.Fatalf("candidate 1 in turn: %+v", o)
			}
		}
		st, err := s.State(ctx, id)
		if err != nil || st.Counters.Evaluated != 2 || st.Counters.Hits != 2 {
			t.Fatalf("%s: counters %+v %v", id, st.Counters, err)
		}
	}
}

// TestRejectedKnown: the proposer's rejections with a known formula and
// the duplicates of known formulas the store drops are counted as
// memorised proposals; a generator's failure is no candidate.
func TestRejectedKnown(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, "rk", 10, 2, 1), 0); err != nil {
		t.Fatal(err)
	}
	propose := func(trigger string, p *Proposal) {
		t.Helper()
		g, ok, err := s.RequestGeneration(ctx, "rk", trigger)
		if err != nil || !ok {
			t.Fatalf("request: %v %v", ok, err)
		}
		p.Generation = g.Generation
		for _, c := range p.Candidates {
			c.ID = messages.CandidateID("rk", g.Generation, c.Index)
			c.Generation = g.Generation
		}
		if _, err := s.RecordProposal(ctx, "rk", p); err != nil {
			t.Fatal(err)
		}
	}
	known := func(i int, fp string) *messages.Candidate {
		c := candidate("rk", 0, i, fp)
		c.Formula, c.Known = "NaCl", true
		return c
	}
	// Two rejected by the checks, one of them known; one published.
	propose("t/0", &Proposal{Candidates: []*messages.Candidate{known(0, "x")}, Rejected: []Member{{ID: "r0"}, {ID: "r1"}}, RejectedKnown: 1})
	// A duplicate of the known structure: rejected, and known.
	propose("t/1", &Proposal{Candidates: []*messages.Candidate{known(0, "x")}})
	// A generator's failure: recorded for the island, no candidate.
	zero := 0
	propose("t/2", &Proposal{Rejected: []Member{{ID: "failure"}}, RejectedCandidates: &zero})
	st, err := s.State(ctx, "rk")
	if err != nil {
		t.Fatal(err)
	}
	if c := st.Counters; c.Proposed != 1 || c.Rejected != 3 || c.RejectedKnown != 2 {
		t.Errorf("counters %+v: want 1 proposed, 3 rejected, 2 of them known", c)
	}
}
