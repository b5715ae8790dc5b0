package surrogate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/cgcnn"
)

// TestFullCrossValidation trains every property's model on its whole data
// set with the default options and ablations, logs the cross-validation
// table and, with CRUCIBLE_SURROGATE_OUT set, writes the model files
// there. It takes minutes; it runs only with CRUCIBLE_SURROGATE_FULL=1
// (run it with nice).
func TestFullCrossValidation(t *testing.T) {
	if os.Getenv("CRUCIBLE_SURROGATE_FULL") == "" {
		t.Skip("set CRUCIBLE_SURROGATE_FULL=1 for the full cross-validation (minutes)")
	}
	dir := testbed.DataDir(t)
	var rows []string
	for _, p := range Properties() {
		if only := os.Getenv("CRUCIBLE_SURROGATE_PROPERTY"); only != "" && only != p.Name {
			continue
		}
		m, rep, err := Train(p.Name, dir, Options{Seed: 1, Ablation: true})
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, tableRows(rep)...)
		t.Logf("%s: %d samples, %d trees, %v", p.Name, rep.Samples, m.Training.Trees, rep.Duration)
		for _, a := range rep.Ablations {
			t.Logf("  without %-10s MAE %.4g  log10 %.4f  ρ %s", a.Without, a.Metrics.MAE, a.Metrics.MAELog10, rho(a.Metrics))
		}
		t.Logf("  gain over baseline (log10 MAE): %.4f [%.4f, %.4f]", rep.GainLog10.Value, rep.GainLog10.Lo, rep.GainLog10.Hi)
		if rep.OracleGap != nil {
			t.Logf("  oracle gap (%s): gap MAE %.3f eV, %d below min; model MAE %.4g log10 %.4f ρ %s",
				rep.OracleGapName, rep.OracleGapMAE, rep.OracleGapBelow, rep.OracleGap.MAE, rep.OracleGap.MAELog10, rho(*rep.OracleGap))
		}
		t.Logf("  uncertainty: %+v", m.Uncertainty)
		if out := os.Getenv("CRUCIBLE_SURROGATE_OUT"); out != "" {
			if err := m.SaveFile(filepath.Join(out, p.Name+".json")); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}

func rho(m Metrics) string {
	if m.Spearman == nil {
		return "—"
	}
	return fmt.Sprintf("%.3f", *m.Spearman)
}

// tableRows formats a report as rows of the cross-validation table.
func tableRows(r *Report) []string {
	row := func(name, folds string, m Metrics) string {
		return fmt.Sprintf("| %s | %s | %s | %d | %.4g | %.4f | %s |", r.Property, name, folds, m.N, m.MAE, m.MAELog10, rho(m))
	}
	out := []string{
		row("model", "random", r.Model), row("mean", "random", r.Mean), row("composition", "random", r.Baseline),
		row("model", "grouped", r.ModelGrouped), row("mean", "grouped", r.MeanGrouped), row("composition", "grouped", r.BaselineGrouped),
	}
	if r.OracleGap != nil {
		out = append(out, row("model, oracle gap", "random", *r.OracleGap), row("model, oracle gap", "grouped", *r.OracleGapGrouped))
	}
	return out
}

// TestGapSourceExperiment trains the dielectric model on the oracle's
// (CGCNN's) band gap instead of the DFT gap, for comparison with the
// default (TestFullCrossValidation's "model" and "model, oracle gap"
// rows). Runs with CRUCIBLE_SURROGATE_FULL=1.
func TestGapSourceExperiment(t *testing.T) {
	if os.Getenv("CRUCIBLE_SURROGATE_FULL") == "" {
		t.Skip("set CRUCIBLE_SURROGATE_FULL=1 (minutes)")
	}
	dir := testbed.DataDir(t)
	_, rep, err := Train("dielectric_constant", dir, Options{Seed: 1, TrainOnOracleGap: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained and tested on %s: random folds log10 MAE %.4f MAE %.4g ρ %s; grouped %.4f MAE %.4g ρ %s",
		rep.OracleGapName, rep.Model.MAELog10, rep.Model.MAE, rho(rep.Model), rep.ModelGrouped.MAELog10, rep.ModelGrouped.MAE, rho(rep.ModelGrouped))
}

// TestCGCNNFeaturesExperiment adds CGCNN's learned crystal features (the
// pooled atom features of a published checkpoint, cgcnn.CrystalFeatures)
// to the dielectric and piezoelectric models' features and
// cross-validates. Runs with CRUCIBLE_SURROGATE_FULL=1.
func TestCGCNNFeaturesExperiment(t *testing.T) {
	if os.Getenv("CRUCIBLE_SURROGATE_FULL") == "" {
		t.Skip("set CRUCIBLE_SURROGATE_FULL=1 (minutes)")
	}
	dir := testbed.DataDir(t)
	cdir := filepath.Join(dir, "models", "cgcnn")
	atoms, err := cgcnn.LoadAtomFeatures(filepath.Join(cdir, cgcnn.AtomInitFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, prop := range []string{"dielectric_constant", "piezo_max_eij"} {
		p, _ := PropertyByName(prop)
		ds, err := LoadDataset(prop, dir)
		if err != nil {
			t.Fatal(err)
		}
		X, err := featurizeAll(ds.Samples, p.Groups)
		if err != nil {
			t.Fatal(err)
		}
		y := make([]float64, len(X))
		truth := make([]float64, len(X))
		for i, s := range ds.Samples {
			y[i], truth[i] = math.Log10(s.Target), s.Target
		}
		fold, _ := Folds(len(y), 5, 1, nil)
		pred, err := CrossValidate(X, y, fold, TreeLearner(TreeParams{}), 1)
		if err != nil {
			t.Fatal(err)
		}
		m := ScoreLog(pred, truth)
		t.Logf("%s, model features: log10 MAE %.4f, ρ %s", prop, m.MAELog10, rho(m))
		for _, ckpt := range []string{"formation-energy-per-atom", "band-gap"} {
			model, err := cgcnn.LoadCheckpoint(filepath.Join(cdir, ckpt+".pth.tar"))
			if err != nil {
				t.Fatal(err)
			}
			f := cgcnn.NewFeaturizer(atoms)
			f.Full = model.NeedsFullExpansion()
			var g cgcnn.Graph
			var ws cgcnn.Workspace
			Xc := make([][]float64, len(X))
			for i, s := range ds.Samples {
				if err := f.Featurize(s.Structure, &g); err != nil {
					t.Fatal(err)
				}
				emb, err := model.CrystalFeatures(&ws, &g, nil)
				if err != nil {
					t.Fatal(err)
				}
				Xc[i] = append(slices.Clone(X[i]), emb...)
			}
			pred, err := CrossValidate(Xc, y, fold, TreeLearner(TreeParams{}), 1)
			if err != nil {
				t.Fatal(err)
			}
			m := ScoreLog(pred, truth)
			t.Logf("%s, model features + CGCNN %s crystal features: log10 MAE %.4f, ρ %s", prop, ckpt, m.MAELog10, rho(m))
		}
	}
}

// TestOxidationExperiment cross-validates each model with the
// oxidation-state descriptors added (random and grouped folds). Runs with
// CRUCIBLE_SURROGATE_FULL=1.
func TestOxidationExperiment(t *testing.T) {
	if os.Getenv("CRUCIBLE_SURROGATE_FULL") == "" {
		t.Skip("set CRUCIBLE_SURROGATE_FULL=1 (minutes)")
	}
	dir := testbed.DataDir(t)
	for _, p := range Properties() {
		groups := append(slices.Clone(p.Groups[:1]), GroupOxidation)
		groups = append(groups, p.Groups[1:]...)
		_, rep, err := Train(p.Name, dir, Options{Seed: 1, Groups: groups})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s with %v: random log10 MAE %.4f ρ %s; grouped %.4f ρ %s",
			p.Name, groups, rep.Model.MAELog10, rho(rep.Model), rep.ModelGrouped.MAELog10, rho(rep.ModelGrouped))
	}
}

// TestHighKOutOfFold logs the out-of-fold κ predictions (random folds,
// seed 1, as in TestFullCrossValidation) of some familiar dielectrics,
// with the DFT and with CGCNN's band gap. Runs with
// CRUCIBLE_SURROGATE_FULL=1.
func TestHighKOutOfFold(t *testing.T) {
	if os.Getenv("CRUCIBLE_SURROGATE_FULL") == "" {
		t.Skip("set CRUCIBLE_SURROGATE_FULL=1 (minutes)")
	}
	dir := testbed.DataDir(t)
	p, _ := PropertyByName("dielectric_constant")
	ds, err := LoadDataset(p.Name, dir)
	if err != nil {
		t.Fatal(err)
	}
	X, err := featurizeAll(ds.Samples, p.Groups)
	if err != nil {
		t.Fatal(err)
	}
	gap, _, err := CGCNNBandGap(dir)
	if err != nil {
		t.Fatal(err)
	}
	Xo, _, _, err := withOracleGap(ds.Samples, p.Groups, gap, p.MinBandGap)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, len(X))
	for i, s := range ds.Samples {
		y[i] = math.Log10(s.Target)
	}
	fold, _ := Folds(len(y), 5, 1, nil)
	pd, err := crossValidateOn(X, X, y, fold, TreeLearner(TreeParams{}.withDefaults()), 1)
	if err != nil {
		t.Fatal(err)
	}
	po, err := crossValidateOn(X, Xo, y, fold, TreeLearner(TreeParams{}.withDefaults()), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Bias by range of κ: regression towards the mean in log10.
	for _, r := range [][2]float64{{0, 5}, {5, 10}, {10, 20}, {20, 50}, {50, 1000}} {
		var bias []float64
		for i, s := range ds.Samples {
			if s.Target >= r[0] && s.Target < r[1] {
				bias = append(bias, po[i]-y[i])
			}
		}
		if len(bias) > 0 {
			t.Logf("κ in [%g, %g): n %d, mean log10(predicted/true) %+.3f (×%.2f), median %+.3f",
				r[0], r[1], len(bias), mean(bias), math.Pow(10, mean(bias)), Quantile(bias, 0.5))
		}
	}
	for i, s := range ds.Samples {
		switch s.ID {
		case "mp-352", "mp-2858", "mp-554278", "mp-7048", "mp-988", "mp-7029", "mp-3614", "mp-5986":
			g, _ := gap(s.Structure)
			t.Logf("%-9s %-7s gap DFT %.2f, CGCNN %.2f eV: κ %.1f, out-of-fold %.1f (DFT gap), %.1f (CGCNN gap)",
				s.ID, s.Formula, s.Properties["band_gap"], g, s.Target, math.Pow(10, pd[i]), math.Pow(10, po[i]))
		}
	}
}
