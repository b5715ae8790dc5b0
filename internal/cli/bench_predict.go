package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/predict"
)

func init() { registerBench(newBenchPredictCmd) }

func newBenchPredictCmd() *cobra.Command {
	var o predict.Options
	cmd := &cobra.Command{
		Use:   "predict [--reference [--python PYTHON]]",
		Short: "Time CGCNN inference (CIF → four properties) against the reference implementation",
		Long:  predict.Description,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Workers < 1 {
				return &exitError{code: 2, err: fmt.Errorf("--workers %d: must be at least 1", o.Workers)}
			}
			var err error
			if o.DataDir, err = dataDir(o.DataDir); err != nil {
				return err
			}
			res, err := predict.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			return res.Write(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data", "", "data directory with models/cgcnn and golden/cgcnn (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	f.BoolVar(&o.Reference, "reference", false, "also time the reference implementation, in the same run")
	f.StringVar(&o.Python, "python", "python3", "Python interpreter with torch and pymatgen, for --reference")
	f.DurationVar(&o.MinTime, "min-time", 2*time.Second, "time spent on each configuration")
	f.IntVar(&o.Workers, "workers", 2, "largest number of goroutines to time")
	return cmd
}
