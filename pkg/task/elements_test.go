package task

import (
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func TestElementRulesCheck(t *testing.T) {
	electrolyte := ElementRules{MustContainOneOf: []string{"Li", "Na", "K", "Mg", "Ca", "Al"}}
	pv := ElementRules{EarthAbundant: true, NonToxic: true}
	perovskite := ElementRules{Exclude: []string{"Pb", "Cd", "Hg", "Tl", "Be", "As", "Sb", "Se", "U", "Th"}}
	tests := []struct {
		name    string
		rules   ElementRules
		formula string
		reasons []string // substrings, one per reason; nil when allowed
	}{
		{"no rules", ElementRules{}, "PbI2", nil},
		{"contains one of", electrolyte, "Li3PS4", nil},
		{"contains another of", electrolyte, "NaAlO2", nil},
		{"contains none of", electrolyte, "ZnO", []string{"contains none of Li, Na, K, Mg, Ca, Al"}},
		{"earth-abundant non-toxic", pv, "Cu2ZnSnS4", nil},
		{"toxic", pv, "CdTe", []string{"not earth-abundant", "contains toxic Cd, Te"}},
		{"rare only", pv, "InP", []string{"not earth-abundant (below 1 mg/kg in the crust): In (0.25 mg/kg)"}},
		{"toxic only", ElementRules{NonToxic: true}, "PbTiO3", []string{"contains toxic Pb"}},
		{"excluded", perovskite, "PbTiO3", []string{"contains excluded Pb"}},
		{"not excluded", perovskite, "SrTiO3", nil},
		{"allowed only", ElementRules{AllowedOnly: []string{"Li", "Fe", "P", "O"}}, "LiFePO4", nil},
		{"outside allowed", ElementRules{AllowedOnly: []string{"Li", "Fe", "P", "O"}}, "LiMnPO4", []string{"contains Mn, outside the allowed elements Li, Fe, P, O"}},
		{"must contain all", ElementRules{MustContainAll: []string{"Li", "O"}}, "LiF", []string{"does not contain required O"}},
		{"several rules broken", ElementRules{Exclude: []string{"Pb"}, MustContainAll: []string{"O"}}, "PbS", []string{"excluded Pb", "required O"}},
	}
	for _, tt := range tests {
		got := tt.rules.Check(crystal.MustParseFormula(tt.formula))
		if len(got) != len(tt.reasons) {
			t.Errorf("%s: Check(%s) = %q, want %d reasons", tt.name, tt.formula, got, len(tt.reasons))
			continue
		}
		for i, want := range tt.reasons {
			if !strings.Contains(got[i], want) {
				t.Errorf("%s: reason %q does not contain %q", tt.name, got[i], want)
			}
		}
	}
}

func TestElementRulesAllows(t *testing.T) {
	rules := ElementRules{Exclude: []string{"Pb"}, AllowedOnly: []string{"Pb", "Ti", "O", "In"}, EarthAbundant: true}
	for sym, want := range map[string]bool{"Pb": false, "Ti": true, "O": true, "Sr": false, "In": false} {
		if got := rules.Allows(crystal.MustElement(sym)); got != want {
			t.Errorf("Allows(%s) = %v, want %v", sym, got, want)
		}
	}
	if !(ElementRules{}).Allows(crystal.MustElement("U")) {
		t.Error("empty rules must allow every element")
	}
}

func TestTaskCheckUsesElementRules(t *testing.T) {
	pv := mustTask(t, "Photovoltaic Absorbers")
	if r := pv.Check(crystal.MustParseFormula("CuInSe2")); len(r) != 2 {
		t.Errorf("CuInSe2 against Photovoltaic Absorbers: %q, want a rare-element and a toxic reason", r)
	}
	if r := pv.Check(crystal.MustParseFormula("Cu2ZnSnS4")); r != nil {
		t.Errorf("CZTS against Photovoltaic Absorbers: %q, want none", r)
	}
}
