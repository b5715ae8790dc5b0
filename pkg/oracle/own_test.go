package oracle

import (
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/surrogate"
	"github.com/crucible-sci/crucible/pkg/task"
)

// ownOracle is an oracle whose own surrogates are small models trained on
// subsets of the shipped data with fast parameters (seconds), found by
// Open in a model cache of the test's own: what the oracle does with a
// model does not depend on how well it was trained.
var ownShared struct {
	once  sync.Once
	cache string
	err   error
}

func smallModels(t *testing.T) string {
	t.Helper()
	dir := testbed.DataDir(t)
	ownShared.once.Do(func() {
		cache, err := osMkdirTemp()
		if err != nil {
			ownShared.err = err
			return
		}
		ownShared.cache = cache
		quick := surrogate.TreeParams{LearningRate: 0.1, Trees: 200, Patience: 50}
		for _, p := range surrogate.Properties() {
			m, _, err := surrogate.Train(p.Name, dir, surrogate.Options{Seed: 1, MaxSamples: 150, Params: quick, Quick: true})
			if err != nil {
				ownShared.err = err
				return
			}
			if err := m.SaveFile(surrogate.Path(cache, p.Name)); err != nil {
				ownShared.err = err
				return
			}
		}
	})
	if ownShared.err != nil {
		t.Fatal(ownShared.err)
	}
	return ownShared.cache
}

func TestOwnSurrogates(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	dir := testbed.DataDir(t)
	t.Setenv(surrogate.CacheEnv, smallModels(t))
	o, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := OwnProperties()
	res := evaluate(t, o,
		Request{Structure: crystaltest.Build(t, "wurtzite", "GaN"), Properties: all},
		Request{Structure: crystaltest.Build(t, "rocksalt", "MgO"), Properties: all},
		Request{Structure: crystaltest.Build(t, "wurtzite", "ZnO"), Properties: []string{"band_gap", "conductivity"}},
		Request{Structure: crystaltest.Build(t, "wurtzite", "GaN")},
		Request{Structure: novelWurtzite(t), Properties: all},
	)
	gan, mgo, zno, plain, novel := res[0], res[1], res[2], res[3], res[4]

	// GaN is in the dielectric and piezoelectric sets: their values win,
	// the model's beside them; d is an estimate from them.
	for _, name := range []string{"dielectric_constant", "piezo_max_dielectric", "piezo_max_eij"} {
		v, ok := gan.Properties[name]
		if !ok || v.Source != SourceReference || v.Surrogate == nil || v.Unit != task.UnitOf(name) {
			t.Errorf("GaN %s = %+v, want a reference value with the model's beside it", name, v)
		}
	}
	if k := gan.Properties["dielectric_constant"].Value; math.Abs(k-10.96) > 0.01 {
		t.Errorf("GaN κ = %v, want the DFPT poly_total 10.96 (mp-804)", k)
	}
	d := gan.Properties["piezo_max_dij"]
	if d.Source != SourceEstimate || !(d.Value > 0) || !(d.Uncertainty > d.Value*surrogate.DijLogSpread68*0.99) {
		t.Errorf("GaN piezo_max_dij = %+v: want an estimate with at least the reduction's relative error", d)
	}
	e, k, g := gan.Properties["piezo_max_eij"], gan.Properties["bulk_modulus"], gan.Properties["shear_modulus"]
	want, err := surrogate.EstimateDij(surrogate.Estimate{Value: e.Value, Uncertainty: e.Uncertainty},
		surrogate.Estimate{Value: k.Value, Uncertainty: k.Uncertainty}, surrogate.Estimate{Value: g.Value, Uncertainty: g.Uncertainty})
	if err != nil || math.Abs(want.Value-d.Value) > 1e-9 || math.Abs(want.Uncertainty-d.Uncertainty) > 1e-9 {
		t.Errorf("GaN d = %+v, want EstimateDij of its e, K, G = %+v (%v)", d, want, err)
	}
	if _, ok := gan.Properties["conductivity"]; !ok {
		t.Error("GaN: no conductivity")
	}
	// The electronic ε∞ keeps its reference value under its own name.
	if v, ok := gan.Properties["dielectric_electronic"]; !ok || v.Source != SourceReference {
		t.Errorf("GaN dielectric_electronic = %+v, %v", v, ok)
	}

	// Rock-salt MgO has an inversion centre: e and d are 0 by symmetry,
	// even though MgO's formula is in the piezoelectric set (another
	// polymorph).
	for _, name := range []string{"piezo_max_eij", "piezo_max_dij"} {
		if v := mgo.Properties[name]; v.Source != SourceSymmetry || v.Value != 0 || v.Uncertainty != 0 {
			t.Errorf("MgO %s = %+v, want 0 by symmetry", name, v)
		}
	}

	// Only what a request asks for.
	if _, ok := zno.Properties["dielectric_constant"]; ok {
		t.Error("ZnO: κ predicted though not asked for")
	}
	if _, ok := zno.Properties["conductivity"]; !ok {
		t.Error("ZnO: no conductivity")
	}
	for _, name := range all {
		if _, ok := plain.Properties[name]; ok {
			t.Errorf("a request without Properties got %s", name)
		}
	}

	// A formula in none of the sets: every value from the models, each
	// with its calibrated uncertainty.
	if novel.Known {
		t.Fatalf("%s is known; pick another novel test formula", novel.Formula)
	}
	for _, name := range all {
		v, ok := novel.Properties[name]
		if !ok {
			t.Errorf("%s: no %s (warnings %v)", novel.Formula, name, novel.Warnings)
			continue
		}
		if v.Source != SourceSurrogate && v.Source != SourceEstimate || !(v.Uncertainty > 0) {
			t.Errorf("%s %s = %+v: want a model value with an uncertainty", novel.Formula, name, v)
		}
	}
	m, _, err := surrogate.Find("dielectric_constant", dir)
	if err != nil {
		t.Fatal(err)
	}
	kv := novel.Properties["dielectric_constant"]
	if got := math.Ln10 * kv.Value * m.Uncertainty.Log10Q68; math.Abs(got-kv.Uncertainty) > 1e-9*got {
		t.Errorf("novel κ uncertainty %v, want the calibrated ln10·κ·q68 = %v", kv.Uncertainty, got)
	}
	if err := o.Prepare([]string{"band_gap", "piezo_max_dij", "conductivity"}); err != nil {
		t.Errorf("Prepare: %v", err)
	}
}

