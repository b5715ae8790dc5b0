package cli

import (
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/hull"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func init() { registerBench(newBenchHullCmd) }

func newBenchHullCmd() *cobra.Command {
	var o hull.Options
	cmd := &cobra.Command{
		Use:   "hull [--golden PATH] [--pymatgen [--python PYTHON]]",
		Short: "Time phase diagrams on the golden systems against pymatgen",
		Long:  hull.Description,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Golden == "" {
				dir, err := datadir.Dir()
				if err != nil {
					return err
				}
				o.Golden = filepath.Join(dir, "golden", "hull", "phase_diagrams.json")
			}
			res, err := hull.Run(o)
			if err != nil {
				return err
			}
			return res.Write(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Golden, "golden", "", "golden phase diagrams (default $CRUCIBLE_DATA/golden/hull/phase_diagrams.json)")
	f.BoolVar(&o.Pymatgen, "pymatgen", false, "also run pymatgen now, in the same run")
	f.StringVar(&o.Python, "python", "python3", "Python interpreter with pymatgen installed, for --pymatgen")
	f.DurationVar(&o.MinTime, "min-time", 200*time.Millisecond, "time spent repeating each system")
	f.IntVar(&o.Repeats, "repeats", 3, "pymatgen runs per system, for --pymatgen")
	f.BoolVar(&o.Wall, "wall", false, "measure wall-clock time instead of process CPU time")
	return cmd
}
