package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
	"github.com/crucible-sci/crucible/pkg/task"
)

func open(t testing.TB) *Store {
	t.Helper()
	url, _ := testsrv.Redis(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, Options{URL: url, Namespace: testsrv.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.DeleteNamespace(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		s.Close()
	})
	return s
}

func spec(t *testing.T, id string, budget, batch, episodes int) *messages.CampaignSpec {
	t.Helper()
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	c := &messages.CampaignSpec{ID: id, Task: tk, Budget: budget, BatchSize: batch, Episodes: episodes, SubmittedAt: time.Now()}
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

func candidate(campaign string, g, i int, fp string) *messages.Candidate {
	return &messages.Candidate{
		Schema: messages.SchemaVersion, ID: messages.CandidateID(campaign, g, i), Campaign: campaign,
		Generation: g, Index: i, Fingerprint: fp, Operator: "test",
		Structure: messages.Structure{Species: []string{"Na"}, Coords: [][3]float64{{0, 0, 0}}, Lattice: [3][3]float64{{3, 0, 0}, {0, 3, 0}, {0, 0, 3}}},
	}
}

func evaluation(c *messages.Candidate, episode int, score float64, feasible bool) *EvaluationRecord {
	return &EvaluationRecord{
		ID: c.ID, Generation: c.Generation, Episode: episode, Island: c.Island, Score: score,
		Feasible: feasible, Valid: true, Formula: "NaCl", PoolSize: 2,
		Member: Member{ID: c.ID, Formula: "NaCl", Score: score},
	}
}

func TestCampaignLifecycle(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "life", 5, 2, 1)
	created, err := s.CreateCampaign(ctx, sp, 0)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	if again, err := s.CreateCampaign(ctx, sp, 0); err != nil || again {
		t.Fatalf("second create: %v %v, want no-op", again, err)
	}

	// Three triggers reserve 2 + 2 + 1 slots; a fourth finds the budget
	// reserved; a repeated trigger gets its first answer.
	var gens []Generation
	for k := 0; k < 4; k++ {
		g, ok, err := s.RequestGeneration(ctx, "life", fmt.Sprintf("start/%d", k))
		if err != nil {
			t.Fatal(err)
		}
		if k == 3 {
			if ok {
				t.Fatalf("fourth request got %+v, want none", g)
			}
			continue
		}
		gens = append(gens, g)
	}
	if gens[0].Slots != 2 || gens[1].Slots != 2 || gens[2].Slots != 1 {
		t.Fatalf("slots %+v", gens)
	}
	if g, _, _ := s.RequestGeneration(ctx, "life", "start/1"); g != gens[1] {
		t.Fatalf("repeated trigger got %+v, want %+v", g, gens[1])
	}

	// Generation 0 proposes two candidates; generation 1 proposes one new
	// and one duplicate of generation 0's first.
	p0 := &Proposal{Generation: 0, Island: 0, Candidates: []*messages.Candidate{candidate("life", 0, 0, "fpA"), candidate("life", 0, 1, "fpB")}}
	pub0, err := s.RecordProposal(ctx, "life", p0)
	if err != nil || len(pub0) != 2 {
		t.Fatalf("proposal 0: %v %v", pub0, err)
	}
	again, err := s.RecordProposal(ctx, "life", &Proposal{Generation: 0, Candidates: []*messages.Candidate{candidate("life", 0, 0, "fpZ")}})
	if err != nil || len(again) != 2 || again[1].Fingerprint != "fpB" {
		t.Fatalf("repeated proposal must return the stored one: %v %v", again, err)
	}
	p1 := &Proposal{Generation: 1, Island: 1, Candidates: []*messages.Candidate{candidate("life", 1, 0, "fpA"), candidate("life", 1, 1, "fpC")}}
	pub1, err := s.RecordProposal(ctx, "life", p1)
	if err != nil || len(pub1) != 1 || pub1[0].Fingerprint != "fpC" {
		t.Fatalf("proposal 1: %v %v", pub1, err)
	}
	// The duplicate's slot went back: a refill can reserve it.
	refill, ok, err := s.RequestGeneration(ctx, "life", "refill/1")
	if err != nil || !ok || refill.Slots != 1 {
		t.Fatalf("refill: %+v %v %v", refill, ok, err)
	}

	// Evaluate generation 0: the second evaluation completes it.
	o, err := s.RecordEvaluation(ctx, "life", evaluation(pub0[0], 0, 0.5, true))
	if err != nil || o.GenerationDone || o.Index != 1 {
		t.Fatalf("eval 1: %+v %v", o, err)
	}
	o, err = s.RecordEvaluation(ctx, "life", evaluation(pub0[1], 0, -0.2, false))
	if err != nil || !o.GenerationDone || o.Index != 2 {
		t.Fatalf("eval 2: %+v %v", o, err)
	}
	// Completing generation 0 reserved the next one under trigger after/0
	// (none: the budget is reserved); asking again gets the same answer.
	if g, ok, err := s.RequestGeneration(ctx, "life", "after/0"); err != nil || !o.NextReserved || ok != (o.Next != nil) || ok && g != *o.Next {
		t.Fatalf("next after generation 0: outcome %+v, request %+v %v %v", o, g, ok, err)
	}
	// Redelivered: nothing changes, flags repeated.
	o, err = s.RecordEvaluation(ctx, "life", evaluation(pub0[1], 0, -0.2, false))
	if err != nil || !o.Duplicate || !o.GenerationDone || o.Index != 2 {
		t.Fatalf("redelivered eval: %+v %v", o, err)
	}
	st, err := s.State(ctx, "life")
	if err != nil {
		t.Fatal(err)
	}
	if st.Counters.Evaluated != 2 || st.Counters.Hits != 1 || st.Counters.Proposed != 3 || st.Counters.Rejected != 1 || st.Counters.Generations != 1 {
		t.Fatalf("counters %+v", st.Counters)
	}
	view, err := s.Island(ctx, "life", 0, 5)
	if err != nil || len(view.Successes) != 1 || view.Successes[0].ID != pub0[0].ID || len(view.Failures) != 1 {
		t.Fatalf("island view %+v %v", view, err)
	}

	// Generations 1 (1 candidate), 2 (1 slot) and the refill (1 slot)
	// bring the total to the budget of 5.
	_ = evaluation
	o, _ = s.RecordEvaluation(ctx, "life", evaluation(pub1[0], 0, 0.1, true))
	if !o.GenerationDone {
		t.Fatalf("generation 1 not done: %+v", o)
	}
	c2 := candidate("life", gens[2].Generation, 0, "fpD")
	if _, err := s.RecordProposal(ctx, "life", &Proposal{Generation: gens[2].Generation, Candidates: []*messages.Candidate{c2}}); err != nil {
		t.Fatal(err)
	}
	c3 := candidate("life", refill.Generation, 0, "fpE")
	if _, err := s.RecordProposal(ctx, "life", &Proposal{Generation: refill.Generation, Candidates: []*messages.Candidate{c3}}); err != nil {
		t.Fatal(err)
	}
	if o, _ = s.RecordEvaluation(ctx, "life", evaluation(c2, 0, 0.3, true)); o.CampaignDone {
		t.Fatal("done too early")
	}
	o, _ = s.RecordEvaluation(ctx, "life", evaluation(c3, 0, 0.3, true))
	if !o.CampaignDone || !o.EpisodeDone || o.Index != 5 {
		t.Fatalf("last evaluation: %+v", o)
	}
	st, _ = s.State(ctx, "life")
	if st.Status != messages.StateCompleted || st.Counters.Evaluated != 5 || st.Inflight != 0 {
		t.Fatalf("final state %+v inflight %d", st, st.Inflight)
	}
	if _, ok, _ := s.RequestGeneration(ctx, "life", "after/9"); ok {
		t.Fatal("request after completion")
	}
	// The chronological log holds each evaluation once (the redelivery
	// is not logged again), in the order recorded.
	log, err := s.EvaluationLog(ctx, "life", 0)
	if err != nil || len(log) != 5 {
		t.Fatalf("log %+v %v", log, err)
	}
	for i, e := range log {
		hit := i != 1
		if e.Index != i+1 || e.Formula != "NaCl" || e.Hit != hit || !e.Valid || e.Stable || e.EAboveHull != nil {
			t.Errorf("log entry %d: %+v", i, e)
		}
	}
	if other, err := s.EvaluationLog(ctx, "life", 1); err != nil || len(other) != 0 {
		t.Errorf("episode 1's log: %+v %v", other, err)
	}
	// Pools are bounded by the pool size (2).
	view, _ = s.Island(ctx, "life", 0, 10)
	if len(view.Successes) > 2 {
		t.Fatalf("pool of %d > 2", len(view.Successes))
	}
	// Every evaluation was of NaCl; counts are read for the formulas asked.
	counts, err := s.CompositionCounts(ctx, "life", "NaCl", "KCl")
	if err != nil || len(counts) != 2 || counts["NaCl"] != 5 || counts["KCl"] != 0 {
		t.Fatalf("composition counts %v %v", counts, err)
	}
	if counts, err := s.CompositionCounts(ctx, "life"); err != nil || len(counts) != 0 {
		t.Fatalf("composition counts of nothing: %v %v", counts, err)
	}
}

func TestEmptyGenerationsExhaust(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "exh", 10, 2, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < ExhaustionLimit; k++ {
		g, ok, err := s.RequestGeneration(ctx, "exh", fmt.Sprintf("t/%d", k))
		if err != nil || !ok {
			t.Fatalf("request %d: %v %v", k, ok, err)
		}
		if _, err := s.RecordProposal(ctx, "exh", &Proposal{Generation: g.Generation}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := s.State(ctx, "exh")
	if st.Status != messages.StateExhausted || st.Inflight != 0 || st.Counters.EmptyGenerations != ExhaustionLimit {
		t.Fatalf("state %s inflight %d counters %+v", st.Status, st.Inflight, st.Counters)
	}
}

// TestRejectsKept: an island keeps its most recent rejected proposals,
// newest first, at most MaxRejectsKept, and counts them all.
func TestRejectsKept(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, "rej", 10, 2, 1), 0); err != nil {
		t.Fatal(err)
	}
	const perGen = 20
	for k := range 2 {
		g, ok, err := s.RequestGeneration(ctx, "rej", fmt.Sprintf("t/%d", k))
		if err != nil || !ok {
			t.Fatalf("request %d: %v %v", k, ok, err)
		}
		p := &Proposal{Generation: g.Generation, Island: 1}
		for i := range perGen {
			p.Rejected = append(p.Rejected, Member{ID: fmt.Sprintf("r%d-%02d", k, i), Formula: "GaN"})
		}
		if _, err := s.RecordProposal(ctx, "rej", p); err != nil {
			t.Fatal(err)
		}
	}
	view, err := s.Island(ctx, "rej", 1, 2*MaxRejectsKept)
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Rejects) != MaxRejectsKept || view.Rejects[0].ID != "r1-19" || view.Rejects[perGen-1].ID != "r1-00" ||
		view.Rejects[perGen].ID != "r0-19" || view.Rejects[MaxRejectsKept-1].ID != fmt.Sprintf("r0-%02d", 2*perGen-MaxRejectsKept) {
		t.Fatalf("rejects %d, first %+v", len(view.Rejects), view.Rejects[0])
	}
	if st, err := s.State(ctx, "rej"); err != nil || st.Counters.Rejected != 2*perGen {
		t.Fatalf("counters %+v %v", st.Counters, err)
	}
}

