package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/surrogate"
)

func init() { register(newTrainCmd) }

func newTrainCmd() *cobra.Command {
	var (
		dir, out string
		seed     uint64
		quick    bool
	)
	var names []string
	for _, p := range surrogate.Properties() {
		names = append(names, p.Name)
	}
	cmd := &cobra.Command{
		Use:   "train PROPERTY... [--data DIR] [--out FILE] [--quick] [--seed N]",
		Short: "Train Crucible's own surrogates on the shipped data and write their model files",
		Long: `Train the gradient-boosted-tree surrogate of each PROPERTY (` + strings.Join(names, ", ") + `,
or "all") on its data set in the data directory, cross-validate it against
a mean predictor and a composition-only baseline, print the table, and write
the model file, versioned and with the training set's SHA-256, to
<data>/models/surrogate/PROPERTY.json (--out FILE for one property elsewhere).
The procedure is in docs/surrogates.md; the same seed writes the same bytes.

The oracle loads these files; when one is missing, or was trained on other
data than the directory holds now, the evaluator trains it on first use with
--quick's procedure into the model cache ($` + surrogate.CacheEnv + `, else
~/.cache/crucible), never into the data directory, which may be read-only.

--quick skips what only the table needs (random folds, the baselines): the
model and its calibrated uncertainty are the same, in a fraction of the time.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataDir(dir)
			if err != nil {
				return err
			}
			if len(args) == 1 && args[0] == "all" {
				args = names
			}
			if out != "" && len(args) > 1 {
				return fmt.Errorf("--out names one file: train one property with it")
			}
			return surrogate.TrainFiles(cmd.OutOrStdout(), args, d, out, surrogate.Options{Seed: seed, Quick: quick})
		},
	}
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	cmd.Flags().StringVar(&out, "out", "", "model file to write (one property; default <data>/models/surrogate/PROPERTY.json)")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the folds, subsamples and trees")
	cmd.Flags().BoolVar(&quick, "quick", false, "only the cross-validation that calibrates the uncertainty")
	return cmd
}