// TestOwnSurrogatesCalibrated: with a calibration of the own surrogates
// (errors in log10 of the property, pkg/calibrate), a model value carries
// them scaled to it, and piezo_max_dij's uncertainty propagates the
// calibrated errors of its inputs.
func TestOwnSurrogatesCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	dir := testbed.DataDir(t)
	t.Setenv(surrogate.CacheEnv, smallModels(t))
	cal := map[string]Calibrated{
		"dielectric_constant": {Tier: "screen", MAE: 0.18, Bias: 0.08, Q68: 0.24, Q95: 0.48, Log10: true},
		"piezo_max_eij":       {Tier: "screen", MAE: 0.38, Bias: -0.34, Q68: 0.39, Q95: 1.3, Log10: true},
		"bulk_modulus":        {Tier: "screen", MAE: 29, Q68: 31, Q95: 88},
		// A log10 calibration is not applied to a CGCNN value.
		"shear_modulus": {Tier: "screen", MAE: 0.1, Q68: 0.1, Q95: 0.3, Log10: true},
	}
	o, err := Open(dir, Options{Calibration: cal})
	if err != nil {
		t.Fatal(err)
	}
	r := evaluate(t, o, Request{Structure: novelWurtzite(t), Properties: OwnProperties()})[0]
	for _, name := range []string{"dielectric_constant", "piezo_max_eij"} {
		v := r.Properties[name]
		if v.Source != SourceSurrogate || v.Calibrated == nil {
			t.Fatalf("%s = %+v: want a calibrated model value", name, v)
		}
		f := math.Ln10 * v.Value
		c := cal[name]
		if got := v.Calibrated; math.Abs(got.Q68-f*c.Q68) > 1e-12*f || math.Abs(got.Q95-f*c.Q95) > 1e-12*f ||
			math.Abs(got.Bias-f*c.Bias) > 1e-12*f || got.Log10 || v.Uncertainty != got.Q68 {
			t.Errorf("%s = %v: calibrated %+v, want ln10·v·(q68 %v, q95 %v)", name, v.Value, got, c.Q68, c.Q95)
		}
	}
	if g := r.Properties["shear_modulus"]; g.Calibrated != nil {
		t.Errorf("shear modulus took a log10 calibration: %+v", g)
	}
	e, k, g, d := r.Properties["piezo_max_eij"], r.Properties["bulk_modulus"], r.Properties["shear_modulus"], r.Properties["piezo_max_dij"]
	want, err := surrogate.EstimateDij(surrogate.Estimate{Value: e.Value, Uncertainty: e.Uncertainty},
		surrogate.Estimate{Value: k.Value, Uncertainty: k.Uncertainty}, surrogate.Estimate{Value: g.Value, Uncertainty: g.Uncertainty})
	if err != nil || k.Uncertainty != 31 || math.Abs(want.Uncertainty-d.Uncertainty) > 1e-9*want.Uncertainty {
		t.Errorf("d = %+v, want EstimateDij of the calibrated e, K, G = %+v (%v)", d, want, err)
	}
}

func TestOwnSurrogatesMissing(t *testing.T) {
	dir := testbed.DataDir(t)
	t.Setenv(surrogate.CacheEnv, t.TempDir())
	o, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := evaluate(t, o, Request{Structure: novelWurtzite(t), Properties: []string{"dielectric_constant"}})[0]
	if _, ok := res.Properties["dielectric_constant"]; ok {
		t.Error("κ without a model")
	}
	if len(res.Warnings) == 0 || res.Warnings[0].Code != ReasonNoModel || !strings.Contains(res.Warnings[0].Detail, "crucible train dielectric_constant") {
		t.Errorf("warnings %+v, want no_model saying how to train it", res.Warnings)
	}
	err = o.Prepare([]string{"piezo_max_dij"})
	if err == nil || !strings.Contains(err.Error(), "crucible train piezo_max_eij") {
		t.Errorf("Prepare: %v, want how to train piezo_max_eij", err)
	}
}

// osMkdirTemp is a directory for the test binary's small models, shared by
// its tests (t.TempDir is per test).
func osMkdirTemp() (string, error) { return os.MkdirTemp("", "crucible-oracle-models-") }

// novelWurtzite is wurtzite ZnO in a 2×2×1 supercell with one Zn of eight
// replaced by Ca: CaZn7O8, acentric and in none of the data sets.
func novelWurtzite(t *testing.T) *crystal.Structure {
	t.Helper()
	s, err := crystaltest.Build(t, "wurtzite", "ZnO").Supercell(2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, el := range s.Species {
		if el.Symbol() == "Zn" {
			s.Species[i] = crystal.MustParseFormula("Ca").Elements()[0]
			break
		}
	}
	return s
}
