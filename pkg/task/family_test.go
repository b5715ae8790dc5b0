package task

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func TestParseStoichiometry(t *testing.T) {
	for _, tc := range []struct {
		in      string
		cations []int
		anions  []int
	}{
		{"ABX3", []int{1, 1}, []int{3}},
		{"AB2X4", []int{1, 2}, []int{4}},
		{"A2X3", []int{2}, []int{3}},
		{"ABX2Y", []int{1, 1}, []int{2, 1}},
	} {
		st, err := ParseStoichiometry(tc.in)
		if err != nil || !slices.Equal(st.Cations, tc.cations) || !slices.Equal(st.Anions, tc.anions) {
			t.Errorf("ParseStoichiometry(%q) = %+v, %v", tc.in, st, err)
		}
	}
	for _, bad := range []string{"", "ABx3", "AAX3", "ABX0", "AB-X", "SrTiO3"} {
		if _, err := ParseStoichiometry(bad); !errors.Is(err, ErrBadFamilyRule) {
			t.Errorf("ParseStoichiometry(%q): %v, want ErrBadFamilyRule", bad, err)
		}
	}
}

func perovskiteOxide(t *testing.T) Task {
	t.Helper()
	tk, err := ByName("Toxic-Free Perovskite Oxides")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Structure != "perovskite" || tk.Formula != "ABX3" || !slices.Equal(tk.Anions, []string{"O"}) {
		t.Fatalf("built-in perovskite-oxide task: structure %q formula %q anions %v", tk.Structure, tk.Formula, tk.Anions)
	}
	return tk
}

func TestCompositionViolations(t *testing.T) {
	tk := perovskiteOxide(t)
	for _, tc := range []struct {
		formula string
		rules   []string
	}{
		{"SrTiO3", nil},
		{"BaZrO3", nil},
		{"KMgF3", []string{RuleAnions}},           // a fluoride perovskite
		{"BN", []string{RuleFormula, RuleAnions}}, // the stray hit
		{"Sr2TiO4", []string{RuleFormula}},        // Ruddlesden–Popper
		{"SrTiO2F", []string{RuleFormula, RuleAnions}},
		{"PbTiO3", []string{RuleElements}},
		{"NaLiF2", []string{RuleFormula, RuleAnions}},
	} {
		var rules []string
		for _, v := range tk.CompositionViolations(crystal.MustParseFormula(tc.formula)) {
			rules = append(rules, v.Rule)
		}
		if !slices.Equal(rules, tc.rules) {
			t.Errorf("%s: broken rules %v, want %v", tc.formula, rules, tc.rules)
		}
	}
	if got := tk.Check(crystal.MustParseFormula("Sr2TiO4")); len(got) != 1 || got[0] != "Sr2TiO4 is AB2X4, not ABX3" {
		t.Errorf("Check(Sr2TiO4) = %q", got)
	}
}

func TestViolationsStructure(t *testing.T) {
	tk := perovskiteOxide(t)
	build := func(proto, formula string) *crystal.Structure {
		p, err := crystal.PrototypeByName(proto)
		if err != nil {
			t.Fatal(err)
		}
		b, err := crystal.Build(p, crystal.MustParseFormula(formula))
		if err != nil {
			t.Fatal(err)
		}
		return b.Structure
	}
	if v := tk.Violations(build("perovskite", "SrTiO3")); len(v) != 0 {
		t.Errorf("cubic SrTiO3: %v", v)
	}
	// ABO3 in a structure that is not a perovskite: the cations of SrTiO3
	// on the rock-salt sites of a layered oxide cannot be built, so take
	// a cubic perovskite cell and collapse it along c.
	s := build("perovskite", "SrTiO3")
	m := s.Lattice.Matrix()
	m[2] = [3]float64{m[2][0], m[2][1], m[2][2] * 0.6}
	l, err := crystal.NewLattice(m)
	if err != nil {
		t.Fatal(err)
	}
	squashed, err := crystal.NewStructure(l, s.Species, s.Frac)
	if err != nil {
		t.Fatal(err)
	}
	v := tk.Violations(squashed)
	if len(v) != 1 || v[0].Rule != RuleStructure || !strings.Contains(v[0].Detail, "not a perovskite") {
		t.Errorf("squashed SrTiO3: %v, want one structure_family violation", v)
	}
}

func TestValidateFamilyRules(t *testing.T) {
	base := Task{Name: "t", Constraints: []Constraint{AtLeast("band_gap", 1)}}
	for _, tc := range []struct {
		name  string
		edit  func(*Task)
		field string
	}{
		{"unknown family", func(t *Task) { t.Structure = "pyrochlore" }, "structure"},
		{"bad pattern", func(t *Task) { t.Formula = "AB3x" }, "formula"},
		{"perovskite not ABX3", func(t *Task) { t.Structure, t.Formula = "perovskite", "AB2X4" }, "formula"},
		{"empty anions", func(t *Task) { t.Anions = []string{} }, "anions"},
		{"metal anion", func(t *Task) { t.Anions = []string{"Na"} }, "anions[0]"},
		{"unknown element", func(t *Task) { t.Anions = []string{"Xx"} }, "anions[0]"},
		{"forbidden anion", func(t *Task) { t.Anions = []string{"O"}; t.Elements.Exclude = []string{"O"} }, "anions"},
		{"too few anions", func(t *Task) { t.Formula, t.Anions = "ABX2Y", []string{"O"} }, "formula"},
	} {
		tk := base.Clone()
		tc.edit(&tk)
		err := tk.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want an error on %s", tc.name, err, tc.field)
		}
	}
	ok := base.Clone()
	ok.Structure, ok.Formula, ok.Anions = "perovskite", "ABX3", []string{"O", "F"}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid rules: %v", err)
	}
}