func TestEpisodes(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "eps", 3, 2, 2) // episodes of 2 and 1 evaluations
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	g, ok, _ := s.RequestGeneration(ctx, "eps", "a")
	if !ok || g.Slots != 2 || g.Episode != 0 {
		t.Fatalf("%+v", g)
	}
	if _, ok, _ := s.RequestGeneration(ctx, "eps", "b"); ok {
		t.Fatal("episode 0 is fully reserved")
	}
	cs := []*messages.Candidate{candidate("eps", 0, 0, "a"), candidate("eps", 0, 1, "b")}
	if _, err := s.RecordProposal(ctx, "eps", &Proposal{Generation: 0, Candidates: cs}); err != nil {
		t.Fatal(err)
	}
	s.RecordEvaluation(ctx, "eps", evaluation(cs[0], 0, 0, true))
	o, _ := s.RecordEvaluation(ctx, "eps", evaluation(cs[1], 0, 0, true))
	if !o.EpisodeDone || o.CampaignDone {
		t.Fatalf("%+v", o)
	}
	for i := 0; i < 2; i++ { // idempotent
		if moved, err := s.AdvanceEpisode(ctx, "eps", 0); err != nil || !moved {
			t.Fatalf("advance: %v %v", moved, err)
		}
	}
	g, ok, _ = s.RequestGeneration(ctx, "eps", "c")
	if !ok || g.Slots != 1 || g.Episode != 1 {
		t.Fatalf("episode 1 generation %+v", g)
	}
	if moved, _ := s.AdvanceEpisode(ctx, "eps", 1); moved {
		t.Fatal("advanced past the last episode")
	}
}

