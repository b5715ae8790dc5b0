package surrogate

import (
	"bytes"
	"math"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// quick are boosting parameters for the CI-sized cross-validation:
// a faster learning rate and fewer trees than the defaults.
var quick = TreeParams{LearningRate: 0.1, Trees: 300, Patience: 50}

// TestCrossValidationCI trains each property's model on a subset of its
// data with quick parameters and checks that it clearly beats the mean
// predictor (and, where it has more than composition features, the
// composition-only baseline), that the saved model reloads and predicts
// as trained, and the domain rules of the predictions. It takes about
// 20–40 s.
func TestCrossValidationCI(t *testing.T) {
	dir := testbed.DataDir(t)
	if testing.Short() {
		t.Skip("cross-validation in -short mode")
	}
	for _, c := range []struct {
		property string
		samples  int
		// Required: model log10 MAE below this fraction of the mean
		// predictor's, Spearman ρ above minRho.
		maxRatio, minRho float64
		beatsBaseline    bool
	}{
		{"dielectric_constant", 500, 0.65, 0.75, true},
		{"piezo_max_eij", 500, 0.8, 0.6, true},
		{"conductivity", 0, 0.5, 0.75, false},
	} {
		m, rep, err := Train(c.property, dir, Options{Seed: 3, MaxSamples: c.samples, Params: quick})
		if err != nil {
			t.Fatal(err)
		}
		ratio := rep.Model.MAELog10 / rep.Mean.MAELog10
		t.Logf("%s: n %d, log10 MAE model %.4f, composition %.4f, mean %.4f (ratio %.2f); ρ model %s, composition %s; grouped: model %.4f, mean %.4f; %v",
			c.property, rep.Samples, rep.Model.MAELog10, rep.Baseline.MAELog10, rep.Mean.MAELog10, ratio,
			rho(rep.Model), rho(rep.Baseline), rep.ModelGrouped.MAELog10, rep.MeanGrouped.MAELog10, rep.Duration)
		if ratio > c.maxRatio {
			t.Errorf("%s: model log10 MAE %.4f is %.2f of the mean predictor's, want ≤ %.2f", c.property, rep.Model.MAELog10, ratio, c.maxRatio)
		}
		if rep.Model.Spearman == nil || *rep.Model.Spearman < c.minRho {
			t.Errorf("%s: ρ %s, want ≥ %.2f", c.property, rho(rep.Model), c.minRho)
		}
		if rep.Mean.Spearman != nil {
			t.Errorf("%s: the mean predictor has a ρ", c.property)
		}
		if c.beatsBaseline && !(rep.GainLog10.Lo > 0) {
			t.Errorf("%s: gain over the composition baseline %.4f [%.4f, %.4f] not clearly positive",
				c.property, rep.GainLog10.Value, rep.GainLog10.Lo, rep.GainLog10.Hi)
		}
		if (c.property == "dielectric_constant") != (rep.OracleGap != nil && rep.OracleGapGrouped != nil) {
			t.Errorf("%s: oracle-gap scoring %v", c.property, rep.OracleGap)
		}
		u := m.Uncertainty
		if !(u.Log10Q68 > 0 && u.Log10Q68 < u.Log10Q95 && u.AbsQ68 < u.AbsQ95) {
			t.Errorf("%s: uncertainty %+v", c.property, u)
		}
		// Calibrated on grouped folds (and the oracle's gap): never more
		// optimistic than the random-fold error.
		if u.MAELog10 < rep.Model.MAELog10 {
			t.Errorf("%s: calibrated log10 MAE %.4f below the random-fold %.4f", c.property, u.MAELog10, rep.Model.MAELog10)
		}

		// The saved model reloads and predicts what the trained one does.
		var buf bytes.Buffer
		if err := m.Save(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Load(&buf)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := LoadDataset(c.property, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ds.Samples[:20] {
			in := Input{Structure: s.Structure, Composition: s.Composition, Properties: s.Properties}
			v1, u1, err1 := m.Predict(in)
			v2, u2, err2 := back.Predict(in)
			if err1 != nil || err2 != nil || v1 != v2 || u1 != u2 || !(v1 > 0) {
				t.Fatalf("%s %s: %v ± %v (%v), reloaded %v ± %v (%v)", c.property, s.ID, v1, u1, err1, v2, u2, err2)
			}
		}
	}
}

// TestTrainReproducible: two trainings with one seed write the same bytes.
func TestTrainReproducible(t *testing.T) {
	dir := testbed.DataDir(t)
	var files [2]bytes.Buffer
	for i := range files {
		m, _, err := Train("piezo_max_eij", dir, Options{Seed: 5, MaxSamples: 150, Params: quick})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Save(&files[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(files[0].Bytes(), files[1].Bytes()) {
		t.Error("two trainings with one seed differ")
	}
}

// TestPiezoCentrosymmetricIsZero: the piezoelectric model gives exactly
// zero for a structure with an inversion centre and a positive value for
// its acentric relative.
func TestPiezoCentrosymmetricIsZero(t *testing.T) {
	dir := testbed.DataDir(t)
	m, _, err := Train("piezo_max_eij", dir, Options{Seed: 1, MaxSamples: 200, Params: quick})
	if err != nil {
		t.Fatal(err)
	}
	if v, u, err := m.Predict(Input{Structure: rocksalt(t)}); err != nil || v != 0 || u != 0 {
		t.Errorf("NaCl: %v ± %v (%v), want 0 ± 0", v, u, err)
	}
	if v, u, err := m.Predict(Input{Structure: zincblende(t, identity)}); err != nil || !(v > 0) || !(u > 0) || math.IsInf(v, 0) {
		t.Errorf("ZnS: %v ± %v (%v), want a positive value", v, u, err)
	}
}
