package oracle

import (
	"math"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// scaled returns s with its lattice scaled to f times its volume.
func scaled(t *testing.T, s *crystal.Structure, f float64) *crystal.Structure {
	t.Helper()
	m := s.Lattice.Matrix()
	c := math.Cbrt(f)
	for i := range 3 {
		for j := range 3 {
			m[i][j] *= c
		}
	}
	l, err := crystal.NewLattice(m)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Copy()
	out.Lattice = l
	return out
}

// TestNoveltyClasses: known compounds are recognised by structure (at any
// density), a known formula in another structure is a new polymorph with
// the surrogates' values placed against the known polymorph, and an
// ordered mixture of isovalent known phases is named with its end members.
func TestNoveltyClasses(t *testing.T) {
	o := testOracle(t)
	rocksalt := crystaltest.Build(t, "rocksalt", "LiF")
	res := evaluate(t, o,
		Request{Structure: rocksalt, Hull: true},
		Request{Structure: scaled(t, rocksalt, 1.3), Hull: true},
		Request{Structure: crystaltest.Build(t, "cscl", "LiF"), Hull: true},
		Request{Structure: crystaltest.Build(t, "nafeo2", "NaLiF2"), Hull: true},
		Request{Structure: crystaltest.Build(t, "perovskite", "CsPbI3"), Hull: true},
	)
	for i, r := range res {
		if r.Novelty == nil {
			t.Fatalf("result %d (%s): no novelty", i, r.Formula)
		}
		t.Logf("%s: %+v, E_hull %+v", r.Formula, *r.Novelty, r.Stability)
	}
	for i, r := range res[:2] {
		if r.Novelty.Class != messages.NoveltyKnownStructure || r.Novelty.Match == "" {
			t.Errorf("rock-salt LiF %d: %+v, want a known structure", i, *r.Novelty)
		}
		if fe := r.Properties["formation_energy_per_atom"]; fe.Source != SourceReference {
			t.Errorf("rock-salt LiF %d: formation energy from %s, want the reference", i, fe.Source)
		}
	}

	poly := res[2]
	if poly.Novelty.Class != messages.NoveltyNewPolymorph || len(poly.Novelty.Polymorphs) == 0 {
		t.Fatalf("CsCl-type LiF: %+v, want a new polymorph with the known ones listed", *poly.Novelty)
	}
	if !poly.Known {
		t.Error("CsCl-type LiF: Known false, want true (the formula is in the reference tables)")
	}
	for name, v := range poly.Properties {
		if v.Source == SourceReference {
			t.Errorf("CsCl-type LiF: %s from the reference tables, want the surrogate's", name)
		}
	}
	st := poly.Stability
	lif := res[0].Properties["formation_energy_per_atom"].Value
	if st == nil || st.FormationEnergySource != SourceCGCNN || st.ReferenceEAboveHull != nil {
		t.Fatalf("CsCl-type LiF: stability %+v, want the surrogate's energy and no reference E_hull", st)
	}
	if want := poly.Properties["formation_energy_per_atom"].Value - lif; math.Abs(st.EAboveHull-want) > 1e-9 || st.Decomposition["LiF"] != 1 {
		t.Errorf("CsCl-type LiF: E_hull %v, decomposition %v; want %v against rock-salt LiF", st.EAboveHull, st.Decomposition, want)
	}

	mix := res[3]
	if mix.Stability == nil || !(mix.Stability.EAboveHull > 0) {
		t.Fatalf("NaLiF2: stability %+v, want above the hull of NaF + LiF", mix.Stability)
	}
	if mix.Novelty.Class != messages.NoveltyOrderedMixture {
		t.Fatalf("NaLiF2: %+v, want an ordered mixture", *mix.Novelty)
	}
	if em := mix.Novelty.EndMembers; len(em) != 2 || math.Abs(em["NaF"]-0.5) > 1e-9 || math.Abs(em["LiF"]-0.5) > 1e-9 {
		t.Errorf("NaLiF2: end members %v, want NaF and LiF at 0.5", em)
	}
	if c := res[4].Novelty.Class; c == messages.NoveltyOrderedMixture {
		t.Errorf("CsPbI3: %s, want no mixture (no isovalent ions)", c)
	}
}
