package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() { register(newPromptsCmd) }

func newPromptsCmd() *cobra.Command {
	var (
		conn       connection
		from       string
		generation int
		full       bool
		asJSON     bool
	)
	cmd := &cobra.Command{
		Use:   "prompts [CAMPAIGN | --from DIR]",
		Short: "Show the LLM prompts and answers of a campaign (generator llm)",
		Long: `prompts prints the audit trail of a campaign with generator llm: one
record per exchange with the model, as the proposer published it on
crucible.campaigns.prompts.<campaign> (or as "crucible local" wrote it to
DIR/prompts.jsonl, with --from DIR). A record holds the rendered system and
user messages exactly as sent, the raw answer, the response format, the
outcome (answered, context_length, failed, budget_spent), the HTTP requests
it took, the prompt and completion tokens (the server's usage, or
estimates marked ~), the demonstrations left out to fit the token budget,
and how many candidates the answer yielded.

By default one line per exchange and the mean tokens per answered call;
--full adds the messages and the answer; --json prints the records.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var prompts []*messages.Prompt
			switch {
			case from != "" && len(args) == 1:
				return &exitError{code: 2, err: errors.New("give a campaign or --from DIR, not both")}
			case from != "":
				var err error
				if prompts, err = results.ReadPrompts(from); err != nil {
					return err
				}
			case len(args) == 1:
				if err := messages.ValidateCampaignID(args[0]); err != nil {
					return &exitError{code: 2, err: err}
				}
				err := conn.do(cmd.Context(), func(cl *client.Client) (err error) {
					if err = cl.Known(cmd.Context(), args[0]); err == nil {
						prompts, err = cl.Prompts(cmd.Context(), args[0])
					}
					return err
				})
				if err != nil {
					return err
				}
			default:
				return &exitError{code: 2, err: errors.New("give a campaign, or --from DIR with a crucible local result")}
			}
			if cmd.Flags().Changed("generation") {
				prompts = results.PromptsOfGeneration(prompts, generation)
			}
			results.SortPrompts(prompts)
			w := cmd.OutOrStdout()
			if asJSON {
				return results.WritePromptsJSON(w, prompts)
			}
			return results.WritePrompts(w, prompts, full)
		},
	}
	conn.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "read DIR/prompts.jsonl of a crucible local result instead of the installation")
	f.IntVar(&generation, "generation", 0, "only this generation")
	f.BoolVar(&full, "full", false, "print the messages and the answer of each exchange")
	f.BoolVar(&asJSON, "json", false, "one record per line, as published")
	return cmd
}
