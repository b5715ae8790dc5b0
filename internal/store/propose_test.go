package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

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

// TestRecordProposalsBatch: proposals recorded in one batch publish the
// same candidates and leave every key as recording them one by one, in
// order, does: a later proposal is deduplicated against earlier ones of
// its batch, one that needs fingerprints is called again from there on, a
// repeat gets what was stored, and one that cannot be recorded (an unknown
// generation, a candidate that cannot be keyed) fails alone. A batch that
// needs no fingerprint is one script call.
func TestRecordProposalsBatch(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var scripts atomic.Int64
	s.rdb.AddHook(scriptCounter{&scripts})
	fingerprint := func(st messages.Structure) (string, error) {
		return fmt.Sprintf("%s-%g", st.Formula, st.Lattice[0][0]), nil
	}
	proposals := func(campaign string) []*Proposal {
		cand := func(g, i int, formula string, a float64, fp string) *messages.Candidate {
			return &messages.Candidate{
				Schema: messages.SchemaVersion, ID: messages.CandidateID(campaign, g, i), Campaign: campaign,
				Generation: g, Index: i, Formula: formula, Fingerprint: fp, Operator: "test",
				Structure: messages.Structure{Formula: formula, Species: []string{"Na"}, Coords: [][3]float64{{0, 0, 0}},
					Lattice: [3][3]float64{{a, 0, 0}, {0, 3, 0}, {0, 0, 3}}},
			}
		}
		p := func(g, island int, cs ...*messages.Candidate) *Proposal {
			return &Proposal{Generation: g, Island: island, Candidates: cs, Fingerprint: fingerprint}
		}
		rejected := p(2, 1, cand(2, 0, "LiF", 7, ""))
		rejected.Rejected = []Member{{ID: messages.CandidateID(campaign, 2, 1), Formula: "Li2O", Score: -1}}
		rejected.PromptTokens, rejected.LLMCalls = 40, 1
		return []*Proposal{
			p(0, 0, cand(0, 0, "NaCl", 3, ""), cand(0, 1, "KBr", 5, "KBr-5")),
			p(1, 1, cand(1, 0, "NaCl", 3, ""), cand(1, 1, "KBr", 5, "KBr-5")), // duplicates of generation 0
			p(0, 0, cand(0, 0, "NaCl", 4, "")),                                // a repeat of generation 0
			rejected,
			p(99, 0, cand(99, 0, "CsI", 2, "")),                              // no such generation
			p(3, 2, cand(3, 0, "LiF", 6, ""), cand(3, 1, "MgO", 4, "MgO-4")), // LiF met again
			p(4, 0, cand(4, 0, "", 3, "")),                                   // cannot be keyed
			p(4, 0, cand(4, 0, "NaCl", 5, ""), cand(4, 1, "ZnO", 3, "")),
		}
	}
	run := func(campaign string, record func([]*Proposal) []Recorded) ([]string, map[string]string) {
		t.Helper()
		if _, err := s.CreateCampaign(ctx, spec(t, campaign, 40, 2, 1), 0); err != nil {
			t.Fatal(err)
		}
		for k := range 5 {
			if _, ok, err := s.RequestGeneration(ctx, campaign, fmt.Sprintf("start/%d", k)); err != nil || !ok {
				t.Fatalf("request: %v %v", ok, err)
			}
		}
		var got []string
		for _, r := range record(proposals(campaign)) {
			var ids []string
			for _, c := range r.Published {
				ids = append(ids, c.ID)
			}
			got = append(got, fmt.Sprintf("%v err=%v", ids, r.Err != nil))
		}
		keys := map[string]string{}
		for name, key := range map[string]string{"state": s.stateKey(campaign), "gens": s.gensKey(campaign), "seen": s.seenKey(campaign)} {
			m, err := s.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			delete(m, "created")
			keys[name] = fmt.Sprint(m)
		}
		for k := range 3 {
			keys[fmt.Sprint("rejects", k)] = fmt.Sprint(s.rdb.LRange(ctx, s.poolKey(campaign, k, "rejects"), 0, -1).Val())
		}
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], campaign, "CAMPAIGN")
		}
		for name, v := range keys {
			keys[name] = strings.ReplaceAll(v, campaign, "CAMPAIGN")
		}
		return got, keys
	}
	oneGot, oneKeys := run("rec-one", func(ps []*Proposal) []Recorded {
		var out []Recorded
		for _, p := range ps {
			pub, err := s.RecordProposal(ctx, "rec-one", p)
			out = append(out, Recorded{pub, err})
		}
		return out
	})
	var calls int64
	batchGot, batchKeys := run("rec-batch", func(ps []*Proposal) []Recorded {
		before := scripts.Load()
		defer func() { calls = scripts.Load() - before }()
		return s.RecordProposals(ctx, "rec-batch", ps)
	})
	want := []string{
		"[CAMPAIGN-g0-c0 CAMPAIGN-g0-c1] err=false",
		"[] err=false",
		"[CAMPAIGN-g0-c0 CAMPAIGN-g0-c1] err=false",
		"[CAMPAIGN-g2-c0] err=false",
		"[] err=true",
		"[CAMPAIGN-g3-c0 CAMPAIGN-g3-c1] err=false",
		"[] err=true",
		"[CAMPAIGN-g4-c0 CAMPAIGN-g4-c1] err=false",
	}
	if !slices.Equal(oneGot, want) {
		t.Errorf("one by one published\n%v\nwant\n%v", strings.Join(oneGot, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(batchGot, oneGot) {
		t.Errorf("batched published\n%v\none by one\n%v", strings.Join(batchGot, "\n"), strings.Join(oneGot, "\n"))
	}
	for name, v := range oneKeys {
		if batchKeys[name] != v {
			t.Errorf("%s one by one:\n%s\nbatched:\n%s", name, v, batchKeys[name])
		}
	}
	// Generation 1 needed fingerprints (NaCl came back), generation 3 too
	// (LiF came back), generation 4's NaCl too: three calls after the first.
	if calls != 4 {
		t.Errorf("the batch made %d script calls, want 4", calls)
	}

	// A batch without anything to fingerprint is one call.
	if _, ok, err := s.RequestGeneration(ctx, "rec-batch", "more/0"); err != nil || !ok {
		t.Fatalf("request: %v %v", ok, err)
	}
	if _, ok, err := s.RequestGeneration(ctx, "rec-batch", "more/1"); err != nil || !ok {
		t.Fatalf("request: %v %v", ok, err)
	}
	before := scripts.Load()
	rs := s.RecordProposals(ctx, "rec-batch", []*Proposal{
		{Generation: 5, Candidates: []*messages.Candidate{candidate("rec-batch", 5, 0, "fp5")}},
		{Generation: 6, Candidates: []*messages.Candidate{candidate("rec-batch", 6, 0, "fp6"), candidate("rec-batch", 6, 1, "fp5")}},
	})
	if n := scripts.Load() - before; n != 1 {
		t.Errorf("a batch needing no fingerprint made %d script calls, want 1", n)
	}
	if rs[0].Err != nil || len(rs[0].Published) != 1 || rs[1].Err != nil || len(rs[1].Published) != 1 || rs[1].Published[0].Fingerprint != "fp6" {
		t.Errorf("results %+v", rs)
	}
}

// scriptCounter counts the script calls a client makes.
type scriptCounter struct{ n *atomic.Int64 }

func (h scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := cmd.Name(); name == "evalsha" || name == "eval" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