func TestMemoryBank(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	r := &messages.Reflection{Schema: messages.SchemaVersion, Campaign: "m1", Context: "task-x", Bullets: []string{"avoid NaCl3"},
		Directives: []messages.Directive{{Kind: messages.DirectiveCapComposition, Formula: "NaCl3", Limit: 0, Reason: "never neutral"}}}
	ops := []reflection.ExperienceOp{{Experience: reflection.Experience{Key: "comp:NaCl3", Text: "NaCl3 is never charge neutral", Support: 4, Kind: "composition"}}}
	for i := 0; i < 2; i++ {
		applied, err := s.ApplyReflection(ctx, "task-x", "m1/0", r, nil, ops)
		if err != nil || applied != (i == 0) {
			t.Fatalf("apply %d: %v %v", i, applied, err)
		}
	}
	refl, dirs, _ := s.Bank(ctx, "task-x", 3)
	exps, _ := s.Experiences(ctx, "task-x")
	if len(refl) != 1 || len(dirs) != 1 || len(exps) != 1 || dirs[0].Formula != "NaCl3" {
		t.Fatalf("bank: %v %v %v", refl, dirs, exps)
	}
	r2 := *r
	r2.Directives = nil
	if _, err := s.ApplyReflection(ctx, "task-x", "m1/1", &r2, r.Directives, []reflection.ExperienceOp{{Delete: true, Experience: reflection.Experience{Key: "comp:NaCl3"}}}); err != nil {
		t.Fatal(err)
	}
	if exps, _ = s.Experiences(ctx, "task-x"); len(exps) != 0 {
		t.Fatalf("experience not deleted: %v", exps)
	}
	if dirs, _ = s.Directives(ctx, "task-x"); len(dirs) != 0 {
		t.Fatalf("directive not revoked: %v", dirs)
	}
}

