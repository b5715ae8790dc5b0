package cli

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/calibrate"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

func init() { register(newCalibrateCmd) }

func newCalibrateCmd() *cobra.Command {
	var (
		dir, out string
		per      int
		seed     uint64
	)
	cmd := &cobra.Command{
		Use:   "calibrate [--out FILE] [--per-property N] [--seed S]",
		Short: "Measure the oracle's error per property on known compounds built as candidates are",
		Long: `Build known compounds of the reference tables exactly as seeds and
candidates are built (the prototype library, best site fit, valid), predict
them with the CGCNN surrogates alone, and compare with the reference values:
per property the mean absolute error, the bias (mean of prediction −
reference), and the 68 % and 95 % quantiles of the absolute error. The 68 %
quantile is the calibrated standard error σ that evaluations carry and that
the screen and the judge require constraints and the stability threshold to
be met by (k σ, the campaign's confidence_k). The energy above hull takes
the formation energy's errors.

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
			o, err := oracle.Open(d, oracle.Options{SurrogateOnly: true})
			if err != nil {
				return err
			}
			c, err := calibrate.Measure(cmd.Context(), o, o.Reference(), datadir.Models(d), calibrate.Options{PerProperty: per, Seed: seed})
			if err != nil {
				return err
			}
			if out == "" {
				if out, err = calibrate.DefaultOutput(d); err != nil {
					return err
				}
			}
			if err := c.Save(out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "tier %s, %d compounds (set %s…)\n", calibrate.TierScreen, len(c.Set.Formulas), c.Set.Checksum[:12])
			tier := c.Tiers[calibrate.TierScreen]
			names := make([]string, 0, len(tier.Properties))
			for p := range tier.Properties {
				names = append(names, p)
			}
			sort.Strings(names)
			fmt.Fprintf(w, "%-26s %5s %9s %9s %9s %9s  %s\n", "property", "n", "MAE", "bias", "q68", "q95", "unit")
			for _, p := range names {
				s := tier.Properties[p]
				fmt.Fprintf(w, "%-26s %5d %9.4g %+9.3g %9.4g %9.4g  %s\n", p, s.N, s.MAE, s.Bias, s.Q68, s.Q95, s.Unit)
			}
			fmt.Fprintln(w, "written to", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	cmd.Flags().StringVar(&out, "out", "", "calibration file to write")
	cmd.Flags().IntVar(&per, "per-property", calibrate.DefaultPerProperty, "known compounds measured per property")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the sample's order")
	return cmd
}
