package cli

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/client"
)

func init() { register(newCampaignCmd) }

// newCampaignCmd is `crucible campaign`: the lifecycle verbs over the
// client's API (client.List, Show, Pause, Resume, Cancel, Extend, Delete).
func newCampaignCmd() *cobra.Command {
	var (
		conn   connection
		asJSON bool
		states []string
		yes    bool
		ext    client.Extension
	)
	cmd := &cobra.Command{
		Use:   "campaign list|show|pause|resume|cancel|extend|delete [CAMPAIGN]",
		Short: "List, inspect and control campaigns: pause, resume, cancel, extend, delete",
		Long: `campaign controls the campaigns of a running installation:

  list [--state S]...         campaigns with their state and counters
  show CAMPAIGN               its summary as it stands (--json: with the discovery curve)
  pause | resume CAMPAIGN     stop new generations (those in flight finish) | continue
  cancel CAMPAIGN             stop for good; in-flight work is evaluated, then it
                              finishes as cancelled with its summary
  extend CAMPAIGN --budget N  raise the budget to N (extra evaluations in the last
                              episode); a completed or exhausted campaign runs again;
                              its LLM limits rise in proportion unless given
  delete CAMPAIGN [--yes]     remove a finished campaign's state and messages

A reflector applies pause, resume, cancel and extend, each once.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			verb, id := args[0], ""
			if verb == "list" && len(args) != 1 || verb != "list" && len(args) != 2 {
				return &exitError{code: 2, err: fmt.Errorf("usage: crucible %s", cmd.Use)}
			}
			if len(args) == 2 {
				id = args[1]
			}
			if !slices.Contains([]string{"list", "show", "pause", "resume", "cancel", "extend", "delete"}, verb) {
				return &exitError{code: 2, err: fmt.Errorf("unknown verb %q (want list, show, pause, resume, cancel, extend or delete)", verb)}
			}
			if verb == "extend" && ext.Budget < 1 {
				return &exitError{code: 2, err: fmt.Errorf("extend needs --budget N (the new total budget)")}
			}
			if verb != "extend" && (ext.Budget != 0 || ext.MaxLLMCalls != 0 || ext.MaxLLMTokens != 0) {
				return &exitError{code: 2, err: fmt.Errorf("--budget, --max-llm-calls and --max-llm-tokens go with extend, not %s", verb)}
			}
			ctx := cmd.Context()
			cl, closeFn, err := conn.open(ctx)
			if err != nil {
				return err
			}
			defer closeFn()
			w := cmd.OutOrStdout()
			tctx, cancel := context.WithTimeout(ctx, conn.timeout)
			defer cancel()
			switch verb {
			case "list":
				return cl.WriteCampaigns(ctx, w, asJSON, states...)
			case "show":
				return cl.WriteSummary(ctx, w, id, asJSON)
			case "delete":
				if !yes && !confirm(cmd, fmt.Sprintf("Delete campaign %s, its state and its messages? [y/N] ", id)) {
					return &exitError{code: 1, err: fmt.Errorf("not deleted")}
				}
				if err := cl.Delete(tctx, id); err != nil {
					return err
				}
				fmt.Fprintf(w, "%s deleted\n", id)
				return nil
			}
			r, err := cl.Control(tctx, verb, id, &ext)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s %s%s\n", id, r.Status, client.ControlNote(verb, r, &ext))
			return nil
		},
	}
	conn.bind(cmd)
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "list, show: JSON output")
	f.StringSliceVar(&states, "state", nil, "list: only campaigns in these states (running, paused, completed, exhausted, cancelled)")
	f.BoolVar(&yes, "yes", false, "delete: do not ask for confirmation")
	f.IntVar(&ext.Budget, "budget", 0, "extend: the new budget of evaluations (more than the current one)")
	f.IntVar(&ext.MaxLLMCalls, "max-llm-calls", 0, "extend: the new max_llm_calls (default: raised in proportion to the budget)")
	f.IntVar(&ext.MaxLLMTokens, "max-llm-tokens", 0, "extend: the new max_llm_tokens (default: raised in proportion, if bounded)")
	return cmd
}

// confirm asks a yes/no question on the command's input.
func confirm(cmd *cobra.Command, question string) bool {
	fmt.Fprint(cmd.ErrOrStderr(), question)
	line, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