// proposeGenerations creates campaign (budget 4, batch 2, one episode),
// and records gens generations of perGen candidates each, generation k on
// island k; it returns the candidates by generation.
func proposeGenerations(t *testing.T, s *Store, campaign string, gens, perGen int) [][]*messages.Candidate {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, campaign, 4, 2, 1), 0); err != nil {
		t.Fatal(err)
	}
	var out [][]*messages.Candidate
	for k := 0; k < gens; k++ {
		g, ok, err := s.RequestGeneration(ctx, campaign, fmt.Sprintf("start/%d", k))
		if err != nil || !ok {
			t.Fatalf("request: %v %v", ok, err)
		}
		var cs []*messages.Candidate
		for i := 0; i < perGen; i++ {
			c := candidate(campaign, g.Generation, i, fmt.Sprintf("fp%d%d", k, i))
			c.Island = k
			cs = append(cs, c)
		}
		if _, err := s.RecordProposal(ctx, campaign, &Proposal{Generation: g.Generation, Island: k, Candidates: cs}); err != nil {
			t.Fatal(err)
		}
		out = append(out, cs)
	}
	return out
}

// TestRecordEvaluationsBatch: recording a batch in one call (with a
// redelivery inside it, and two islands) leaves the same outcomes, counters
// and pools as recording the evaluations one by one.
func TestRecordEvaluationsBatch(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	run := func(campaign string, record func([]*EvaluationRecord) []Outcome) ([]Outcome, *State, []*IslandView) {
		var recs []*EvaluationRecord
		for k, cs := range proposeGenerations(t, s, campaign, 2, 2) {
			for i, c := range cs {
				recs = append(recs, evaluation(c, 0, float64(k+i)/4, i == 0))
			}
		}
		// The second evaluation is delivered twice.
		recs = append(recs[:2], append([]*EvaluationRecord{recs[1]}, recs[2:]...)...)
		outs := record(recs)
		st, err := s.State(ctx, campaign)
		if err != nil {
			t.Fatal(err)
		}
		var views []*IslandView
		for k := 0; k < 2; k++ {
			v, err := s.Island(ctx, campaign, k, 5)
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, v)
		}
		return outs, st, views
	}
	oneOuts, oneState, oneViews := run("one", func(rs []*EvaluationRecord) []Outcome {
		var outs []Outcome
		for _, r := range rs {
			o, err := s.RecordEvaluation(ctx, "one", r)
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, o)
		}
		return outs
	})
	batchOuts, batchState, batchViews := run("batch", func(rs []*EvaluationRecord) []Outcome {
		outs, err := s.RecordEvaluations(ctx, "batch", rs)
		if err != nil {
			t.Fatal(err)
		}
		return outs
	})
	if fmt.Sprint(oneOuts) != fmt.Sprint(batchOuts) {
		t.Fatalf("outcomes one by one %+v, batched %+v", oneOuts, batchOuts)
	}
	if !batchOuts[2].Duplicate || !batchOuts[4].CampaignDone || batchOuts[4].Index != 4 {
		t.Fatalf("batched outcomes %+v", batchOuts)
	}
	if oneState.Counters != batchState.Counters || batchState.Status != messages.StateCompleted || batchState.Counters.Evaluated != 4 {
		t.Fatalf("state one by one %+v, batched %+v", oneState, batchState)
	}
	for k := range oneViews {
		a, b := oneViews[k], batchViews[k]
		if len(a.Successes) != len(b.Successes) || len(a.Failures) != len(b.Failures) || len(b.Successes)+len(b.Failures) != 2 {
			t.Fatalf("island %d: one by one %+v, batched %+v", k, a, b)
		}
	}
	if outs, err := s.RecordEvaluations(ctx, "batch", nil); err != nil || outs != nil {
		t.Fatalf("empty batch: %v %v", outs, err)
	}
}

