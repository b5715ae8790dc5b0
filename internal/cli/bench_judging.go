package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/judging"
	"github.com/crucible-sci/crucible/internal/service/judge"
)

func init() { registerBench(newBenchJudgingCmd) }

func newBenchJudgingCmd() *cobra.Command {
	var (
		o   judging.Options
		ids string
	)
	cmd := &cobra.Command{
		Use:   "judging DIR... [--per-run N] [--fake-llm] [--workers N] [--ids FILE]",
		Short: "Compare the rules judge, the offline debate and the LLM debate on stable hits",
		Long:  judging.Description,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dirs = args
			if ids != "" {
				f, err := os.Create(ids)
				if err != nil {
					return err
				}
				defer f.Close()
				o.IDs = f
			}
			hits, rs, err := judging.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			return judging.Write(cmd.OutOrStdout(), hits, rs)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.PerRun, "per-run", 20, "stable hits taken from each result")
	f.IntVar(&o.Workers, "workers", judge.DefaultDebateWorkers, "judgements at once for the second rate (a judge replica's debate pool)")
	f.BoolVar(&o.FakeLLM, "fake-llm", false, "also run the LLM debate against the in-process fake endpoint")
	f.StringVar(&ids, "ids", "", "write the set's candidate ids to FILE")
	return cmd
}
