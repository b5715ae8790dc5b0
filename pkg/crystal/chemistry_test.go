package crystal

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

func TestJudgeComposition(t *testing.T) {
	cases := []struct {
		formula string
		class   BondingClass
		code    ReasonCode         // "" for valid
		states  map[string]float64 // best assignment, when one is expected
	}{
		// The compounds the SMACT test rejected.
		{formula: "TiN", class: ClassIonic, states: map[string]float64{"Ti": 3, "N": -3}},
		{formula: "ZrN", class: ClassIonic, states: map[string]float64{"Zr": 3, "N": -3}},
		{formula: "NbN", class: ClassIonic, states: map[string]float64{"Nb": 3, "N": -3}},
		{formula: "TaC", class: ClassIonic, states: map[string]float64{"Ta": 4, "C": -4}},
		{formula: "Mo2C", class: ClassIonic, states: map[string]float64{"Mo": 2, "C": -4}},
		{formula: "TiB2", class: ClassPolyanionic},
		{formula: "ZrB2", class: ClassPolyanionic},
		{formula: "MgB2", class: ClassPolyanionic},
		{formula: "LaB6", class: ClassPolyanionic},
		{formula: "B4C", class: ClassCovalent},
		{formula: "FeS2", class: ClassIonic, states: map[string]float64{"Fe": 2, "S": -1}},
		{formula: "VO2", class: ClassIonic, states: map[string]float64{"V": 4, "O": -2}},
		{formula: "Ti2O3", class: ClassIonic, states: map[string]float64{"Ti": 3, "O": -2}},
		{formula: "CrO2", class: ClassIonic, states: map[string]float64{"Cr": 4, "O": -2}},
		{formula: "Cu2O", class: ClassIonic, states: map[string]float64{"Cu": 1, "O": -2}},
		{formula: "Fe3O4", class: ClassIonic, states: map[string]float64{"Fe": 8.0 / 3, "O": -2}},
		{formula: "Mn3O4", class: ClassIonic, states: map[string]float64{"Mn": 8.0 / 3, "O": -2}},
		{formula: "Co3O4", class: ClassIonic, states: map[string]float64{"Co": 8.0 / 3, "O": -2}},
		{formula: "FeSi", class: ClassMetalRich},
		{formula: "MoSi2", class: ClassMetalRich},
		{formula: "NiAs", class: ClassIonic, states: map[string]float64{"Ni": 3, "As": -3}},
		// Ionic compounds.
		{formula: "NaCl", class: ClassIonic, states: map[string]float64{"Na": 1, "Cl": -1}},
		{formula: "SrTiO3", class: ClassIonic, states: map[string]float64{"Sr": 2, "Ti": 4, "O": -2}},
		{formula: "Cu2ZnSnS4", class: ClassIonic, states: map[string]float64{"Cu": 1, "Zn": 2, "Sn": 4, "S": -2}},
		{formula: "Li7La3Zr2O12", class: ClassIonic, states: map[string]float64{"Li": 1, "La": 3, "Zr": 4, "O": -2}},
		{formula: "GaAs", class: ClassIonic, states: map[string]float64{"Ga": 3, "As": -3}},
		// Extended states with hard anions: Ru⁷⁺ of perruthenate, Cl⁷⁺ of
		// perchlorate; mixed valence over two formula units (Pd²⁺Pd⁴⁺F₆).
		{formula: "KRuO4", class: ClassIonic, states: map[string]float64{"K": 1, "Ru": 7, "O": -2}},
		{formula: "NaClO4", class: ClassIonic, states: map[string]float64{"Na": 1, "Cl": 7, "O": -2}},
		{formula: "PdF3", class: ClassIonic, states: map[string]float64{"Pd": 3, "F": -1}},
		// Zintl anions of metals.
		{formula: "Sr3PbO", class: ClassIonic, states: map[string]float64{"Sr": 2, "Pb": -4, "O": -2}},
		{formula: "CsAu", class: ClassIntermetallic},
		// Peroxides, superoxides, ozonides, polyhalides.
		{formula: "Na2O2", class: ClassPolyanionic},
		{formula: "BaO2", class: ClassPolyanionic},
		{formula: "KO2", class: ClassPolyanionic},
		{formula: "CsO3", class: ClassPolyanionic},
		{formula: "CsI3", class: ClassPolyanionic},
		// Metal-rich: suboxides, reduced halides, subnitrides.
		{formula: "Ti3O", class: ClassMetalRich},
		{formula: "Cs11O3", class: ClassMetalRich},
		{formula: "Sc7Cl10", class: ClassMetalRich},
		{formula: "LaI2", class: ClassMetalRich},
		{formula: "Ca2N", class: ClassMetalRich},
		{formula: "Hf2S", class: ClassMetalRich},
		{formula: "Ag2F", class: ClassMetalRich},
		// Zintl polyanions.
		{formula: "Cs2Te13", class: ClassPolyanionic},
		{formula: "CaC2", class: ClassPolyanionic},
		// Covalent.
		{formula: "SiC", class: ClassCovalent, states: map[string]float64{"Si": 4, "C": -4}},
		{formula: "XeF2", class: ClassCovalent, states: map[string]float64{"Xe": 2, "F": -1}},
		// Elements and intermetallics.
		{formula: "Si", class: ClassElement, states: map[string]float64{"Si": 0}},
		{formula: "AlNi3", class: ClassIntermetallic},
		{formula: "CoCrFeMnNi", class: ClassIntermetallic},

		// Rejected: fixed-valence metals with fluorine, in either
		// direction; oxygen beyond what peroxides allow.
		{formula: "NaF2", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "MgF3", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "LiMgF4", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "Na2F", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "LaF2", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "ScF2", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "AlO3", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "MgO3", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "NaO4", class: ClassIonic, code: ReasonChargeNeutrality},
		{formula: "NaCl2", class: ClassIonic, code: ReasonChargeNeutrality},
		// Hydride forms no H–H bonds.
		{formula: "NaH2", class: ClassMetalRich, code: ReasonElectronCount},
		{formula: "OF100", class: ClassCovalent, code: ReasonElectronCount},
		{formula: "NaHe", class: ClassIonic, code: ReasonImplausibleComposition},
		{formula: "FeNi40", class: ClassIntermetallic, code: ReasonImplausibleComposition},
		{formula: "AlCoCrCuFeNi", class: ClassIntermetallic, code: ReasonImplausibleComposition},
	}
	for _, tc := range cases {
		t.Run(tc.formula, func(t *testing.T) {
			v, err := JudgeComposition(MustParseFormula(tc.formula), ChemistryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Class != tc.class || v.Valid != (tc.code == "") || v.Code != tc.code {
				t.Fatalf("class %s valid %v code %q, want %s %v %q (%s)", v.Class, v.Valid, v.Code, tc.class, tc.code == "", tc.code, v.Detail)
			}
			if !strings.Contains(v.Detail, tc.formula) && !strings.Contains(v.Detail, v.Formula.ReducedFormula()) {
				t.Errorf("detail %q does not name the formula", v.Detail)
			}
			if !v.Valid {
				if !errors.Is(v.Err(), reasonSentinels[tc.code]) || len(v.Assignments) != 0 {
					t.Errorf("invalid verdict: err %v, %d assignments", v.Err(), len(v.Assignments))
				}
				return
			}
			if v.Err() != nil {
				t.Errorf("valid verdict with error %v", v.Err())
			}
			got := v.OxidationStates()
			if tc.states != nil && !maps.EqualFunc(got, tc.states, func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }) {
				t.Errorf("states %v, want %v (%s)", got, tc.states, v.Detail)
			}
			if (v.Class == ClassIonic || v.Class == ClassElement) && got == nil && !strings.Contains(v.Detail, "mean charges") {
				t.Errorf("%s verdict without an assignment: %s", v.Class, v.Detail)
			}
			for _, a := range v.Assignments {
				if q := totalCharge(a); q != 0 {
					t.Errorf("assignment %s has charge %d", a, q)
				}
			}
		})
	}
}

