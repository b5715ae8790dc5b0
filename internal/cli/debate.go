package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() { register(newDebateCmd) }

func newDebateCmd() *cobra.Command {
	var (
		conn   connection
		from   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "debate CAMPAIGN CANDIDATE | --from DIR [CANDIDATE]",
		Short: "Show the judge's debate over a stable hit",
		Long: `debate prints the debate the judge held over a stable hit: the verdict
(discovery, reject, needs-relaxation, needs-calculation) and its
confidence, the judge's rationale, each role's final position, the key
numbers, the suggested synthesis route, the next calculation, and every
round with each role's position, confidence, evidence and tool calls
(docs/debate.md).

It reads the transcript stored by the installation, or with --from DIR the
debate carried by the verdicts of a "crucible local" result (without
CANDIDATE: one line per debated hit). --json prints the transcript (the
debate and, in llm mode, its exchanges with the models) as JSON.`,
		Args: cobra.RangeArgs(0, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			tr := &debate.Transcript{}
			switch {
			case from != "":
				if len(args) > 1 {
					return &exitError{code: 2, err: errors.New("with --from DIR give at most a candidate")}
				}
				t, lines, err := results.LocalDebate(from, strings.Join(args, ""))
				if err != nil {
					return err
				}
				if t == nil {
					_, err := fmt.Fprintln(w, strings.Join(lines, "\n"))
					return err
				}
				tr = t
			case len(args) == 2:
				if err := messages.ValidateCampaignID(args[0]); err != nil {
					return &exitError{code: 2, err: err}
				}
				err := conn.do(cmd.Context(), func(cl *client.Client) (err error) {
					tr, err = cl.Transcript(cmd.Context(), args[0], args[1])
					return err
				})
				if err != nil {
					return err
				}
			default:
				return &exitError{code: 2, err: errors.New("give CAMPAIGN CANDIDATE, or --from DIR with a crucible local result")}
			}
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(tr)
			}
			_, err := fmt.Fprint(w, debate.Text(&tr.Debate, tr.Formula, tr.Candidate))
			return err
		},
	}
	conn.bind(cmd)
	cmd.Flags().StringVar(&from, "from", "", "read the verdicts of a crucible local result in DIR instead of the installation")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the transcript as JSON")
	return cmd
}
