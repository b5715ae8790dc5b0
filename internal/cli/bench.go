package cli

import "github.com/spf13/cobra"

// benchCommands are the constructors of the "crucible bench" subcommands,
// added by each benchmark's file in its init function.
var benchCommands []func() *cobra.Command

func registerBench(newCmd func() *cobra.Command) { benchCommands = append(benchCommands, newCmd) }

func init() { register(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Crucible's speed, side by side with the reference implementations where they are installed",
	}
	for _, newCmd := range benchCommands {
		cmd.AddCommand(newCmd())
	}
	return cmd
}
