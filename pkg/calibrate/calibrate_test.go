package calibrate

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/surrogate"
	"github.com/crucible-sci/crucible/pkg/task"
)

// measured is a small calibration, measured once per test binary.
func measured(t *testing.T) (*Calibration, string) {
	t.Helper()
	dir := testbed.DataDir(t)
	o, err := oracle.Open(dir, oracle.Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{PerProperty: 40, Seed: 1, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}
	c, err := Measure(context.Background(), o, o.Reference(), datadir.Models(dir), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := MeasureOwn(context.Background(), o, ownModels(t, dir), dir, c, opts); err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// ownShared are small own surrogates, trained once per test binary on
// subsets of the shipped data with fast parameters: what is measured
// does not depend on how well they were trained.
var ownShared struct {
	once   sync.Once
	models []*surrogate.Model
	err    error
}

func ownModels(t *testing.T, dir string) []*surrogate.Model {
	t.Helper()
	ownShared.once.Do(func() {
		quick := surrogate.TreeParams{LearningRate: 0.1, Trees: 200, Patience: 50}
		for _, p := range surrogate.Properties() {
			m, _, err := surrogate.Train(p.Name, dir, surrogate.Options{Seed: 1, MaxSamples: 150, Params: quick, Quick: true})
			if err != nil {
				ownShared.err = err
				return
			}
			ownShared.models = append(ownShared.models, m)
		}
	})
	if ownShared.err != nil {
		t.Fatal(ownShared.err)
	}
	return ownShared.models
}

// TestEverySurrogateCalibrated: every surrogate the oracle uses is either
// calibrated or says why not, and every CGCNN property a built-in task
// constrains, and the energy above hull, is calibrated — from the
// calibration in the lookup order when there is one, else from one
// measured here.
func TestEverySurrogateCalibrated(t *testing.T) {
	dir := testbed.DataDir(t)
	c, path, err := Find(dir)
	switch {
	case errors.Is(err, ErrNoCalibration):
		c, _ = measured(t)
		path = "measured by the test"
	case err != nil:
		t.Fatal(err)
	}
	o, err := oracle.Open(dir, oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.Surrogates() {
		names = append(names, s.Checkpoint)
	}
	if err := c.Check(datadir.Models(dir), names); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tier := c.Tiers[TierScreen]
	for _, s := range o.Surrogates() {
		_, ok := c.Stats(TierScreen, s.Property)
		if why := tier.Uncalibrated[s.Property]; !ok && why == "" {
			t.Errorf("%s: surrogate %s neither calibrated nor explained", path, s.Property)
		}
	}
	// Every surrogate property a built-in task constrains — CGCNN's and
	// Crucible's own (pkg/surrogate) — must be calibrated, and so must the
	// energy above hull; piezo_max_dij is an estimate from calibrated
	// inputs (piezo_max_eij and the moduli).
	models := map[string]bool{}
	for _, s := range o.Surrogates() {
		models[s.Property] = true
	}
	for _, p := range surrogate.Properties() {
		models[p.Name] = true
	}
	models[oracle.DerivedDij] = false
	need := map[string]bool{"e_above_hull": true, "piezo_max_eij": true, "bulk_modulus": true, "shear_modulus": true}
	for _, tk := range task.Builtins() {
		for _, k := range tk.Constraints {
			if p, err := task.PropertyByName(k.Property); err == nil && p.Support == task.SupportSurrogate && models[k.Property] {
				need[k.Property] = true
			}
		}
	}
	for _, p := range surrogate.Properties() {
		if _, ok := c.Stats(TierScreen, p.Name); !ok {
			t.Errorf("%s: own surrogate %s not calibrated (%s)", path, p.Name, tier.Uncalibrated[p.Name])
		}
	}
	for p := range need {
		if st, ok := c.Stats(TierScreen, p); !ok || !(st.Q68 > 0) || st.Q95 < st.Q68 {
			t.Errorf("%s: %s not calibrated: %+v", path, p, st)
		}
	}
}

func TestMeasureAndFile(t *testing.T) {
	c, dir := measured(t)
	tier := c.Tiers[TierScreen]
	// The own surrogates: errors in log10, on sets of their data's
	// formulas that were built, with the compounds left out counted.
	for _, p := range surrogate.Properties() {
		st := tier.Properties[p.Name]
		set := c.Set.Surrogates[p.Name]
		if !st.Log10 || st.N == 0 || st.N > 40 || len(set.Formulas) != st.N || set.Folds != OwnFolds || len(set.Checksum) != 64 ||
			!(st.Q68 > 0) || st.Q95 < st.Q68 || c.Models[OwnModelKey(p.Name)] == "" {
			t.Errorf("%s: %+v, set %d formulas", p.Name, st, len(set.Formulas))
		}
	}
	if tier.Properties["piezo_max_eij"].Excluded[ExcludedZeroBySymmetry] == 0 {
		t.Error("piezo_max_eij: no built structure is centrosymmetric; expected some (rock salt, fluorite)")
	}
	ef := tier.Properties["formation_energy_per_atom"]
	if ef.N != 40 || ef.Q68 <= 0 || ef.Q95 < ef.Q68 || ef.MAE <= 0 {
		t.Errorf("formation energy: %+v", ef)
	}
	if eh := tier.Properties["e_above_hull"]; eh.Derived != "formation_energy_per_atom" || eh.MAE != ef.MAE {
		t.Errorf("e_above_hull: %+v", eh)
	}
	if len(c.Set.Formulas) < 40 || len(c.Set.Checksum) != 64 || len(c.Models) != len(oracle.Surrogates())+len(surrogate.Properties()) {
		t.Errorf("set %d formulas, checksum %q, %d models", len(c.Set.Formulas), c.Set.Checksum, len(c.Models))
	}
	// Deterministic for a seed.
	again, _ := measured(t)
	if !reflect.DeepEqual(again, c) {
		t.Error("two measurements with the same seed differ")
	}
	// The file round-trips; the lookup order puts CRUCIBLE_CALIBRATION
	// first; a missing file named there is an error.
	path := filepath.Join(t.TempDir(), "sub", FileName)
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvFile, path)
	back, found, err := Find(dir)
	if err != nil || found != path || !reflect.DeepEqual(back, c) {
		t.Errorf("Find: %q, %v; equal %v", found, err, reflect.DeepEqual(back, c))
	}
	t.Setenv(EnvFile, path+".missing")
	if _, _, err := Find(dir); err == nil {
		t.Error("a missing CRUCIBLE_CALIBRATION file was skipped")
	}
	// An unknown field or another schema is refused.
	if err := os.WriteFile(path, []byte(`{"schema":1,"extra":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("unknown field accepted")
	}
	// A changed model makes the calibration stale.
	c.Models["band-gap"] = "0000"
	if err := c.Check(datadir.Models(dir), []string{"band-gap"}); !errors.Is(err, ErrStale) {
		t.Errorf("Check: %v, want ErrStale", err)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	for q, want := range map[float64]float64{0: 0, 0.5: 2, 0.68: 2.72, 0.95: 3.8, 1: 4} {
		if got := quantile(x, q); got < want-1e-12 || got > want+1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
	st := statsOf("eV", []float64{-1, 1, 2})
	if st.MAE != 4.0/3 || st.Bias != 2.0/3 || st.N != 3 {
		t.Errorf("statsOf: %+v", st)
	}
}

// TestMeasureOwnOutOfSample: the own surrogates are measured out of
// sample. The model trained on every compound predicts them better than
// the fold models that never saw them, which is what a candidate gets.
func TestMeasureOwnOutOfSample(t *testing.T) {
	dir := testbed.DataDir(t)
	quick := surrogate.TreeParams{LearningRate: 0.1, Trees: 200, Patience: 50}
	m, _, err := surrogate.Train("dielectric_constant", dir, surrogate.Options{Seed: 1, Params: quick, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := surrogate.NewHeldOut(m, dir, OwnFolds)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := surrogate.LoadDataset(m.Property, dir)
	if err != nil {
		t.Fatal(err)
	}
	var in, out float64
	n := 0
	for _, s := range ds.Samples[:200] {
		fm, ref, ok := h.For(s.Composition.ReducedFormula())
		if !ok || fm == m {
			continue
		}
		x := surrogate.Input{Structure: s.Structure, Composition: s.Composition, Properties: s.Properties}
		vi, _, err1 := m.Predict(x)
		vo, _, err2 := fm.Predict(x)
		if err1 != nil || err2 != nil {
			continue
		}
		in += math.Abs(math.Log10(vi / ref))
		out += math.Abs(math.Log10(vo / ref))
		n++
	}
	if n < 100 || !(out > in) {
		t.Errorf("%d compounds: in-sample log10 MAE %.3g, held-out %.3g; want held-out larger", n, in/float64(max(n, 1)), out/float64(max(n, 1)))
	}
}

// TestMeasureRelax: the relax tier is measured on a few compounds, the
// energy above hull taking the formation energy's errors.
func TestMeasureRelax(t *testing.T) {
	if testing.Short() {
		t.Skip("relaxes structures")
	}
	dir := testbed.DataDir(t)
	o, err := oracle.Open(dir, oracle.Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := oracle.OpenRelaxer(dir, oracle.RelaxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := &Calibration{Schema: Schema, Tiers: map[string]Tier{}, Models: map[string]string{}}
	if err := MeasureRelax(context.Background(), o, r, o.Reference(), c, RelaxOptions{Compounds: 3, Seed: 1, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	tier := c.Tiers[TierRelax]
	ef, eh := tier.Properties["formation_energy_per_atom"], tier.Properties["e_above_hull"]
	if ef.N == 0 || ef.N+ef.Excluded["not_relaxed"] != 3 || len(c.Set.Relaxed) != ef.N || !(ef.Q95 >= ef.Q68) {
		t.Errorf("relax tier formation energy %+v, set %v", ef, c.Set.Relaxed)
	}
	if eh.Derived != "formation_energy_per_atom" || eh.Q95 != ef.Q95 {
		t.Errorf("relax tier e_above_hull %+v", eh)
	}
	if tier.Uncalibrated["dielectric_constant"] == "" {
		t.Error("the own surrogates are not said to be unmeasured in the relax tier")
	}
}