func TestJudgeCompositionErrors(t *testing.T) {
	if _, err := JudgeComposition(Composition{}, ChemistryOptions{}); !errors.Is(err, ErrBadFormula) {
		t.Errorf("empty: %v", err)
	}
	c, err := NewComposition(ElementAmount{MustElement("Fe"), 1}, ElementAmount{MustElement("O"), 1.0 / 3.14159})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := JudgeComposition(c, ChemistryOptions{}); !errors.Is(err, ErrNonIntegerComposition) {
		t.Errorf("irrational amount: %v", err)
	}
}

// fixedValenceCations are the metals of one oxidation state in every
// ionic compound, as JudgeComposition takes them.
var fixedValenceCations = []string{"Li", "Na", "K", "Rb", "Cs", "Be", "Mg", "Ca", "Sr", "Ba", "Zn", "Al", "Sc", "Y", "La"}

// junkCompositions generates compositions that no chemistry allows:
// binary and ternary compositions of the fixed-valence metals with one
// anion in every small ratio (metals 1–3 atoms each, anion 1–10) that no
// assignment balances, except where known chemistry does balance them:
// for oxygen the peroxides (groups 1, 2, 12: O between −2 and −1), the
// superoxides and ozonides (Na–Cs: down to −1/3) and the suboxides of
// Rb and Cs; for Cl, Br and I the polyhalides of K, Rb and Cs and the
// reduced halides of Sc, Y and La. Fluorine has none of these.
func junkCompositions() map[string][]Composition {
	charge := map[string]int{"Li": 1, "Na": 1, "K": 1, "Rb": 1, "Cs": 1, "Be": 2, "Mg": 2, "Ca": 2, "Sr": 2, "Ba": 2, "Zn": 2, "Al": 3, "Sc": 3, "Y": 3, "La": 3}
	allowed := func(anion string, metals []string, q, n int) bool {
		has := func(set ...string) bool {
			for _, m := range metals {
				if slices.Contains(set, m) {
					return true
				}
			}
			return false
		}
		mean := -float64(q) / float64(n) // the anion's mean charge
		switch anion {
		case "O":
			switch {
			case mean < -2:
				return has("Rb", "Cs")
			case mean > -1.0/3+1e-9:
				return false
			case mean > -1:
				return has("Na", "K", "Rb", "Cs")
			default:
				return has("Li", "Na", "K", "Rb", "Cs", "Be", "Mg", "Ca", "Sr", "Ba", "Zn")
			}
		case "Cl", "Br", "I":
			switch {
			case mean < -1:
				return has("Sc", "Y", "La")
			case anion == "I" && mean > -1.0/5+1e-9:
				return false
			case mean > -1.0/3+1e-9 && anion != "I":
				return false
			}
			return has("K", "Rb", "Cs")
		}
		return false
	}
	out := map[string][]Composition{}
	seen := map[string]bool{}
	add := func(anion string, metals []string, amounts []int, n int) {
		q := 0
		var items []ElementAmount
		for i, m := range metals {
			q += amounts[i] * charge[m]
			items = append(items, ElementAmount{MustElement(m), float64(amounts[i])})
		}
		ion := map[string]int{"F": 1, "Cl": 1, "Br": 1, "I": 1, "O": 2}[anion]
		if q == n*ion || allowed(anion, metals, q, n) {
			return
		}
		c, err := NewComposition(append(items, ElementAmount{MustElement(anion), float64(n)})...)
		if err != nil {
			panic(err)
		}
		if f := c.ReducedFormula(); !seen[f] {
			seen[f] = true
			out[anion] = append(out[anion], c)
		}
	}
	for _, anion := range []string{"F", "Cl", "Br", "I", "O"} {
		for i, m := range fixedValenceCations {
			for a := 1; a <= 3; a++ {
				for n := 1; n <= 10; n++ {
					add(anion, []string{m}, []int{a}, n)
				}
			}
			for _, m2 := range fixedValenceCations[i+1:] {
				for a := 1; a <= 3; a++ {
					for b := 1; b <= 3; b++ {
						for n := 1; n <= 10; n++ {
							add(anion, []string{m, m2}, []int{a, b}, n)
						}
					}
				}
			}
		}
	}
	return out
}

