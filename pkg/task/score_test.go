package task

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	tests := []struct{ z, want float64 }{
		{0, 0}, {0.5, 0.5}, {-0.5, -0.5}, {1, 1}, {-1, -1},
		{1.0001, 1}, {-7, -1}, {math.Inf(1), 1}, {math.Inf(-1), -1}, {math.NaN(), -1},
	}
	for _, tt := range tests {
		if got := Clip(tt.z); got != tt.want {
			t.Errorf("Clip(%v) = %v, want %v", tt.z, got, tt.want)
		}
	}
}

// TestMargin checks LLEMA App. B.2's Φ against hand-computed values.
func TestMargin(t *testing.T) {
	tests := []struct {
		name string
		c    Constraint
		f    float64
		want float64
	}{
		// lower: (f − l) / max(|l|, 1)
		{"lower above", AtLeast("band_gap", 2.5), 3.0, 0.2},
		{"lower at bound", AtLeast("band_gap", 2.5), 2.5, 0},
		{"lower below", AtLeast("band_gap", 2.5), 1.0, -0.6},
		{"lower clipped high", AtLeast("band_gap", 2.5), 10, 1},
		{"lower clipped low", AtLeast("band_gap", 2.5), -10, -1},
		{"lower zero bound", AtLeast("band_gap", 0), 0.3, 0.3},
		{"lower small bound uses 1", AtLeast("band_gap", 0.5), 0, -0.5},
		{"lower negative bound", AtLeast("formation_energy_per_atom", -4), -3, 0.25},
		{"lower +Inf value", AtLeast("band_gap", 2.5), math.Inf(1), 1},
		// upper: (u − f) / max(|u|, 1)
		{"upper below", AtMost("formation_energy_per_atom", -1), -1.5, 0.5},
		{"upper above", AtMost("formation_energy_per_atom", -1), -0.5, -0.5},
		{"upper zero bound", AtMost("formation_energy_per_atom", 0), 0.2, -0.2},
		{"upper zero bound met", AtMost("formation_energy_per_atom", 0), -0.4, 0.4},
		{"upper large bound", AtMost("density", 5), 4, 0.2},
		{"upper clipped", AtMost("e_above_hull", 5), 0, 1},
		{"upper clipped low", AtMost("density", 3.5), 30, -1},
		// interval: min(f − l, u − f) / max(|u − l|, 1)
		{"interval inside", Between("bulk_modulus", 100, 300), 150, 0.25},
		{"interval centre", Between("bulk_modulus", 100, 300), 200, 0.5},
		{"interval above", Between("bulk_modulus", 100, 300), 350, -0.25},
		{"interval below", Between("bulk_modulus", 100, 300), 0, -0.5},
		{"interval clipped", Between("bulk_modulus", 100, 300), -1000, -1},
		{"interval at lower", Between("bulk_modulus", 100, 300), 100, 0},
		{"interval width 1.3", Between("band_gap", 0.7, 2.0), 1.0, 0.3 / 1.3},
		{"interval narrow uses 1", Between("band_gap", 0.2, 0.4), 0.3, 0.1},
		{"interval degenerate", Between("band_gap", 1, 1), 1, 0},
		{"interval degenerate off", Between("band_gap", 1, 1), 1.5, -0.5},
		{"NaN", AtLeast("band_gap", 1), math.NaN(), -1},
		{"unknown kind", Constraint{Property: "band_gap", Kind: "target"}, 1, -1},
	}
	for _, tt := range tests {
		got := tt.c.Margin(tt.f)
		if math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("%s: %v.Margin(%v) = %v, want %v", tt.name, tt.c, tt.f, got, tt.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	wbg, err := ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	weighted := wbg.Clone()
	weighted.Constraints[0] = weighted.Constraints[0].WithWeight(3)
	thermo := Task{Name: "thermoelectric", Constraints: []Constraint{AtLeast("seebeck_coefficient", 200)}}
	electronic := Task{Name: "ε∞", Constraints: []Constraint{Between("dielectric_electronic", 10, 90), Between("band_gap", 2.5, 6.5)}}

	tests := []struct {
		name     string
		task     Task
		props    Values
		margins  []float64
		score    float64
		feasible bool
		missing  []string
		reasons  []string // substrings, one per reason
	}{
		{
			name: "feasible", task: wbg,
			props:   Values{"band_gap": 3.0, "formation_energy_per_atom": -1.5},
			margins: []float64{0.2, 0.5}, score: 0.35, feasible: true,
		},
		{
			name: "one unmet", task: wbg,
			props:   Values{"band_gap": 2.0, "formation_energy_per_atom": -1.5},
			margins: []float64{-0.2, 0.5}, score: 0.15,
			reasons: []string{"band_gap = 2 eV does not meet band_gap ≥ 2.5 eV"},
		},
		{
			name: "missing", task: wbg,
			props:   Values{"band_gap": 3.0},
			margins: []float64{0.2, -1}, score: -0.4, missing: []string{"formation_energy_per_atom"},
			reasons: []string{"formation_energy_per_atom: no value"},
		},
		{
			name: "NaN is missing", task: wbg,
			props:   Values{"band_gap": math.NaN(), "formation_energy_per_atom": -2},
			margins: []float64{-1, 1}, score: 0, missing: []string{"band_gap"},
			reasons: []string{"band_gap: value NaN is not finite"},
		},
		{
			name: "weights normalised", task: weighted,
			props:   Values{"band_gap": 3.0, "formation_energy_per_atom": -1.5},
			margins: []float64{0.2, 0.5}, score: (3*0.2 + 0.5) / 4, feasible: true,
		},
		{
			name: "unsupported property", task: thermo,
			props:   Values{"band_gap": 3.0},
			margins: []float64{-1}, score: -1, missing: []string{"seebeck_coefficient"},
			reasons: []string{"no oracle in Crucible provides it"},
		},
		{
			name: "reference-only property", task: electronic,
			props:   Values{"band_gap": 4.5},
			margins: []float64{-1, 0.5}, score: -0.25, missing: []string{"dielectric_electronic"},
			reasons: []string{"known only for compounds in the reference table"},
		},
	}
	for _, tt := range tests {
		e := tt.task.Evaluate(tt.props.Lookup)
		if len(e.Margins) != len(tt.margins) {
			t.Fatalf("%s: margins %v, want %v", tt.name, e.Margins, tt.margins)
		}
		for i := range e.Margins {
			if math.Abs(e.Margins[i]-tt.margins[i]) > 1e-12 {
				t.Errorf("%s: margins %v, want %v", tt.name, e.Margins, tt.margins)
				break
			}
		}
		if math.Abs(e.Score-tt.score) > 1e-12 {
			t.Errorf("%s: score %v, want %v", tt.name, e.Score, tt.score)
		}
		if e.Feasible != tt.feasible {
			t.Errorf("%s: feasible %v, want %v", tt.name, e.Feasible, tt.feasible)
		}
		if !slices.Equal(e.Missing, tt.missing) && !(len(e.Missing) == 0 && len(tt.missing) == 0) {
			t.Errorf("%s: missing %v, want %v", tt.name, e.Missing, tt.missing)
		}
		if len(e.Reasons) != len(tt.reasons) {
			t.Errorf("%s: reasons %q, want %d", tt.name, e.Reasons, len(tt.reasons))
			continue
		}
		for i, want := range tt.reasons {
			if !strings.Contains(e.Reasons[i], want) {
				t.Errorf("%s: reason %q does not contain %q", tt.name, e.Reasons[i], want)
			}
		}
	}
}

func TestEvaluateNoConstraintsIsInfeasible(t *testing.T) {
	e := Task{Name: "empty"}.Evaluate(Values{}.Lookup)
	if e.Feasible || e.Score != 0 || len(e.Margins) != 0 {
		t.Errorf("empty task: %+v", e)
	}
}

func TestEvaluateIntoDoesNotAllocate(t *testing.T) {
	task := mustTask(t, "Structural Materials for Aerospace")
	props := Values{"density": 3.2, "bulk_modulus": 180, "shear_modulus": 90}.Lookup
	var e Evaluation
	task.EvaluateInto(&e, props)
	if !e.Feasible {
		t.Fatalf("want feasible: %+v", e)
	}
	allocs := testing.AllocsPerRun(100, func() { task.EvaluateInto(&e, props) })
	if allocs != 0 {
		t.Errorf("EvaluateInto of a feasible candidate: %v allocations, want 0", allocs)
	}
	// Reusing e must not leak state from a previous, infeasible candidate.
	task.EvaluateInto(&e, Values{}.Lookup)
	task.EvaluateInto(&e, props)
	if !e.Feasible || len(e.Missing) != 0 || len(e.Reasons) != 0 || len(e.Margins) != 3 {
		t.Errorf("reused evaluation: %+v", e)
	}
}

func BenchmarkEvaluateInto(b *testing.B) {
	task, err := ByName("Toxic_Free_Perovskite_Oxide")
	if err != nil {
		b.Fatal(err)
	}
	props := Values{"band_gap": 3.1, "bulk_modulus": 120, "formation_energy_per_atom": -2}.Lookup
	var e Evaluation
	b.ReportAllocs()
	for b.Loop() {
		task.EvaluateInto(&e, props)
	}
}

func mustTask(t *testing.T, name string) Task {
	t.Helper()
	task, err := ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return task
}
