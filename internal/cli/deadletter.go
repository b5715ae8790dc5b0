package cli

import (
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
)

func init() { register(newDeadLetterCmd) }

// newDeadLetterCmd is `crucible deadletter list|retry`
// (client.RunDeadLetters).
func newDeadLetterCmd() *cobra.Command {
	var (
		conn connection
		o    client.DeadLetterOptions
	)
	cmd := &cobra.Command{
		Use:   "deadletter list|retry [CAMPAIGN]",
		Short: "List the messages no service could process, with the reason, and re-run them",
		Long: `deadletter reads the DEADLETTER stream, the messages services gave up on,
each with the reason. list shows them (--json: one object per line, with
the body) and counts them by reason; retry re-publishes each selected
message, its body and headers, to its original subject (marked
Crucible-Retry-Of) and removes its dead letter; retrying twice publishes
once, a truncated body is refused, and a message whose cause is permanent
(forged work, a closed or unknown campaign) is dead-lettered again. Select
with CAMPAIGN, --stream, --reason, --since or --seq (the SEQ column), or
retry every one with --all. retry needs the admin credentials (docs/deploy.md).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 2 {
				o.Campaign = args[1]
			}
			if err := o.Check(args[0]); err != nil {
				return &exitError{code: 2, err: err}
			}
			return conn.do(cmd.Context(), func(cl *client.Client) error {
				return cl.RunDeadLetters(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], o)
			})
		},
	}
	conn.bind(cmd)
	o.Bind(cmd.Flags())
	return cmd
}
