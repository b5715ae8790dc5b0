package novelty

import (
	"slices"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
)

// phases builds a decomposition from "formula:fraction" pairs.
func phases(pairs ...any) []hull.Phase {
	var out []hull.Phase
	for i := 0; i < len(pairs); i += 2 {
		f := pairs[i].(string)
		out = append(out, hull.Phase{Entry: hull.Entry{ID: f, Composition: crystal.MustParseFormula(f)}, Fraction: pairs[i+1].(float64)})
	}
	return out
}

// The rule on hand-made hull results: which decompositions make a
// candidate a mixture, and why not otherwise.
func TestOrderedMixtureRule(t *testing.T) {
	for _, tc := range []struct {
		name    string
		formula string
		ehull   float64
		decomp  []hull.Phase
		opt     MixtureOptions
		want    MixtureReason
		swaps   [][]string
	}{
		{"NaLiF2 = NaF + LiF", "NaLiF2", 0.05, phases("NaF", 0.5, "LiF", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Li", "Na"}}},
		{"KLiCl2 = KCl + LiCl", "KLiCl2", 0.02, phases("KCl", 0.5, "LiCl", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Li", "K"}}},
		{"CaMgO2 = CaO + MgO", "CaMgO2", 0.08, phases("CaO", 0.5, "MgO", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Mg", "Ca"}}},
		{"BaCaF4 = BaF2 + CaF2", "BaCaF4", 0.01, phases("BaF2", 0.5, "CaF2", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Ca", "Ba"}}},
		{"KRbF2 = KF + RbF", "KRbF2", 0.003, phases("KF", 0.5, "RbF", 0.5), MixtureOptions{}, IsMixture, [][]string{{"K", "Rb"}}},
		{"K3Na(SO4)2 = K2SO4 + Na2SO4", "K3NaS2O8", 0.02, phases("K2SO4", 0.75, "Na2SO4", 0.25), MixtureOptions{}, IsMixture, [][]string{{"Na", "K"}}},
		{"Na2ClBr, anion swap", "Na2ClBr", 0.02, phases("NaCl", 0.5, "NaBr", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Cl", "Br"}}},
		{"KNaClBr, both swapped, three corners", "KNaClBr", 0.02, phases("KCl", 0.5, "NaBr", 0.5), MixtureOptions{}, IsMixture, [][]string{{"Cl", "Br"}, {"Na", "K"}}},
		{"NaLiF2 on the hull", "NaLiF2", 0, phases("NaF", 0.5, "LiF", 0.5), MixtureOptions{}, NotAboveHull, nil},
		{"NaLiF2 below the hull", "NaLiF2", -0.03, phases("NaF", 0.5, "LiF", 0.5), MixtureOptions{}, NotAboveHull, nil},
		{"BaTiO3 above BaO + TiO2", "BaTiO3", 0.05, phases("TiO2", 0.6, "BaO", 0.4), MixtureOptions{}, NoSwap, nil},
		{"MgAl2O4 above MgO + Al2O3", "MgAl2O4", 0.05, phases("Al2O3", 5.0/7, "MgO", 2.0/7), MixtureOptions{}, NoSwap, nil},
		{"CsLiF2 above a known CsLiF2", "CsLiF2", 0.05, phases("CsLiF2", 1.0), MixtureOptions{}, OtherPhases, [][]string{{"Li", "Cs"}}},
		// The end members would be K2MgF4 and Na2MgF4.
		{"KNaMgF4 above KMgF3 + NaF", "KNaMgF4", 0.05, phases("KMgF3", 5.0/7, "NaF", 2.0/7), MixtureOptions{}, OtherPhases, [][]string{{"Na", "K"}}},
		{"KLiCl2 with a 1.5 radius limit", "KLiCl2", 0.02, phases("KCl", 0.5, "LiCl", 0.5), MixtureOptions{MaxRadiusRatio: 1.5}, NoSwap, nil},
		{"KRbF2 with a 1.5 radius limit", "KRbF2", 0.02, phases("KF", 0.5, "RbF", 0.5), MixtureOptions{MaxRadiusRatio: 1.5}, IsMixture, [][]string{{"K", "Rb"}}},
		{"NiAl, intermetallic", "NiAl", 0.05, phases("Ni", 0.5, "Al", 0.5), MixtureOptions{}, NoSwap, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := OrderedMixture(crystal.MustParseFormula(tc.formula), hull.Result{EAboveHull: tc.ehull, Decomposition: tc.decomp}, tc.opt)
			if m.Reason != tc.want || m.Mixture != (tc.want == IsMixture) {
				t.Fatalf("%v (%q), want %q; swaps %v", m.Mixture, m.Reason, tc.want, m.Swaps)
			}
			if tc.swaps == nil {
				return
			}
			var got [][]string
			for _, set := range m.Swaps {
				var names []string
				for _, ion := range set {
					names = append(names, ion.Element.Symbol())
				}
				got = append(got, names)
			}
			if !slices.EqualFunc(got, tc.swaps, slices.Equal) {
				t.Errorf("swaps %v, want %v", got, tc.swaps)
			}
			if m.Mixture && !(m.RadiusRatio >= 1) {
				t.Errorf("radius ratio %v", m.RadiusRatio)
			}
		})
	}
}

var refHull = sync.OnceValues(func() (*hull.Cache, error) {
	db, err := refDB()
	if err != nil {
		return nil, err
	}
	return hull.NewCache(db.HullEntries())
})

// The mixtures on the Materials Project hull: each, 0.05 eV/atom
// above the hull at its composition, decomposes into its isovalent end
// members; real ternaries and compounds without a shared charge do not.
func TestOrderedMixtureOnMPHull(t *testing.T) {
	dataRoot(t)
	c, err := refHull()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		formula string
		want    MixtureReason
		ends    []string
	}{
		{"NaLiF2", IsMixture, []string{"LiF", "NaF"}},
		{"KLiCl2", IsMixture, []string{"KCl", "LiCl"}},
		{"CaMgO2", IsMixture, []string{"CaO", "MgO"}},
		{"BaCaF4", IsMixture, []string{"BaF2", "CaF2"}},
		{"KRbF2", IsMixture, []string{"KF", "RbF"}},
		// Real compounds on the hull: the decomposition is the compound.
		{"BaTiO3", NoSwap, nil},
		{"MgAl2O4", NoSwap, nil},
		{"KMgF3", NoSwap, nil},
	} {
		t.Run(tc.formula, func(t *testing.T) {
			comp := crystal.MustParseFormula(tc.formula)
			at, err := c.Query(comp, 0) // the hull energy at the composition
			if err != nil {
				t.Fatal(err)
			}
			h, err := c.Query(comp, at.HullEnergy+0.05)
			if err != nil {
				t.Fatal(err)
			}
			m := OrderedMixture(comp, h, MixtureOptions{})
			var ends []string
			for _, p := range m.EndMembers {
				ends = append(ends, p.Composition.ReducedFormula())
			}
			slices.Sort(ends)
			t.Logf("E_hull %.3f, decomposition %v: %s (radius ratio %.2f)", h.EAboveHull, ends, m.Reason, m.RadiusRatio)
			if m.Reason != tc.want {
				t.Fatalf("%q, want %q", m.Reason, tc.want)
			}
			if tc.ends != nil && !slices.Equal(ends, tc.ends) {
				t.Errorf("end members %v, want %v", ends, tc.ends)
			}
		})
	}
}
