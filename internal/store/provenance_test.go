package store

import (
	"context"
	"errors"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestVerifyCandidate: only the seeds and proposals the proposer recorded
// pass, with their content; a candidate of an unreserved generation, one
// not accepted, an altered one, and any after the campaign completed do
// not; a complete generation's candidates pass as late redeliveries.
func TestVerifyCandidate(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	const id = "prov"
	if _, err := s.CreateCampaign(ctx, spec(t, id, 40, 2, 1), 1); err != nil {
		t.Fatal(err)
	}
	cand := func(g, i int, a float64) *messages.Candidate {
		return &messages.Candidate{
			Schema: messages.SchemaVersion, ID: messages.CandidateID(id, g, i), Campaign: id,
			Generation: g, Index: i, Formula: "NaCl", Fingerprint: "fp-" + messages.CandidateID(id, g, i), Operator: "test",
			Structure: messages.Structure{Formula: "NaCl", Species: []string{"Na", "Cl"}, Coords: [][3]float64{{0, 0, 0}, {0.5, 0.5, 0.5}},
				Lattice: [3][3]float64{{a, 0, 0}, {0, 3, 0}, {0, 0, 3}}},
		}
	}
	seed := &messages.Candidate{Schema: messages.SchemaVersion, ID: messages.SeedCandidateID(id, 0), Campaign: id, Seed: true,
		Generation: -1, Formula: "LiF", Structure: messages.Structure{Formula: "LiF", Species: []string{"Li"}, Lattice: [3][3]float64{{4, 0, 0}, {0, 4, 0}, {0, 0, 4}}, Coords: [][3]float64{{0, 0, 0}}}}
	if err := s.RecordSeeds(ctx, id, []*messages.Candidate{seed}); err != nil {
		t.Fatal(err)
	}
	g, ok, err := s.RequestGeneration(ctx, id, "t/0")
	if err != nil || !ok {
		t.Fatalf("request: %v %v", ok, err)
	}
	a, b := cand(g.Generation, 0, 3), cand(g.Generation, 1, 4)
	if _, err := s.RecordProposal(ctx, id, &Proposal{Generation: g.Generation, Candidates: []*messages.Candidate{a, b}}); err != nil {
		t.Fatal(err)
	}
	altered := *a
	altered.Structure.Lattice[0][0] = 3.3
	otherSeed := *seed
	otherSeed.Formula = "NaF"
	secondSeed := *seed
	secondSeed.ID, secondSeed.Index = messages.SeedCandidateID(id, 1), 1
	cases := []struct {
		name string
		c    *messages.Candidate
		err  error
	}{
		{"recorded candidate", a, nil},
		{"recorded seed", seed, nil},
		{"altered candidate", &altered, ErrForged},
		{"candidate of an unreserved generation", cand(7, 0, 3), ErrForged},
		{"candidate not accepted", cand(g.Generation, 5, 3), ErrForged},
		{"altered seed", &otherSeed, ErrForged},
		{"seed beyond the campaign's seeds", &secondSeed, ErrForged},
		{"unknown campaign", &messages.Candidate{ID: "x-g0-c0", Campaign: "nosuch"}, ErrNotFound},
	}
	for _, tc := range cases {
		chk, err := s.VerifyCandidate(ctx, tc.c)
		if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) || chk.Done {
			t.Errorf("%s: %+v %v, want %v", tc.name, chk, err, tc.err)
		}
	}
	// The generation completes: its candidates pass as done.
	for _, c := range []*messages.Candidate{a, b} {
		if _, err := s.RecordEvaluation(ctx, id, &EvaluationRecord{ID: c.ID, Generation: c.Generation, Formula: c.Formula, PoolSize: 10, Digest: "d-" + c.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if chk, err := s.VerifyCandidate(ctx, &altered); err != nil || !chk.Done {
		t.Errorf("candidate of a complete generation: %+v %v, want done", chk, err)
	}
	if d, rec, err := s.EvaluationDigest(ctx, id, a.ID); err != nil || !rec || d != "d-"+a.ID {
		t.Errorf("digest %q recorded %v err %v", d, rec, err)
	}
	// A repeat says which message was recorded: the reflector refuses
	// another one.
	o, err := s.RecordEvaluation(ctx, id, &EvaluationRecord{ID: a.ID, Generation: a.Generation, Formula: a.Formula, PoolSize: 10, Digest: "other"})
	if err != nil || !o.Duplicate || o.Digest != "d-"+a.ID {
		t.Errorf("second evaluation of %s: %+v %v, want a duplicate of the one with digest d-%s", a.ID, o, err, a.ID)
	}
	// Once completed, the campaign takes nothing.
	if err := s.rdb.HSet(ctx, s.stateKey(id), "status", messages.StateCompleted).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyCandidate(ctx, a); !errors.Is(err, ErrClosed) {
		t.Errorf("after completion: %v, want ErrClosed", err)
	}
	req := &messages.GenerationRequest{Campaign: id, Generation: g.Generation, Slots: g.Slots, Episode: g.Episode}
	if err := s.VerifyRequest(ctx, req); !errors.Is(err, ErrClosed) {
		t.Errorf("request after completion: %v, want ErrClosed", err)
	}
}
