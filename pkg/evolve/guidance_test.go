package evolve

import (
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

func TestGuidanceFrom(t *testing.T) {
	g := GuidanceFrom([]reflection.Experience{
		{Key: "sys:Al-N", Outcome: reflection.OutcomeProductive},
		{Key: "comp:AlN", Outcome: reflection.OutcomeProductive},
		{Key: "comp:AlP", Outcome: reflection.OutcomeProductive},
		{Key: "elem:Fe", Outcome: reflection.OutcomeUnproductive},
		{Key: "comp:ZnSe", Outcome: reflection.OutcomeUnproductive},
		{Key: "sys:Mg-O"}, // unknown outcome: no weight
		{Key: "fam:ABC3", Outcome: reflection.OutcomeProductive},
		{Key: "fam:AB2", Outcome: reflection.OutcomeUnproductive},
	}, []messages.Directive{
		{Kind: messages.DirectiveCapComposition, Formula: "ZnSe", Limit: 3},
		{Kind: messages.DirectiveCapComposition, Formula: "FeO", Limit: 3},
		{Kind: messages.DirectiveCapComposition, Formula: "Fe2O3", Limit: 4},
		{Kind: messages.DirectiveExcludeElement, Element: "Cd"},
	})
	want := map[string]float64{"Al": 2, "N": 1.69, "P": 1.3, "Fe": 0.75 * 0.9 * 0.9, "Zn": 0.75 * 0.9, "Se": 0.75 * 0.9, "O": 0.9 * 0.9}
	for sym, w := range want {
		if got := g.Elements[sym]; got < w-1e-9 || got > w+1e-9 {
			t.Errorf("%s: weight %v, want %v", sym, got, w)
		}
	}
	if _, ok := g.Elements["Mg"]; ok {
		t.Error("a lesson of unknown outcome weighs")
	}
	if g.operator(OpSameGroup) != guideExploit || g.operator(OpCrossover) != guideExplore || g.operator(OpRedox) != 1 {
		t.Errorf("operators %v", g.Operators)
	}
	if g.Families["ABC3"] != guideProductive || g.Families["AB2"] != guideUnproductive || len(g.Families) != 2 {
		t.Errorf("families %v", g.Families)
	}
	srtio3, _ := crystal.ParseFormula("BaZrS3")
	if f := g.composition(srtio3); f != guideProductive {
		t.Errorf("BaZrS3 weighs %v, want %v (its family's)", f, guideProductive)
	}
	if g := GuidanceFrom(nil, nil); len(g.Elements)+len(g.Operators)+len(g.Families) != 0 || g.weighsCompositions() {
		t.Errorf("empty bank: %+v", g)
	}
}

// TestGuidanceShiftsProposals: over 40 generations, the share of proposals
// with Al grows when a productive lesson on Al-N weighs it up, and the
// share with Fe falls when lessons weigh it down.
func TestGuidanceShiftsProposals(t *testing.T) {
	successes, failures := pools(t)
	share := func(guide Guidance) (al, fe float64) {
		n := 0
		for seed := uint64(0); seed < 40; seed++ {
			in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 4, RNG: rand.New(rand.NewPCG(seed, 7)), Guidance: guide}
			out, _ := Propose(in)
			for _, p := range out {
				c, err := crystal.ParseFormula(p.Formula)
				if err != nil {
					t.Fatal(err)
				}
				n++
				for _, e := range c.Elements() {
					switch e.Symbol() {
					case "Al":
						al++
					case "Fe":
						fe++
					}
				}
			}
		}
		return al / float64(n), fe / float64(n)
	}
	al0, fe0 := share(Guidance{})
	al1, fe1 := share(GuidanceFrom([]reflection.Experience{
		{Key: "sys:Al-N", Outcome: reflection.OutcomeProductive},
		{Key: "comp:AlN", Outcome: reflection.OutcomeProductive},
		{Key: "elem:Fe", Outcome: reflection.OutcomeUnproductive},
		{Key: "comp:FeO", Outcome: reflection.OutcomeUnproductive},
	}, nil))
	t.Logf("share with Al %.3f → %.3f, with Fe %.3f → %.3f", al0, al1, fe0, fe1)
	if !(al1 > al0) || !(fe1 < fe0) {
		t.Errorf("guidance did not shift the proposals: Al %.3f → %.3f, Fe %.3f → %.3f", al0, al1, fe0, fe1)
	}
}
