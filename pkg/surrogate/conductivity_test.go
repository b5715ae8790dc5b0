package surrogate

import (
	"math"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// tcoLike reports whether a composition is an oxide of a transparent
// conducting oxide's cation: In, Sn, Zn, Ga or Cd.
func tcoLike(c crystal.Composition) bool {
	if !c.Contains(crystal.MustElement("O")) {
		return false
	}
	for _, s := range []string{"In", "Sn", "Zn", "Ga", "Cd"} {
		if c.Contains(crystal.MustElement(s)) {
			return true
		}
	}
	return false
}

// TestConductivityTCO measures how little the conductivity data say about
// transparent conducting oxides: how many samples are TCO-like, from how
// many studies, how well the model predicts them with their study held
// out, and what it predicts for ITO-, AZO- and SnO2-like compositions.
func TestConductivityTCO(t *testing.T) {
	dir := testbed.DataDir(t)
	ds, err := LoadDataset("conductivity", dir)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := PropertyByName("conductivity")
	X, err := featurizeAll(ds.Samples, p.Groups)
	if err != nil {
		t.Fatal(err)
	}
	var tco []int
	studies := map[string]bool{}
	for i, s := range ds.Samples {
		if tcoLike(s.Composition) {
			tco = append(tco, i)
			studies[s.Group] = true
		}
	}
	t.Logf("TCO-like samples (oxides of In, Sn, Zn, Ga, Cd at 280–320 K): %d of %d, from %d source group(s)", len(tco), len(ds.Samples), len(studies))
	if len(tco) > 20 {
		t.Errorf("%d TCO-like samples: the documented statement that the data hold almost none is out of date", len(tco))
	}

	// Fitted without the TCO studies, predicting them.
	var tx [][]float64
	var ty []float64
	for i, s := range ds.Samples {
		if !studies[s.Group] {
			tx = append(tx, X[i])
			ty = append(ty, math.Log10(s.Target))
		}
	}
	held, _, err := Fit(tx, ty, TreeParams{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var abs []float64
	for _, i := range tco {
		s := ds.Samples[i]
		pred := held.Predict(X[i])
		abs = append(abs, math.Abs(pred-math.Log10(s.Target)))
		t.Logf("  %-26s measured %8.3g S/cm, predicted with its study held out %8.3g", s.Formula, s.Target, math.Pow(10, pred))
	}
	if len(abs) > 0 {
		t.Logf("  held-out log10 MAE on the TCO-like samples: %.2f", mean(abs))
	}

	// The full model on compositions of well-known transparent conductors.
	all := make([]float64, len(ds.Samples))
	for i, s := range ds.Samples {
		all[i] = math.Log10(s.Target)
	}
	full, _, err := Fit(X, all, TreeParams{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"In1.8Sn0.2O3", "In2O3", "Zn0.98Al0.02O", "ZnO", "SnO2", "Sn0.95Sb0.05O2", "Ga2O3", "CdO"} {
		x, err := Featurize(p.Groups, Input{Composition: crystal.MustParseFormula(f)})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("  %-15s predicted %8.3g S/cm", f, math.Pow(10, full.Predict(x)))
	}
}
