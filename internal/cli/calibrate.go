package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/calibrate"
)

func init() { register(newCalibrateCmd) }

func newCalibrateCmd() *cobra.Command {
	var (
		dir, out    string
		per, relaxN int
		seed        uint64
	)
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--per-property N] [--seed S]",
		Short: "Measure the oracle's error per property on known compounds built as candidates are",
		Long: `Build known compounds of the reference tables exactly as seeds and
candidates are built (the prototype library, best site fit, valid), predict
them with the surrogates alone, and compare with the reference values:
per property the mean absolute error, the bias (mean of prediction −
reference), and the 68 % and 95 % quantiles of the absolute error. The 68 %
quantile is the calibrated standard error σ that evaluations carry and that
the screen and the judge require constraints and the stability threshold to
be met by (k σ, the campaign's confidence_k). The energy above hull takes
the formation energy's errors, and its 95 % quantile bounds how far below
the hull a candidate may lie before it is a likely surrogate error.

Crucible's own surrogates (static dielectric constant, piezoelectric
coefficient, conductivity; trained first when missing) are measured on the
known compounds of their data sets, each predicted by a model refitted
without it (5 grouped folds), their errors in log10 of the property;
compounds whose built structure is outside a model's domain or
centrosymmetric (a piezoelectric coefficient of 0 by symmetry) are counted
apart.

With --relax N the relax tier is measured too, on the first N known
compounds with a formation energy: each built, relaxed with M3GNet and
evaluated as the relax tier evaluates a candidate (seconds of CPU each).

The calibration (with the formulas it was measured on and the SHA-256 of
each model) is written to --out, else to the data directory when writable,
else to the user cache (~/.cache/crucible). It is looked for in
$CRUCIBLE_CALIBRATION, then the data directory, then the user cache. Run it
again whenever a model changes: a calibration whose models differ is
refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, err := dataDir(dir)
			if err != nil {
				return err
			}
			logf := func(f string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), f+"\n", a...) }
			o := calibrate.RunOptions{Options: calibrate.Options{PerProperty: per, Seed: seed}, Relax: relaxN, Out: out, Log: logf}
			c, written, err := calibrate.Run(cmd.Context(), d, o)
			if err != nil {
				return err
			}
			c.WriteReport(cmd.OutOrStdout())
			fmt.Fprintln(cmd.OutOrStdout(), "written to", written)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	cmd.Flags().StringVar(&out, "out", "", "calibration file to write")
	cmd.Flags().IntVar(&per, "per-property", calibrate.DefaultPerProperty, "known compounds measured per property")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the sample's order")
	cmd.Flags().IntVar(&relaxN, "relax", 0, "also measure the relax tier on this many known compounds (seconds of CPU each)")
	return cmd
}