// TestFindsAppend: finds are read in recording order, from any offset; a
// redelivered evaluation adds none.
func TestFindsAppend(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	cs := proposeGenerations(t, s, "fnd", 1, 2)[0]
	var recs []*EvaluationRecord
	for i, c := range cs {
		r := evaluation(c, 0, 0.5, true)
		r.Find = &Find{ID: c.ID, Formula: []string{"GaN", "AlN"}[i], EnergyPerAtom: -float64(i + 1)}
		recs = append(recs, r)
	}
	outs, err := s.RecordEvaluations(ctx, "fnd", append(recs, recs[0]))
	if err != nil {
		t.Fatal(err)
	}
	// The second evaluation completed generation 0 and reserved the next
	// (2 of the budget's 4 left), which the repeat reports again.
	want := Generation{Generation: cs[0].Generation + 1, Slots: 2}
	if !outs[1].GenerationDone || outs[1].Next == nil || *outs[1].Next != want || outs[2].Next != nil {
		t.Fatalf("outcomes %+v, want generation %+v reserved by the second", outs, want)
	}
	all, err := s.Finds(ctx, "fnd")
	if err != nil || len(all) != 2 || all[0].Formula != "GaN" || all[1].Formula != "AlN" || all[1].EnergyPerAtom != -2 {
		t.Fatalf("finds %+v %v", all, err)
	}
	if rest, err := s.FindsFrom(ctx, "fnd", 1); err != nil || len(rest) != 1 || rest[0].ID != cs[1].ID {
		t.Fatalf("finds from 1: %+v %v", rest, err)
	}
	if none, err := s.FindsFrom(ctx, "fnd", 2); err != nil || len(none) != 0 {
		t.Fatalf("finds from 2: %+v %v", none, err)
	}
}

