package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/cgcnn"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// shared is one oracle per test binary: loading takes a fraction of a
// second, and an Oracle is safe for concurrent use.
var shared struct {
	once sync.Once
	o    *Oracle
	err  error
}

func testOracle(t testing.TB) *Oracle {
	t.Helper()
	dir := testbed.DataDir(t)
	shared.once.Do(func() { shared.o, shared.err = Open(dir, Options{}) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.o
}

func evaluate(t testing.TB, o *Oracle, reqs ...Request) []Result {
	t.Helper()
	res, err := o.Evaluate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(reqs) {
		t.Fatalf("%d results for %d requests", len(res), len(reqs))
	}
	return res
}

func codes(rs []Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Code)
	}
	return out
}

func TestInvalidStructures(t *testing.T) {
	o := testOracle(t)
	nacl := crystaltest.Build(t, "rocksalt", "NaCl")

	// An extra Na atom 0.3 Å from the Cl atom.
	cl := nacl.Species[1]
	if cl != crystal.MustElement("Cl") {
		cl = nacl.Species[0]
	}
	var clSite int
	for i, e := range nacl.Species {
		if e == crystal.MustElement("Cl") {
			clSite = i
		}
	}
	shift := nacl.Lattice.Fractional(crystal.Vec3{0.3, 0, 0})
	overlap, err := crystal.NewStructure(nacl.Lattice,
		append(append([]crystal.Element(nil), nacl.Species...), crystal.MustElement("Na")),
		append(append([]crystal.Vec3(nil), nacl.Frac...), nacl.Frac[clSite].Add(shift)))
	if err != nil {
		t.Fatal(err)
	}
	big, err := nacl.Supercell(10, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	if big.NumSites() != 1000 {
		t.Fatalf("supercell has %d atoms", big.NumSites())
	}
	// MgF in rock salt: Mg²⁺ with one F⁻ balances in no chemistry.
	mgf, err := crystal.Substitute(nacl, crystal.MustElement("Na"), crystal.MustElement("Mg"))
	if err == nil {
		mgf, err = crystal.Substitute(mgf, crystal.MustElement("Cl"), crystal.MustElement("F"))
	}
	if err != nil {
		t.Fatal(err)
	}

	// Invalid by chemistry or stated formula, the structure is still
	// predicted; unreadable, overlapping or too large, it is not.
	tests := []struct {
		name      string
		req       Request
		code      string
		predicted bool
	}{
		{"overlapping atoms", Request{Structure: overlap, Hull: true}, string(crystal.ReasonOverlap), false},
		{"1000-atom cell", Request{Structure: big, Hull: true}, string(crystal.ReasonTooManyAtoms), false},
		{"no structure", Request{Hull: true}, string(crystal.ReasonUnreadable), false},
		{"stated formula", Request{Structure: nacl, StatedFormula: "NaCl2", Hull: true}, string(crystal.ReasonFormulaMismatch), true},
		{"charge", Request{Structure: mgf, Hull: true}, string(crystal.ReasonChargeNeutrality), true},
	}
	reqs := make([]Request, len(tests))
	for i, tc := range tests {
		reqs[i] = tc.req
	}
	res := evaluate(t, o, reqs...)
	for i, tc := range tests {
		r := res[i]
		if r.Valid || !strings.Contains(strings.Join(codes(r.Reasons), " "), tc.code) {
			t.Errorf("%s: valid %v, reasons %+v; want invalid with %s", tc.name, r.Valid, r.Reasons, tc.code)
		}
		for _, reason := range r.Reasons {
			if reason.Detail == "" {
				t.Errorf("%s: reason %s without detail", tc.name, reason.Code)
			}
		}
		if r.Predicted != tc.predicted {
			t.Errorf("%s: predicted %v, want %v", tc.name, r.Predicted, tc.predicted)
		}
		if (r.Stability != nil) != tc.predicted {
			t.Errorf("%s: predicted %v but stability %+v", tc.name, tc.predicted, r.Stability)
		}
		// Only the exact structure properties, and only with a structure,
		// unless predicted: then the surrogates' too.
		surrogate := false
		for name, v := range r.Properties {
			surrogate = surrogate || v.Source == SourceCGCNN || v.Source == SourceReference
			if v.Source != SourceStructure && !tc.predicted {
				t.Errorf("%s: invalid structure has %s from %s", tc.name, name, v.Source)
			}
		}
		if tc.predicted && !surrogate {
			t.Errorf("%s: predicted but no surrogate or reference value: %v", tc.name, r.Properties)
		}
		if tc.req.Structure != nil {
			if d := r.Properties["density"]; math.Abs(d.Value-tc.req.Structure.Density()) > 1e-12 {
				t.Errorf("%s: density %v, want %v", tc.name, d.Value, tc.req.Structure.Density())
			}
		}
	}
	if !res[1].Known || res[1].Formula != "NaCl" {
		t.Errorf("1000-atom NaCl: formula %q known %v; the formula is still known", res[1].Formula, res[1].Known)
	}
}

// TestUnsupportedElement uses atom features without sodium: a structure
// with Na is invalid, with a reason.
func TestUnsupportedElement(t *testing.T) {
	o := testOracle(t)
	models := datadir.Models(testbed.DataDir(t))
	data, err := os.ReadFile(filepath.Join(models, cgcnn.AtomInitFile))
	if err != nil {
		t.Fatal(err)
	}
	var table map[string]json.RawMessage
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	delete(table, "11") // Na
	trimmed, err := json.Marshal(table)
	if err != nil {
		t.Fatal(err)
	}
	atoms, err := cgcnn.ReadAtomFeatures(strings.NewReader(string(trimmed)))
	if err != nil {
		t.Fatal(err)
	}
	model, err := cgcnn.LoadCheckpoint(filepath.Join(models, "formation-energy-per-atom.pth.tar"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := cgcnn.NewSet(atoms, model)
	if err != nil {
		t.Fatal(err)
	}
	on, err := New(o.Reference(), set, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := evaluate(t, on, Request{Structure: crystaltest.Build(t, "rocksalt", "NaCl"), Hull: true}, Request{Structure: crystaltest.Build(t, "rocksalt", "KCl")})
	if res[0].Valid || res[0].Predicted || len(res[0].Reasons) != 1 || res[0].Reasons[0].Code != ReasonUnsupportedElement || !strings.Contains(res[0].Reasons[0].Detail, "Na") {
		t.Errorf("NaCl without Na features: %+v", res[0])
	}
	if !res[1].Valid || !res[1].Predicted || res[1].Class != crystal.ClassIonic || res[1].Properties["formation_energy_per_atom"].Surrogate == nil {
		t.Errorf("KCl: %+v", res[1])
	}
}

// TestPrototypeFormationEnergies compares CGCNN's formation energy of
// prototype-built structures with the reference (lowest Materials Project
// entry): the surrogate value itself, not the reference-overridden one.
func TestPrototypeFormationEnergies(t *testing.T) {
	o := testOracle(t)
	surrogateOnly, err := New(o.Reference(), o.set, Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		proto, formula string
		group          int // the prototype's space group
	}{
		{"rocksalt", "NaCl", 225}, {"rocksalt", "MgO", 225}, {"perovskite", "SrTiO3", 221}, {"wurtzite", "GaN", 186},
	}
	var reqs []Request
	for _, c := range cases {
		reqs = append(reqs, Request{Structure: crystaltest.Build(t, c.proto, c.formula)})
	}
	mixed := evaluate(t, o, reqs...)
	pure := evaluate(t, surrogateOnly, reqs...)
	for i, c := range cases {
		ref, ok := o.Reference().Property("formation_energy_per_atom", c.formula)
		if !ok {
			t.Fatalf("%s not in the reference tables", c.formula)
		}
		cg := pure[i].Properties["formation_energy_per_atom"]
		if cg.Source != SourceCGCNN {
			t.Fatalf("%s: surrogate-only source %s", c.formula, cg.Source)
		}
		t.Logf("%-7s CGCNN %.4f, reference %.4f eV/atom (Δ %+.4f)", c.formula, cg.Value, ref.Value, cg.Value-ref.Value)
		if d := math.Abs(cg.Value - ref.Value); d > 0.25 {
			t.Errorf("%s: CGCNN %.4f eV/atom, reference %.4f: off by %.3f > 0.25", c.formula, cg.Value, ref.Value, d)
		}
		// The hierarchical oracle reports the same CGCNN value beside the
		// reference one.
		got := mixed[i].Properties["formation_energy_per_atom"]
		if got.Source != SourceReference || got.Value != ref.Value || got.Surrogate == nil || *got.Surrogate != cg.Value {
			t.Errorf("%s: hierarchical value %+v, want reference %v with surrogate %v", c.formula, got, ref.Value, cg.Value)
		}
		if g := mixed[i].SpaceGroup; g == nil || g.Number != c.group {
			t.Errorf("%s (%s): space group %v, want %d", c.formula, c.proto, g, c.group)
		}
	}
}

// unknownFormula is in no reference table (checked by the test).
const unknownFormula = "RbSrBr3"

func TestKnownAndUnknown(t *testing.T) {
	o := testOracle(t)
	res := evaluate(t, o,
		Request{Structure: crystaltest.Build(t, "rocksalt", "NaCl")},
		Request{Structure: crystaltest.Build(t, "perovskite", unknownFormula)})
	known, unknown := res[0], res[1]
	if !known.Known || !known.Valid {
		t.Fatalf("NaCl: known %v valid %v %+v", known.Known, known.Valid, known.Reasons)
	}
	if unknown.Known || !unknown.Valid || unknown.Formula != unknownFormula {
		t.Fatalf("%s: formula %s known %v valid %v %+v", unknownFormula, unknown.Formula, unknown.Known, unknown.Valid, unknown.Reasons)
	}
	for name, ref := range o.Reference().Properties("NaCl") {
		if name == "e_above_hull" {
			if _, ok := known.Properties[name]; ok {
				t.Error("e_above_hull is a property; it belongs to Stability")
			}
			continue
		}
		v := known.Properties[name]
		if v.Source != SourceReference || v.Value != ref.Value || v.Uncertainty != 0 || v.Unit != ref.Unit {
			t.Errorf("NaCl %s = %+v, want the reference %v", name, v, ref.Value)
		}
		if (v.Surrogate != nil) != (name != "dielectric_electronic") {
			t.Errorf("NaCl %s: surrogate %v; every property but the electronic dielectric constant has one", name, v.Surrogate)
		}
	}
	for _, s := range Surrogates() {
		v, ok := unknown.Properties[s.Property]
		if !ok {
			t.Errorf("%s: no %s", unknownFormula, s.Property)
			continue
		}
		p, err := task.PropertyByName(s.Property)
		if err != nil {
			t.Fatal(err)
		}
		want := s.MAE
		if s.Log10 {
			want = math.Ln10 * v.Value * s.MAE
		}
		if v.Source != SourceCGCNN || v.Surrogate != nil || v.Unit != p.Unit || math.Abs(v.Uncertainty-want) > 1e-12*max(1, want) {
			t.Errorf("%s %s = %+v, want CGCNN in %q with uncertainty %v", unknownFormula, s.Property, v, p.Unit, want)
		}
		if s.Property != "metal_probability" && v.Uncertainty <= 0 {
			t.Errorf("%s %s: no uncertainty", unknownFormula, s.Property)
		}
	}
	if _, ok := unknown.Properties["dielectric_constant"]; ok {
		t.Errorf("%s has a dielectric constant, which only the reference gives", unknownFormula)
	}
	for _, name := range []string{"density", "volume_per_atom"} {
		if v := unknown.Properties[name]; v.Source != SourceStructure || v.Uncertainty != 0 || v.Value <= 0 {
			t.Errorf("%s %s = %+v", unknownFormula, name, v)
		}
	}
	if st := unknown.OxidationStates; st["Rb"] != 1 || st["Sr"] != 2 || st["Br"] != -1 {
		t.Errorf("%s oxidation states %v", unknownFormula, st)
	}
	// Values have the wire type's JSON shape.
	for name, v := range unknown.Properties {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var wire messages.PropertyValue
		if err := json.Unmarshal(data, &wire); err != nil {
			t.Fatal(err)
		}
		back, _ := json.Marshal(wire)
		if string(back) != string(data) {
			t.Errorf("%s: %s does not round-trip through messages.PropertyValue (%s)", name, data, back)
		}
	}
}

func TestOptions(t *testing.T) {
	dir := testbed.DataDir(t)
	if _, err := Open(dir, Options{Checkpoints: []string{"band-gap", "final-energy-per-atom"}}); err == nil || !strings.Contains(err.Error(), "final-energy-per-atom") {
		t.Errorf("Open with a non-property checkpoint: %v", err)
	}
	o := testOracle(t)
	gapModel, err := cgcnn.LoadCheckpoint(filepath.Join(datadir.Models(dir), "band-gap.pth.tar"))
	if err != nil {
		t.Fatal(err)
	}
	gapSet, err := cgcnn.NewSet(o.atoms, gapModel)
	if err != nil {
		t.Fatal(err)
	}
	gapOnly, err := New(o.Reference(), gapSet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	none, err := New(o.Reference(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := []Request{
		{Structure: crystaltest.Build(t, "perovskite", unknownFormula), Hull: true},
		{Structure: crystaltest.Build(t, "rocksalt", "NaCl"), Hull: true},
	}
	res := evaluate(t, gapOnly, reqs...)
	if len(res[0].Properties) != 3 || res[0].Properties["band_gap"].Source != SourceCGCNN {
		t.Errorf("band gap only, unknown: %+v", res[0].Properties)
	}
	if len(res[0].Warnings) != 1 || res[0].Warnings[0].Code != ReasonNoFormationEnergy || res[0].Stability != nil {
		t.Errorf("band gap only, unknown: warnings %+v, stability %+v", res[0].Warnings, res[0].Stability)
	}
	if st := res[1].Stability; st == nil || st.FormationEnergySource != SourceReference {
		t.Errorf("band gap only, NaCl: stability %+v (the reference energy suffices)", st)
	}
	res = evaluate(t, none, reqs...)
	if len(res[0].Properties) != 2 || !res[0].Valid {
		t.Errorf("no checkpoints, unknown: %+v", res[0])
	}
	if v := res[1].Properties["band_gap"]; v.Source != SourceReference || v.Surrogate != nil {
		t.Errorf("no checkpoints, NaCl band gap: %+v", v)
	}
}

func TestOpenMissingData(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrMissingData) {
		t.Fatalf("error %v, want ErrMissingData", err)
	}
	for _, want := range []string{"crucible data pull", "CRUCIBLE_DATA", "data/mp_e_form.csv", "18 files"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
}

func TestEvaluateCancelled(t *testing.T) {
	o := testOracle(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Evaluate(ctx, []Request{{Structure: crystaltest.Build(t, "rocksalt", "NaCl")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestSurrogateConversions(t *testing.T) {
	for _, s := range Surrogates() {
		p, err := task.PropertyByName(s.Property)
		if err != nil {
			t.Errorf("%s: %v", s.Checkpoint, err)
			continue
		}
		if s.Log10 != (p.Unit == "GPa") {
			t.Errorf("%s: log10 %v but unit %q", s.Checkpoint, s.Log10, p.Unit)
		}
	}
	bulk, _ := surrogateByCheckpoint("bulk-moduli")
	tests := []struct {
		s         Surrogate
		y, v, unc float64
	}{
		{bulk, 2, 100, 0.054 * math.Ln10 * 100},
		{bulk, 1, 10, 0.054 * math.Ln10 * 10},
		{Surrogate{MAE: 0.388}, 1.5, 1.5, 0.388},
		{Surrogate{}, 0.7, 0.7, 0},
	}
	for _, tc := range tests {
		v := tc.s.Value(tc.y)
		if math.Abs(v-tc.v) > 1e-12*tc.v || math.Abs(tc.s.Uncertainty(v)-tc.unc) > 1e-12 {
			t.Errorf("%s(%v) = %v ± %v, want %v ± %v", tc.s.Checkpoint, tc.y, v, tc.s.Uncertainty(v), tc.v, tc.unc)
		}
	}
}

func TestCold(t *testing.T) {
	o := testOracle(t)
	req := Request{Structure: crystaltest.Build(t, "perovskite", unknownFormula), Hull: true}
	warm := evaluate(t, o, req)[0]
	if warm.Stability == nil {
		t.Fatalf("%s: no stability %+v", unknownFormula, warm.Warnings)
	}
	system := warm.Stability.System
	if !slices.Contains(o.hulls.Systems(), system) {
		t.Fatalf("the oracle did not keep the diagram of %s: %v", system, o.hulls.Systems())
	}
	c, err := o.Cold()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.hulls.Systems(); len(got) != 0 {
		t.Fatalf("a cold oracle has diagrams of %v", got)
	}
	cold := evaluate(t, c, req)[0]
	if !reflect.DeepEqual(cold, warm) {
		t.Errorf("cold oracle: %+v\nwarm: %+v", cold, warm)
	}
	if !slices.Contains(o.hulls.Systems(), system) || c.hulls == o.hulls {
		t.Error("the cold copy shares the original's hull cache")
	}
}

// TestMetalRule: the classifier's probability goes with every CGCNN band
// gap; a metal's gap is 0, with the model's value kept beside it; a
// reference gap is not touched.
func TestMetalRule(t *testing.T) {
	p := func(x float64) *float64 { return &x }
	props := map[string]Value{
		"band_gap":          {Value: 1.7, Source: SourceCGCNN, Uncertainty: 0.388, TieSpread: 0.1},
		"metal_probability": {Value: 0.93, Source: SourceCGCNN},
	}
	MetalRule(props)
	got := props["band_gap"]
	if want := (Value{Value: 0, Source: SourceCGCNN, Surrogate: p(1.7), MetalProbability: p(0.93), Metallic: true}); !reflect.DeepEqual(got, want) {
		t.Errorf("metal: %+v, want %+v", got, want)
	}
	props = map[string]Value{
		"band_gap":          {Value: 2.1, Source: SourceCGCNN, Uncertainty: 0.388},
		"metal_probability": {Value: 0.49, Source: SourceCGCNN},
	}
	MetalRule(props)
	if got := props["band_gap"]; got.Value != 2.1 || got.Metallic || got.MetalProbability == nil || *got.MetalProbability != 0.49 {
		t.Errorf("non-metal: %+v", got)
	}
	props = map[string]Value{
		"band_gap":          {Value: 7.8, Source: SourceReference},
		"metal_probability": {Value: 0.7, Source: SourceCGCNN},
	}
	MetalRule(props)
	if got := props["band_gap"]; got.Value != 7.8 || got.Metallic || got.MetalProbability != nil {
		t.Errorf("reference: %+v", got)
	}
}

// TestMetalsHaveNoGap: an intermetallic's band gap is 0 with the
// classifier, whatever the band-gap model says; an insulator keeps its
// gap.
func TestMetalsHaveNoGap(t *testing.T) {
	o := testOracle(t)
	surrogateOnly, err := New(o.Reference(), o.set, Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	res := evaluate(t, surrogateOnly,
		Request{Structure: crystaltest.Build(t, "cscl", "NbTi")},
		Request{Structure: crystaltest.Build(t, "rocksalt", "MgO")})
	for i, name := range []string{"NbTi", "MgO"} {
		gap := res[i].Properties["band_gap"]
		pm := res[i].Properties["metal_probability"]
		model := gap.Value
		if gap.Surrogate != nil {
			model = *gap.Surrogate
		}
		t.Logf("%s: P(metal) %.3f, gap %.3f (model %.3f)", name, pm.Value, gap.Value, model)
		if gap.MetalProbability == nil || *gap.MetalProbability != pm.Value {
			t.Errorf("%s: gap without the classifier's probability: %+v", name, gap)
		}
		metal := name == "NbTi"
		if gap.Metallic != metal || (metal && gap.Value != 0) || (!metal && gap.Value < 3) {
			t.Errorf("%s: %+v", name, gap)
		}
	}
}

// TestCalibration: with a calibration, surrogate values of a novel
// compound carry it and its Q68 as their uncertainty, and so does an
// energy above hull resting on a surrogate formation energy.
func TestCalibration(t *testing.T) {
	o := testOracle(t)
	cal := map[string]Calibrated{
		"formation_energy_per_atom": {Tier: "screen", MAE: 0.18, Q68: 0.17, Q95: 0.6},
		"band_gap":                  {Tier: "screen", MAE: 0.5, Q68: 0.52, Q95: 2},
		"e_above_hull":              {Tier: "screen", MAE: 0.18, Q68: 0.17, Q95: 0.6},
	}
	co, err := New(o.Reference(), o.set, Options{Calibration: cal})
	if err != nil {
		t.Fatal(err)
	}
	r := evaluate(t, co, Request{Structure: crystaltest.Build(t, "perovskite", unknownFormula), Hull: true})[0]
	ef := r.Properties["formation_energy_per_atom"]
	if ef.Calibrated == nil || ef.Uncertainty != 0.17 {
		t.Errorf("formation energy: %+v", ef)
	}
	if gap := r.Properties["band_gap"]; !gap.Metallic && (gap.Calibrated == nil || gap.Uncertainty != 0.52) {
		t.Errorf("band gap: %+v", gap)
	}
	if bm := r.Properties["bulk_modulus"]; bm.Calibrated != nil || bm.Uncertainty == 0 {
		t.Errorf("uncalibrated bulk modulus: %+v", bm)
	}
	if r.Stability == nil || r.Stability.Calibrated == nil || r.Stability.Calibrated.Q68 != 0.17 {
		t.Errorf("stability: %+v", r.Stability)
	}
}
