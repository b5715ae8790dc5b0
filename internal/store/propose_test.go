package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestProposalFingerprintsOnDemand: a candidate of a formula new to the
// campaign is recorded without a fingerprint; once its formula comes back,
// the store asks for the fingerprints that can tell the structures apart,
// both the newcomer's and the earlier one's, and deduplicates by them.
func TestProposalFingerprintsOnDemand(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, "lazy", 40, 4, 1), 0); err != nil {
		t.Fatal(err)
	}
	// A structure's fingerprint here is its formula and lattice length; a
	// length of 0 cannot be fingerprinted.
	var calls []string
	fingerprint := func(st messages.Structure) (string, error) {
		a := st.Lattice[0][0]
		calls = append(calls, fmt.Sprintf("%s/%g", st.Formula, a))
		if a == 0 {
			return "", errors.New("no neighbours")
		}
		return fmt.Sprintf("%s-%g", st.Formula, a), nil
	}
	cand := func(g, i int, formula string, a float64, fp string) *messages.Candidate {
		return &messages.Candidate{
			Schema: messages.SchemaVersion, ID: messages.CandidateID("lazy", g, i), Campaign: "lazy",
			Generation: g, Index: i, Formula: formula, Fingerprint: fp, Operator: "test",
			Structure: messages.Structure{Formula: formula, Species: []string{"Na"}, Coords: [][3]float64{{0, 0, 0}},
				Lattice: [3][3]float64{{a, 0, 0}, {0, 3, 0}, {0, 0, 3}}},
		}
	}
	gen := 0
	var lastPub []*messages.Candidate // what the last proposal published
	propose := func(cands ...*messages.Candidate) (p *Proposal, ids []string) {
		t.Helper()
		g, ok, err := s.RequestGeneration(ctx, "lazy", fmt.Sprintf("t/%d", gen))
		if err != nil || !ok || g.Generation != gen {
			t.Fatalf("request %d: %+v %v %v", gen, g, ok, err)
		}
		gen++
		calls = nil
		p = &Proposal{Generation: g.Generation, Candidates: cands, Fingerprint: fingerprint}
		pub, err := s.RecordProposal(ctx, "lazy", p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range pub {
			ids = append(ids, c.ID)
		}
		lastPub = pub
		return p, ids
	}
	id := func(g, i int) string { return messages.CandidateID("lazy", g, i) }
	check := func(what string, ids, wantIDs, wantCalls []string) {
		t.Helper()
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("%s: published %v, want %v", what, ids, wantIDs)
		}
		slices.Sort(calls)
		if !slices.Equal(calls, wantCalls) {
			t.Errorf("%s: fingerprinted %v, want %v", what, calls, wantCalls)
		}
	}

	// A new formula needs no fingerprint.
	_, ids := propose(cand(0, 0, "NaCl", 3, ""))
	check("new formula", ids, []string{id(0, 0)}, nil)

	// The same structure again (a stale snapshot): both are fingerprinted,
	// and the newcomer is the duplicate it is.
	p1, ids := propose(cand(1, 0, "NaCl", 3, ""))
	check("same structure", ids, nil, []string{"NaCl/3", "NaCl/3"})
	if fp := p1.Candidates[0].Fingerprint; fp != "NaCl-3" {
		t.Errorf("the duplicate's fingerprint is %q, want NaCl-3", fp)
	}
	// Recording generation 1 again returns what it stored.
	if again, err := s.RecordProposal(ctx, "lazy", &Proposal{Generation: 1, Candidates: []*messages.Candidate{cand(1, 0, "NaCl", 4, "")}, Fingerprint: fingerprint}); err != nil || len(again) != 0 {
		t.Errorf("repeated generation 1: %v %v, want nothing published", again, err)
	}

	// NaCl is resolved: a fingerprinted polymorph needs nothing more, and
	// a fingerprint-less one is fingerprinted alone.
	_, ids = propose(cand(2, 0, "NaCl", 4, "NaCl-4"), cand(2, 1, "NaCl", 5, ""))
	check("resolved formula", ids, []string{id(2, 0), id(2, 1)}, []string{"NaCl/5"})
	// The published candidate (as recorded) carries the fingerprint
	// computed for it.
	if len(lastPub) == 2 && lastPub[1].Fingerprint != "NaCl-5" {
		t.Errorf("published fingerprint %q, want NaCl-5", lastPub[1].Fingerprint)
	}

	// Two of one proposal share a new formula: both are fingerprinted (the
	// second is the first's duplicate); a third new formula is not.
	_, ids = propose(cand(3, 0, "KBr", 5, ""), cand(3, 1, "LiF", 7, ""), cand(3, 2, "KBr", 5, ""))
	check("shared new formula", ids, []string{id(3, 0), id(3, 1)}, []string{"KBr/5", "KBr/5"})

	// A fingerprinted candidate of a formula whose one structure has none:
	// that one is fingerprinted, and they differ.
	_, ids = propose(cand(4, 0, "LiF", 6, "LiF-6"))
	check("pending formula", ids, []string{id(4, 0)}, []string{"LiF/7"})

	// A structure that cannot be fingerprinted is told apart from every
	// other, whether it waited without a fingerprint or arrives.
	_, ids = propose(cand(5, 0, "CsI", 0, ""))
	check("unfingerprintable, new", ids, []string{id(5, 0)}, nil)
	_, ids = propose(cand(6, 0, "CsI", 2, ""), cand(6, 1, "RbF", 0, "RbF-x"))
	check("unfingerprintable, pending", ids, []string{id(6, 0), id(6, 1)}, []string{"CsI/0", "CsI/2"})
	_, ids = propose(cand(7, 0, "CsI", 0, ""))
	check("unfingerprintable, again", ids, []string{id(7, 0)}, []string{"CsI/0"})

	fps, formulas, err := s.SeenKeys(ctx, "lazy")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(fps)
	slices.Sort(formulas)
	formulas = slices.Compact(formulas)
	if want := []string{"CsI-2", "KBr-5", "LiF-6", "LiF-7", "NaCl-3", "NaCl-4", "NaCl-5", "RbF-x"}; !reflect.DeepEqual(fps, want) {
		t.Errorf("fingerprints %v, want %v", fps, want)
	}
	if want := []string{"CsI", "KBr", "LiF", "NaCl", "RbF"}; !reflect.DeepEqual(formulas, want) {
		t.Errorf("formulas %v, want %v", formulas, want)
	}

	// Without a formula, or a way to fingerprint, a fingerprint-less
	// candidate cannot be recorded.
	if _, err := s.RecordProposal(ctx, "lazy", &Proposal{Generation: 8, Candidates: []*messages.Candidate{cand(8, 0, "", 3, "")}, Fingerprint: fingerprint}); err == nil {
		t.Error("a candidate without fingerprint or formula was recorded")
	}
	if _, err := s.RecordProposal(ctx, "lazy", &Proposal{Generation: 8, Candidates: []*messages.Candidate{cand(8, 0, "MgO", 3, "")}}); err == nil {
		t.Error("a candidate without fingerprint was recorded without a way to compute one")
	}
}