// At least 95 % of the junk is rejected overall and for each anion, and
// every junk fluoride: fluorine has no peroxide-like, polyhalide or
// metal-rich chemistry with these metals.
func TestJudgeCompositionRejectsJunk(t *testing.T) {
	total, rejected := 0, 0
	for _, anion := range []string{"F", "Cl", "Br", "I", "O"} {
		set := junkCompositions()[anion]
		bad := 0
		var escaped []string
		for _, c := range set {
			v, err := JudgeComposition(c, ChemistryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !v.Valid {
				bad++
				continue
			}
			escaped = append(escaped, fmt.Sprintf("%s (%s)", c.ReducedFormula(), v.Class))
		}
		total += len(set)
		rejected += bad
		rate := float64(bad) / float64(len(set))
		t.Logf("%-2s junk: %d of %d rejected (%.1f %%)", anion, bad, len(set), 100*rate)
		if len(escaped) > 0 {
			t.Logf("   accepted: %s", strings.Join(escaped[:min(20, len(escaped))], ", "))
		}
		if len(set) < 200 {
			t.Errorf("%s: only %d junk compositions", anion, len(set))
		}
		if rate < 0.95 || (anion == "F" && bad != len(set)) {
			t.Errorf("%s: %.1f %% of junk rejected", anion, 100*rate)
		}
	}
	t.Logf("all junk: %d of %d rejected (%.1f %%)", rejected, total, 100*float64(rejected)/float64(total))
}

// compositionFamily sorts a composition into the families of the
// false-rejection table: by the anions it has, in this order of
// precedence.
func compositionFamily(c Composition) string {
	has := func(symbols ...string) bool {
		for _, s := range symbols {
			if c.Contains(MustElement(s)) {
				return true
			}
		}
		return false
	}
	metals, nonmetals, metalloidOnly := 0, 0, true
	for _, e := range c.Elements() {
		if e.IsMetal() {
			metals++
			continue
		}
		nonmetals++
		if !slices.Contains([]string{"B", "Si", "Ge", "As", "Sb", "Te"}, e.Symbol()) {
			metalloidOnly = false
		}
	}
	switch {
	case nonmetals == 0:
		return "all-metal"
	case metals == 0:
		return "non-metals only"
	case has("F", "Cl", "Br", "I"):
		return "halides"
	case has("O"):
		return "oxides"
	case has("S", "Se"):
		return "chalcogenides"
	case has("C", "N"):
		return "carbides and nitrides"
	case metalloidOnly:
		return "metal + B/Si/Ge/As/Sb/Te only"
	case has("P"):
		return "phosphides"
	case has("H"):
		return "hydrides"
	}
	return "other"
}

// stableCompositions reads the formulas with e_hull = 0 from mp_e_hull.csv.
func stableCompositions(t *testing.T) []Composition {
	f, err := os.Open(testbed.DataPath(t, "data", "mp_e_hull.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() != "formula,target" {
		t.Fatalf("mp_e_hull.csv: unexpected header %q", sc.Text())
	}
	var out []Composition
	for sc.Scan() {
		formula, target, ok := strings.Cut(sc.Text(), ",")
		if !ok {
			t.Fatalf("mp_e_hull.csv: bad line %q", sc.Text())
		}
		if target != "0.0" && target != "0" {
			continue
		}
		c, err := ParseFormula(formula)
		if err != nil {
			t.Fatalf("mp_e_hull.csv: %v", err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The Materials Project's stable compositions (e_hull = 0) are real
// compounds: at most 2 % of them may be rejected, and at most 5 % of any
// family. The table also gives the SMACT test's (one common oxidation
// state per element, alloys accepted) rejections of the same set.
//
//	CRUCIBLE_DATA=… go test ./pkg/crystal -run MaterialsProjectStable -v
func TestJudgeCompositionMaterialsProjectStable(t *testing.T) {
	comps := stableCompositions(t)
	if len(comps) < 20000 {
		t.Fatalf("only %d stable compositions", len(comps))
	}
	type row struct{ n, rejected, smact int }
	rows := map[string]*row{}
	classes := map[BondingClass]int{}
	var rejects []string
	for _, c := range comps {
		v, err := JudgeComposition(c, ChemistryOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		old, err := AssignOxidationStates(c, OxidationOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		classes[v.Class]++
		for _, fam := range []string{compositionFamily(c), "all"} {
			r := rows[fam]
			if r == nil {
				r = &row{}
				rows[fam] = r
			}
			r.n++
			if !v.Valid {
				r.rejected++
			}
			if !old.Neutral {
				r.smact++
			}
		}
		if !v.Valid {
			rejects = append(rejects, c.ReducedFormula()+" ("+string(v.Code)+")")
		}
	}
	pct := func(k, n int) float64 { return 100 * float64(k) / float64(n) }
	t.Logf("%-31s %6s %8s %7s   %s", "family", "n", "rejected", "%", "SMACT test %")
	for _, fam := range slices.Sorted(maps.Keys(rows)) {
		r := rows[fam]
		t.Logf("%-31s %6d %8d %6.2f %%   %5.1f %%", fam, r.n, r.rejected, pct(r.rejected, r.n), pct(r.smact, r.n))
		limit := 5.0
		if fam == "all" {
			limit = 2
		}
		if pct(r.rejected, r.n) > limit {
			t.Errorf("%s: %.2f %% of stable compositions rejected, more than %g %%", fam, pct(r.rejected, r.n), limit)
		}
	}
	t.Logf("classes: %v", classes)
	t.Logf("rejected: %s", strings.Join(rejects, ", "))
}

func BenchmarkJudgeComposition(b *testing.B) {
	formulas := []string{"NaCl", "Fe3O4", "TiB2", "Li7La3Zr2O12", "Cs11O3", "Sc7Cl10", "NaF2", "Cu2ZnSnS4", "K22Nb13In11(PO5)24"}
	comps := make([]Composition, len(formulas))
	for i, f := range formulas {
		comps[i] = MustParseFormula(f)
	}
	for b.Loop() {
		for _, c := range comps {
			if _, err := JudgeComposition(c, ChemistryOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Any parsable formula is judged without a panic: a verdict always has a
// class and a detail, a code exactly when invalid, and zero-sum
// assignments.
func FuzzJudgeComposition(f *testing.F) {
	for _, s := range []string{"NaCl", "Fe3O4", "TiB2", "NaF2", "Cs11O3", "Sc7Cl10", "He", "XeF6", "Li0.5CoO2", "U92Pu3O200", "HHeLiBeBCNOF", "Fe1Ni99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, formula string) {
		c, err := ParseFormula(formula)
		if err != nil {
			return
		}
		v, err := JudgeComposition(c, ChemistryOptions{MaxSearchNodes: 1 << 14})
		if err != nil {
			return
		}
		if v.Class == "" || v.Detail == "" || v.Valid != (v.Code == "") {
			t.Errorf("%s: class %q valid %v code %q detail %q", formula, v.Class, v.Valid, v.Code, v.Detail)
		}
		for _, a := range v.Assignments {
			if totalCharge(a) != 0 {
				t.Errorf("%s: %s not neutral", formula, a)
			}
		}
	})
}
