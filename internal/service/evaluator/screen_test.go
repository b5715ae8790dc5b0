package evaluator

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// The screen relaxes a candidate whose every constraint is within one
// error of its bound and whose screened E_hull is at most 0.3 eV/atom.
func TestPassesScreen(t *testing.T) {
	tk := task.Task{Name: "t", Constraints: []task.Constraint{task.AtLeast("band_gap", 2.5), task.AtMost("e_above_hull", 0.05)},
		Elements: task.ElementRules{Exclude: []string{"Pb"}}}
	sp := spec(t, tk)
	sp.Oracle = messages.OracleRelax
	strict := *sp
	zero := 0.0
	strict.Screen.ErrorMultiple = &zero
	props := func(gap float64) map[string]messages.PropertyValue {
		return map[string]messages.PropertyValue{
			"band_gap":                  {Value: gap, Unit: "eV", Source: "cgcnn", Uncertainty: 0.388, TieSpread: 0.1},
			"formation_energy_per_atom": {Value: -1, Unit: "eV/atom", Source: "cgcnn", Uncertainty: 0.039},
		}
	}
	cases := []struct {
		name        string
		formula     string
		out         Outcome
		seed        bool
		pass, pass0 bool // with the default multiple 1, and with 0
	}{
		{"a screened hit", "NaCl", Outcome{Valid: true, Properties: props(3), EAboveHull: f(0.02)}, false, true, true},
		{"gap within its error and tie spread", "NaCl", Outcome{Valid: true, Properties: props(2.5 - 0.48), EAboveHull: f(0.02)}, false, true, false},
		{"gap beyond its error", "NaCl", Outcome{Valid: true, Properties: props(2.5 - 0.5), EAboveHull: f(0.02)}, false, false, false},
		{"E_hull within the formation energy's error", "NaCl", Outcome{Valid: true, Properties: props(3), EAboveHull: f(0.085)}, false, true, false},
		{"E_hull beyond the screen's 0.3", "NaCl", Outcome{Valid: true, Properties: props(3), EAboveHull: f(0.31)}, false, false, false},
		{"no E_hull", "NaCl", Outcome{Valid: true, Properties: props(3)}, false, false, false},
		{"invalid", "NaCl", Outcome{Valid: false, Properties: props(3), EAboveHull: f(0)}, false, false, false},
		{"excluded element", "PbF2", Outcome{Valid: true, Properties: props(3), EAboveHull: f(0)}, false, false, false},
		{"seed", "NaCl", Outcome{Valid: true, Properties: props(3), EAboveHull: f(0)}, true, false, false},
		{"missing property", "NaCl", Outcome{Valid: true, Properties: map[string]messages.PropertyValue{}, EAboveHull: f(0)}, false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: tc.formula, Seed: tc.seed}
			if got := PassesScreen(sp, Score(sp, c, &tc.out)); got != tc.pass {
				t.Errorf("passes the default screen: %v, want %v", got, tc.pass)
			}
			if got := PassesScreen(&strict, Score(&strict, c, &tc.out)); got != tc.pass0 {
				t.Errorf("passes the screen without error allowance: %v, want %v", got, tc.pass0)
			}
		})
	}
	// A lower E_hull bound of the screen relaxes less.
	tight := *sp
	tight.Screen.MaxEAboveHull = 0.01
	c := &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: "NaCl"}
	if PassesScreen(&tight, Score(&tight, c, &Outcome{Valid: true, Properties: props(3), EAboveHull: f(0.02)})) {
		t.Error("E_hull 0.02 passes a screen of 0.01 eV/atom")
	}
}
