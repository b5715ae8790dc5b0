package surrogate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testenv"
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
	dir := testenv.DataDir(t)
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
		out = append(out, row("model, oracle gap", "random", *r.OracleGap))
	}
	return out
}
