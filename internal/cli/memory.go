package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/store"
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
			var banks []*store.BankDump
			var s *store.Store
			if state != "" {
				var err error
				if banks, err = local.ReadState(state); err != nil {
					return err
				}
			} else {
				c, closeFn, err := conn.open(cmd.Context())
				if err != nil {
					return err
				}
				defer closeFn()
				s = c.Store
				if args[0] != "import" {
					names := args[1:]
					if args[0] == "list" {
						names = nil
					}
					if banks, err = local.ExportBanks(cmd.Context(), s, names...); err != nil {
						return err
					}
				}
			}
			w := cmd.OutOrStdout()
			switch args[0] {
			case "list":
				local.WriteBanks(w, banks)
			case "show":
				if len(args) != 2 {
					return &exitError{code: 2, err: fmt.Errorf("memory show: give one context")}
				}
				return local.WriteBank(w, banks, args[1])
			case "export":
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(local.FilterBanks(banks, args[1:]))
			case "import":
				if len(args) != 2 {
					return &exitError{code: 2, err: fmt.Errorf("memory import: give one file")}
				}
				in, err := local.ReadBanks(args[1])
				if err != nil {
					return err
				}
				if s == nil {
					return local.WriteState(state, local.MergeBanks(banks, in))
				}
				for _, b := range in {
					if err := s.ImportBank(cmd.Context(), b); err != nil {
						return err
					}
				}
				fmt.Fprintf(w, "imported %d banks\n", len(in))
			default:
				return &exitError{code: 2, err: fmt.Errorf("memory %s: want list, show, export or import", args[0])}
			}
			return nil
		},
	}
	conn.bind(cmd)
	cmd.Flags().StringVar(&state, "state", "", "a crucible local state directory instead of a running installation")
	return cmd
}
