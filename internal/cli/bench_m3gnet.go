package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/m3gnet"
)

func init() { registerBench(newBenchM3GNetCmd) }

func newBenchM3GNetCmd() *cobra.Command {
	var o m3gnet.Options
	cmd := &cobra.Command{
		Use:   "m3gnet [--python PYTHON | --no-torch]",
		Short: "Time the M3GNet potential (energy, forces, stress; relaxations) against a plain PyTorch implementation",
		Long:  m3gnet.Description,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.DataDir, err = dataDir(o.DataDir); err != nil {
				return err
			}
			res, err := m3gnet.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			return res.Write(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data", "", "data directory with models/m3gnet and golden/ (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	f.StringVar(&o.Python, "python", "python3", "Python interpreter with numpy and torch")
	f.BoolVar(&o.NoTorch, "no-torch", false, "skip the PyTorch runs")
	f.DurationVar(&o.MinTime, "min-time", 3*time.Second, "time spent on each implementation")
	return cmd
}