// TestRecordEvaluationsFailsWhole: when one evaluation of a batch cannot
// be recorded (here its island's pool key holds a string), the batch call
// fails; recorded one by one, the others succeed — those the failed call
// had applied come back as repeats, never counted twice — and only the bad
// one fails. The reflector falls back to exactly this.
func TestRecordEvaluationsFailsWhole(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var recs []*EvaluationRecord
	for _, cs := range proposeGenerations(t, s, "bad", 2, 1) {
		recs = append(recs, evaluation(cs[0], 0, 0.5, true))
	}
	if err := s.rdb.Set(ctx, s.poolKey("bad", 1, "success"), "not a sorted set", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordEvaluations(ctx, "bad", recs); err == nil {
		t.Fatal("a batch with an unrecordable evaluation succeeded")
	}
	o, err := s.RecordEvaluation(ctx, "bad", recs[0])
	if err != nil || o.Index != 1 {
		t.Fatalf("the good evaluation alone: %+v %v", o, err)
	}
	if _, err := s.RecordEvaluation(ctx, "bad", recs[1]); err == nil {
		t.Fatal("the bad evaluation alone succeeded")
	}
	if st, err := s.State(ctx, "bad"); err != nil || st.Counters.Evaluated != 1 || st.Counters.Hits != 1 {
		t.Fatalf("counters %+v %v, want the good evaluation counted once", st.Counters, err)
	}
}

// TestRecordEvaluationsBatchTrims: a batch that overfills both islands'
// pools (with tied scores), adds finds, hits, discovery-curve points and
// composition statistics leaves every key exactly as recording the same
// evaluations one by one does.
func TestRecordEvaluationsBatchTrims(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	scores := []float64{0.5, 0.5, 0.5, 0.75, 0.5, 0.5}
	formulas := []string{"GaN", "AlN", "GaN", "ZnO", "AlN", "GaN"}
	run := func(campaign string, record func([]*EvaluationRecord)) map[string]string {
		if _, err := s.CreateCampaign(ctx, spec(t, campaign, 12, 6, 1), 0); err != nil {
			t.Fatal(err)
		}
		var recs []*EvaluationRecord
		for k := range 2 {
			g, ok, err := s.RequestGeneration(ctx, campaign, fmt.Sprintf("start/%d", k))
			if err != nil || !ok || g.Slots != 6 {
				t.Fatalf("request: %+v %v %v", g, ok, err)
			}
			var cs []*messages.Candidate
			for i := range 6 {
				c := candidate(campaign, g.Generation, i, fmt.Sprintf("fp%d%d", k, i))
				c.Island = k
				cs = append(cs, c)
			}
			if _, err := s.RecordProposal(ctx, campaign, &Proposal{Generation: g.Generation, Island: k, Candidates: cs}); err != nil {
				t.Fatal(err)
			}
			for i, c := range cs {
				r := evaluation(c, 0, scores[i]+0.1*float64(k), i%2 == 0)
				r.Formula, r.Member.Formula = formulas[i], formulas[i]
				r.Stable, r.Novel, r.Known = i%3 == 0, i != 4, i == 4
				if i != 5 {
					e := 0.01*float64(i) + 0.003*float64(k)
					r.EAboveHull = &e
				}
				if i == 0 {
					r.Find = &Find{ID: c.ID, Formula: formulas[i], EnergyPerAtom: -1.5}
				}
				if r.Feasible {
					r.Hit = &HitDoc{Formula: formulas[i], Score: r.Score, Margins: map[string]float64{"band_gap": r.Score}}
				}
				recs = append(recs, r)
			}
		}
		record(recs)
		out := map[string]string{}
		for name, key := range map[string]string{"state": s.stateKey(campaign), "evaluated": s.evaluatedKey(campaign),
			"gens": s.gensKey(campaign), "comps": s.compsKey(campaign), "docs": s.docsKey(campaign),
			"islands": s.islandsKey(campaign), "hits": s.hitsKey(campaign), "triggers": s.triggersKey(campaign)} {
			m, err := s.rdb.HGetAll(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			delete(m, "created")
			out[name] = fmt.Sprint(m)
		}
		for name, key := range map[string]string{"finds": s.findsKey(campaign), "curve": s.curveKey(campaign)} {
			out[name] = fmt.Sprint(s.rdb.LRange(ctx, key, 0, -1).Val())
		}
		for k := range 2 {
			for _, kind := range []string{"success", "failure"} {
				out[fmt.Sprint(k, kind)] = fmt.Sprint(s.rdb.ZRangeWithScores(ctx, s.poolKey(campaign, k, kind), 0, -1).Val())
			}
		}
		for name, v := range out {
			out[name] = strings.ReplaceAll(v, campaign, "CAMPAIGN")
		}
		return out
	}
	one := run("trim-one", func(rs []*EvaluationRecord) {
		for _, r := range rs {
			if _, err := s.RecordEvaluation(ctx, "trim-one", r); err != nil {
				t.Fatal(err)
			}
		}
	})
	batch := run("trim-batch", func(rs []*EvaluationRecord) {
		if _, err := s.RecordEvaluations(ctx, "trim-batch", rs); err != nil {
			t.Fatal(err)
		}
	})
	for name, v := range one {
		if batch[name] != v {
			t.Errorf("%s one by one:\n%s\nbatched:\n%s", name, v, batch[name])
		}
	}
	// The pools kept the two best of each kind; the docs hash holds
	// exactly the pools' members.
	if p := batch["0success"]; p != "[{0.5 CAMPAIGN-g0-c2} {0.5 CAMPAIGN-g0-c4}]" {
		t.Errorf("island 0 successes %s", p)
	}
	if d := batch["docs"]; strings.Count(d, `"id":`) != 8 {
		t.Errorf("docs %s, want the 8 pool members'", d)
	}
	if !strings.Contains(batch["state"], "evaluated:12") || !strings.Contains(batch["state"], "status:completed") {
		t.Errorf("state %s", batch["state"])
	}
}

// TestIslandMembersDecodedOnce: a view's members are decoded once per
// document text and then shared; a document that does not decode is left
// out of the view.
func TestIslandMembersDecodedOnce(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	cs := proposeGenerations(t, s, "view", 1, 2)[0]
	if _, err := s.RecordEvaluations(ctx, "view", []*EvaluationRecord{evaluation(cs[0], 0, 0.5, true), evaluation(cs[1], 0, 0.25, false)}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Island(ctx, "view", 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Successes) != 1 || len(first.Failures) != 1 || first.Successes[0].ID != cs[0].ID || first.Failures[0].Score != 0.25 {
		t.Fatalf("view %+v", first)
	}
	if n := len(s.members.m); n != 2 {
		t.Fatalf("%d decoded documents cached, want 2", n)
	}
	again, err := s.Island(ctx, "view", 0, 5)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Fatalf("second view %+v %v, want %+v", again, err, first)
	}
	if err := s.rdb.HSet(ctx, s.docsKey("view"), cs[1].ID, "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	bad, err := s.Island(ctx, "view", 0, 5)
	if err != nil || len(bad.Failures) != 0 || len(bad.Successes) != 1 {
		t.Fatalf("view with an undecodable document: %+v %v", bad, err)
	}
}

// TestSpaceGroupCounts: the campaign counts its valid candidates per space
// group, and its novel stable ones apart; a redelivery and a candidate
// without a group count for nothing.
func TestSpaceGroupCounts(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "sg", 5, 5, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	g, ok, err := s.RequestGeneration(ctx, "sg", "start/0")
	if err != nil || !ok || g.Slots != 5 {
		t.Fatalf("generation: %+v %v %v", g, ok, err)
	}
	var cs []*messages.Candidate
	for i := range 5 {
		cs = append(cs, candidate("sg", g.Generation, i, fmt.Sprintf("fp%d", i)))
	}
	pub, err := s.RecordProposal(ctx, "sg", &Proposal{Generation: g.Generation, Candidates: cs})
	if err != nil || len(pub) != 5 {
		t.Fatalf("proposal: %v %v", pub, err)
	}
	groups := []int{225, 225, 62, 0, 225}
	for i, c := range pub {
		r := evaluation(c, 0, 0.1, true)
		r.SpaceGroup = groups[i]
		r.Novel, r.Stable = i < 2, i < 2
		if _, err := s.RecordEvaluation(ctx, "sg", r); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if o, err := s.RecordEvaluation(ctx, "sg", r); err != nil || !o.Duplicate {
				t.Fatalf("redelivery: %+v %v", o, err)
			}
		}
	}
	st, err := s.State(ctx, "sg")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]int{225: 3, 62: 1}; !reflect.DeepEqual(st.SpaceGroups, want) {
		t.Errorf("space groups %v, want %v", st.SpaceGroups, want)
	}
	if want := map[int]int{225: 2}; !reflect.DeepEqual(st.StableSpaceGroups, want) {
		t.Errorf("stable space groups %v, want %v", st.StableSpaceGroups, want)
	}
}
