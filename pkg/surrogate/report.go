package surrogate

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the report's cross-validation table (predictor,
// folds, n, MAE, MAE in log10, ρ), the rows docs/surrogates.md shows, and
// the calibrated uncertainty of the model m when given.
func (r *Report) WriteTable(w io.Writer, m *Model) error {
	unit := r.Unit
	if unit == "" {
		unit = "dimensionless"
	}
	fmt.Fprintf(w, "%s (%s): %d samples from %d rows of %s (sha256 %s), %d-fold cross-validation, seed %d\n",
		r.Property, unit, r.Samples, r.Rows, r.File, short(r.SHA256), r.Folds, r.Seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PREDICTOR\tFOLDS\tN\tMAE\tMAE LOG10\tSPEARMAN")
	row := func(name, folds string, x Metrics) {
		rho := "—"
		if x.Spearman != nil {
			rho = fmt.Sprintf("%.3f", *x.Spearman)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.4g\t%.4f\t%s\n", name, folds, x.N, x.MAE, x.MAELog10, rho)
	}
	if !r.Quick {
		row("model", "random", r.Model)
		row("composition-only", "random", r.Baseline)
		row("mean", "random", r.Mean)
		row("model", "grouped", r.ModelGrouped)
		row("composition-only", "grouped", r.BaselineGrouped)
		row("mean", "grouped", r.MeanGrouped)
		if r.OracleGap != nil {
			row("model, oracle gap in test folds", "random", *r.OracleGap)
		}
	} else if r.OracleGapGrouped == nil {
		row("model", "grouped", r.ModelGrouped)
	}
	if r.OracleGapGrouped != nil {
		row("model, oracle gap in test folds", "grouped", *r.OracleGapGrouped)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !r.Quick {
		fmt.Fprintf(w, "gain over composition-only in log10 MAE: %.4f [%.4f, %.4f] (95 %% paired bootstrap)\n",
			r.GainLog10.Value, r.GainLog10.Lo, r.GainLog10.Hi)
	} else {
		fmt.Fprintln(w, "quick training: only the grouped folds that calibrate the uncertainty (the model is the same; omit --quick for the baselines)")
	}
	if len(r.Rejected) > 0 {
		var parts []string
		for code, n := range r.Rejected {
			parts = append(parts, fmt.Sprintf("%s %d", code, n))
		}
		fmt.Fprintf(w, "rows left out: %s\n", strings.Join(parts, ", "))
	}
	if m != nil {
		u := m.Uncertainty
		fmt.Fprintf(w, "uncertainty (%s): 68 %% of |log10 error| ≤ %.3f (×%.2f), 95 %% ≤ %.3f (×%.2f); %d trees\n",
			u.Basis, u.Log10Q68, pow10(u.Log10Q68), u.Log10Q95, pow10(u.Log10Q95), m.Training.Trees)
	}
	return nil
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

func pow10(x float64) float64 { return math.Pow(10, x) }

// TrainFiles trains the surrogate of each property on the data directory
// dir, writes its model file (out, else Path) and its table to w.
func TrainFiles(w io.Writer, properties []string, dir, out string, opt Options) error {
	for _, prop := range properties {
		m, rep, err := Train(prop, dir, opt)
		if err != nil {
			return err
		}
		path := out
		if path == "" {
			path = Path(dir, prop)
		}
		if err := m.SaveFile(path); err != nil {
			return err
		}
		if err := rep.WriteTable(w, m); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%.0f s)\n\n", path, rep.Duration.Seconds())
	}
	return nil
}
