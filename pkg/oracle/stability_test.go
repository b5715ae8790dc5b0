package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// TestReferencePhasesMatchPymatgen places the golden queries (pymatgen's
// PhaseDiagram over every mp_e_form entry of each system, elements at 0) on
// the oracle's reference hulls (per composition the lowest entry): hull
// energies, energies above hull and decompositions must agree.
func TestReferencePhasesMatchPymatgen(t *testing.T) {
	o := testOracle(t)
	data, err := os.ReadFile(testbed.DataPath(t, "golden", "hull", "phase_diagrams.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Systems []struct {
			Elements []string `json:"elements"`
			Queries  []struct {
				Formula       string             `json:"formula"`
				EForm         float64            `json:"e_form_per_atom"`
				HullEnergy    float64            `json:"hull_energy_per_atom"`
				EAboveHull    float64            `json:"e_above_hull"`
				Decomposition map[string]float64 `json:"decomposition"`
			} `json:"queries"`
		} `json:"systems"`
	}
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, sys := range golden.Systems {
		for _, q := range sys.Queries {
			comp := crystal.MustParseFormula(q.Formula)
			r, err := o.hulls.Query(comp, q.EForm)
			if err != nil {
				t.Errorf("%s: %v", q.Formula, err)
				continue
			}
			n++
			if math.Abs(r.HullEnergy-q.HullEnergy) > 1e-6 || math.Abs(r.EAboveHull-q.EAboveHull) > 1e-6 {
				t.Errorf("%s at %.4f: hull %.6f, e_above_hull %.6f; pymatgen %.6f, %.6f",
					q.Formula, q.EForm, r.HullEnergy, r.EAboveHull, q.HullEnergy, q.EAboveHull)
			}
			want := map[string]float64{}
			for key, f := range q.Decomposition {
				formula, _, _ := strings.Cut(key, "|")
				want[crystal.MustParseFormula(formula).ReducedFormula()] += f
			}
			got := map[string]float64{}
			for _, ph := range r.Decomposition {
				got[ph.Composition.ReducedFormula()] += ph.Fraction
			}
			if !sameFractions(got, want) {
				t.Errorf("%s: decomposition %v, pymatgen %v", q.Formula, got, want)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d golden queries checked", n)
	}
}

func sameFractions(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		if math.Abs(x-b[k]) > 1e-6 {
			return false
		}
	}
	return true
}

// TestStabilityOfKnownCompounds: ground states of the reference data lie on
// the hull with their reference energy, as in the Materials Project.
func TestStabilityOfKnownCompounds(t *testing.T) {
	o := testOracle(t)
	cases := []struct{ proto, formula string }{
		{"rocksalt", "NaCl"}, {"rocksalt", "MgO"}, {"perovskite", "SrTiO3"}, {"wurtzite", "GaN"}, {"spinel", "MgAl2O4"},
	}
	for _, c := range cases {
		r := evaluate(t, o, Request{Structure: crystaltest.Build(t, c.proto, c.formula), Hull: true})[0]
		st := r.Stability
		if st == nil {
			t.Errorf("%s: no stability; warnings %+v", c.formula, r.Warnings)
			continue
		}
		if math.Abs(st.EAboveHull) > 1e-9 || st.FormationEnergySource != SourceReference || !sameFractions(st.Decomposition, map[string]float64{c.formula: 1}) {
			t.Errorf("%s: %+v; want on the hull with the reference energy", c.formula, st)
		}
		if st.ReferenceEAboveHull == nil || *st.ReferenceEAboveHull != 0 {
			t.Errorf("%s: Materials Project e_above_hull %v, want 0", c.formula, st.ReferenceEAboveHull)
		}
		if st.System != crystal.MustParseFormula(c.formula).ChemicalSystem() {
			t.Errorf("%s: system %s", c.formula, st.System)
		}
	}
}

func TestStabilityOfUnknownCompound(t *testing.T) {
	o := testOracle(t)
	r := evaluate(t, o, Request{Structure: crystaltest.Build(t, "perovskite", unknownFormula), Hull: true})[0]
	st := r.Stability
	if st == nil {
		t.Fatalf("no stability: %+v", r.Warnings)
	}
	fe := r.Properties["formation_energy_per_atom"]
	if st.FormationEnergySource != SourceCGCNN || st.FormationEnergy != fe.Value || st.ReferenceEAboveHull != nil {
		t.Errorf("stability %+v; want CGCNN's formation energy %v", st, fe.Value)
	}
	if math.Abs(st.EAboveHull-(st.FormationEnergy-st.HullEnergy)) > 1e-12 {
		t.Errorf("e_above_hull %v ≠ %v − %v", st.EAboveHull, st.FormationEnergy, st.HullEnergy)
	}
	sum := 0.0
	for f, x := range st.Decomposition {
		sum += x
		if !o.Reference().Known(f) {
			t.Errorf("decomposition product %s is not a reference phase", f)
		}
	}
	if math.Abs(sum-1) > 1e-9 || len(st.Decomposition) < 2 {
		t.Errorf("decomposition %v", st.Decomposition)
	}
	t.Logf("%s: E_f %.4f, hull %.4f, e_above_hull %+.4f eV/atom, decomposition %v",
		unknownFormula, st.FormationEnergy, st.HullEnergy, st.EAboveHull, st.Decomposition)
}

// TestStabilityExtraEntries adds a campaign's phases to the hull of one
// request without changing the shared reference hull.
func TestStabilityExtraEntries(t *testing.T) {
	o := testOracle(t)
	s := crystaltest.Build(t, "perovskite", unknownFormula)
	base := evaluate(t, o, Request{Structure: s, Hull: true})[0].Stability
	if base == nil {
		t.Fatal("no stability")
	}
	entry := func(id, formula string, e float64) hull.Entry {
		return hull.Entry{ID: id, Composition: crystal.MustParseFormula(formula), EnergyPerAtom: e}
	}
	rbbr, ok := o.Reference().Lookup(reference.FormationEnergy, "RbBr")
	if !ok {
		t.Fatal("RbBr not in the reference tables")
	}
	tests := []struct {
		name   string
		extra  []hull.Entry
		check  func(st *Stability) error
		reason crystal.ReasonCode
	}{
		{
			name:  "outside the system",
			extra: []hull.Entry{entry("c-1", "KCl", -10), entry("c-2", "RbSrBr3O", -10)},
			check: func(st *Stability) error {
				if !reflect.DeepEqual(st, base) {
					return fmt.Errorf("%+v, want the reference result %+v", st, base)
				}
				return nil
			},
		},
		{
			name:  "a polymorph of the candidate below the hull",
			extra: []hull.Entry{entry("c-3", unknownFormula, base.HullEnergy-0.05)},
			check: func(st *Stability) error {
				if math.Abs(st.HullEnergy-(base.HullEnergy-0.05)) > 1e-9 || math.Abs(st.EAboveHull-(base.EAboveHull+0.05)) > 1e-9 ||
					!sameFractions(st.Decomposition, map[string]float64{unknownFormula: 1}) {
					return fmt.Errorf("%+v, want the hull at the extra phase, 0.05 eV/atom lower", st)
				}
				return nil
			},
		},
		{
			name:  "a stable phase in a subsystem",
			extra: []hull.Entry{entry("c-4", "Rb2Br", -3)},
			check: func(st *Stability) error {
				if st.HullEnergy >= base.HullEnergy-1e-9 || st.EAboveHull <= base.EAboveHull || st.Decomposition["Rb2Br"] <= 0 {
					return fmt.Errorf("%+v: the extra phase should lower the hull (%v) and appear in the decomposition", st, base.HullEnergy)
				}
				return nil
			},
		},
		{
			name:   "a reference id reused",
			extra:  []hull.Entry{entry(reference.EntryID(rbbr.MinRow), "RbBr", -9)},
			reason: ReasonHull,
		},
	}
	for _, tc := range tests {
		r := evaluate(t, o, Request{Structure: s, Hull: true, Extra: tc.extra})[0]
		if tc.reason != "" {
			if r.Stability != nil || len(r.Warnings) != 1 || r.Warnings[0].Code != tc.reason {
				t.Errorf("%s: stability %+v, warnings %+v; want a %s warning", tc.name, r.Stability, r.Warnings, tc.reason)
			}
			continue
		}
		if r.Stability == nil {
			t.Errorf("%s: no stability: %+v", tc.name, r.Warnings)
			continue
		}
		if err := tc.check(r.Stability); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	again := evaluate(t, o, Request{Structure: s, Hull: true})[0].Stability
	if !reflect.DeepEqual(again, base) {
		t.Errorf("after requests with extra entries: %+v, want %+v", again, base)
	}
}

func TestStabilityWarnings(t *testing.T) {
	o := testOracle(t)
	raO, err := crystal.Substitute(crystaltest.Build(t, "rocksalt", "MgO"), crystal.MustElement("Mg"), crystal.MustElement("Ra"))
	if err != nil {
		t.Fatal(err)
	}
	r := evaluate(t, o, Request{Structure: raO, Hull: true})[0]
	if !r.Valid || r.Stability != nil || len(r.Warnings) != 1 || r.Warnings[0].Code != ReasonNoReferencePhases || !strings.Contains(r.Warnings[0].Detail, "Ra") {
		t.Errorf("RaO: valid %v reasons %+v, stability %+v, warnings %+v; want a no_reference_phases warning", r.Valid, r.Reasons, r.Stability, r.Warnings)
	}
	if _, ok := r.Properties["formation_energy_per_atom"]; !ok {
		t.Error("RaO: no surrogate formation energy")
	}
	small, err := New(o.Reference(), o.set, Options{MaxHullElements: 2})
	if err != nil {
		t.Fatal(err)
	}
	r = evaluate(t, small, Request{Structure: crystaltest.Build(t, "perovskite", "SrTiO3"), Hull: true})[0]
	if r.Stability != nil || len(r.Warnings) != 1 || r.Warnings[0].Code != ReasonTooManyElements {
		t.Errorf("SrTiO3 with at most 2 elements: stability %+v, warnings %+v", r.Stability, r.Warnings)
	}
	r = evaluate(t, o, Request{Structure: crystaltest.Build(t, "rocksalt", "NaCl")})[0]
	if r.Stability != nil || len(r.Warnings) != 0 {
		t.Errorf("no hull asked: stability %+v, warnings %+v", r.Stability, r.Warnings)
	}
}

// TestConcurrentEvaluate runs batches from many goroutines (run with -race):
// new chemical systems are built concurrently, with and without extra
// entries, and every result equals the sequential one.
func TestConcurrentEvaluate(t *testing.T) {
	o := testOracle(t)
	cases := []struct{ proto, formula string }{
		{"rocksalt", "NaCl"}, {"rocksalt", "KI"}, {"perovskite", "BaZrO3"}, {"wurtzite", "ZnO"},
		{"perovskite", unknownFormula}, {"perovskite", "CsCaCl3"}, {"rutile", "SnO2"}, {"fluorite", "CaF2"},
	}
	extra := []hull.Entry{{ID: "campaign-1", Composition: crystal.MustParseFormula("Rb2Br"), EnergyPerAtom: -3}}
	batch := func(withExtra bool) []Request {
		var reqs []Request
		for _, c := range cases {
			r := Request{Structure: crystaltest.Build(t, c.proto, c.formula), Hull: true}
			if withExtra {
				r.Extra = extra
			}
			reqs = append(reqs, r)
		}
		return reqs
	}
	fresh, err := New(o.Reference(), o.set, Options{Workers: 3, Known: o.opts.Known})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines = 8
	results := make([][]Result, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() { results[g], errs[g] = fresh.Evaluate(context.Background(), batch(g%2 == 1)) })
	}
	wg.Wait()
	want := [2][]Result{evaluate(t, o, batch(false)...), evaluate(t, o, batch(true)...)}
	for g := range goroutines {
		if errs[g] != nil {
			t.Fatalf("goroutine %d: %v", g, errs[g])
		}
		if !reflect.DeepEqual(results[g], want[g%2]) {
			t.Errorf("goroutine %d: results differ from the sequential ones", g)
		}
	}
	for i, r := range want[0] {
		if r.Stability == nil {
			t.Errorf("%s: no stability: %+v %+v", cases[i].formula, r.Reasons, r.Warnings)
		}
	}
	if rb := want[1][4].Stability; rb == nil || rb.Decomposition["Rb2Br"] == 0 {
		t.Errorf("%s with the extra phase: %+v", unknownFormula, rb)
	}
}
