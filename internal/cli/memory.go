package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
)

func init() { register(newMemoryCmd) }

// newMemoryCmd lists, shows, exports and imports memory banks, of a
// running installation or of a crucible local state directory (--state).
func newMemoryCmd() *cobra.Command {
	var (
		conn  connection
		state string
	)
	cmd := &cobra.Command{
		Use:   "memory list|show CONTEXT|export [CONTEXT…]|import FILE",
		Short: "Memory banks: list, show, export and import (JSON)",
		Long: `memory reads and writes the memory banks campaigns learn into — the
reflections, directives and lessons of each context (memory_context) — on a
running installation, or with --state DIR in the state directory of
"crucible local --state DIR".

  list               one line per bank: lessons, directives, reflections
  show CONTEXT       a bank's lessons and directives
  export [CONTEXT…]  the banks (all by default) as JSON, to stdout
  import FILE        banks from such a JSON file, each replacing its context`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch verb := args[0]; {
			case verb != "list" && verb != "show" && verb != "export" && verb != "import":
				return &exitError{code: 2, err: fmt.Errorf("memory %s: want list, show, export or import", verb)}
			case verb == "show" && len(args) != 2:
				return &exitError{code: 2, err: fmt.Errorf("memory show: give one context")}
			case verb == "import" && len(args) != 2:
				return &exitError{code: 2, err: fmt.Errorf("memory import: give one file")}
			}
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			if state != "" {
				return local.Memory(ctx, w, nil, state, args)
			}
			return conn.do(ctx, func(c *client.Client) error { return local.Memory(ctx, w, c.Store, "", args) })
		},
	}
	conn.bind(cmd)
	cmd.Flags().StringVar(&state, "state", "", "a crucible local state directory instead of a running installation")
	return cmd
}
