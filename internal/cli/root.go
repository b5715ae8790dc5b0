// Package cli implements the crucible command-line interface. Each command
// lives in its own file and registers itself with register.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// commands are the constructors of the top-level subcommands, added by each
// command's file in its init function.
var commands []func() *cobra.Command

func register(newCmd func() *cobra.Command) { commands = append(commands, newCmd) }

// NewRoot builds the root command with every registered subcommand.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "crucible",
		Short: "Crucible: distributed LLM-guided discovery of inorganic crystalline materials",
		Long: `Crucible proposes crystal structures (with an LLM or chemistry-rule evolution),
evaluates them with CGCNN surrogates and exact convex hulls, learns across
generations and campaigns, and publishes discoveries as events.

Data (CGCNN checkpoints, Materials Project reference tables) is read from the
directory given by --data, CRUCIBLE_DATA, a shared folder beside the
repository, or ~/.cache/crucible; fetch it with
"crucible data pull".`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, newCmd := range commands {
		root.AddCommand(newCmd())
	}
	return root
}

// exitError carries a process exit status through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// Execute runs the CLI and returns the process exit status.
func Execute() int {
	root := NewRoot()
	if err := root.Execute(); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.err != nil {
				fmt.Fprintln(os.Stderr, "crucible:", ee.err)
			}
			return ee.code
		}
		fmt.Fprintln(os.Stderr, "crucible:", err)
		return 1
	}
	return 0
}
