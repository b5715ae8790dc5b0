// Command proposer starts submitted campaigns and proposes their candidates
// with the configured generators (evolve: LLEMA's chemistry rules as
// operators; llm: an OpenAI-compatible model, offered when --llm-url or
// --llm-model is set). Run any number of replicas.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func main() {
	var (
		data        string
		concurrency int
		baseline    bool
		llmCfg      llm.Config
		limits      proposer.Limits
		userLimits  string
	)
	app.Exit(app.Main("proposer", "Crucible proposer: campaigns in, candidates out",
		"The proposer consumes submissions (durable consumer \"proposer-submit\" on CAMPAIGNS) and generation requests (\"proposer\" on PROPOSE), and publishes crucible.candidates.<campaign>, and the LLM prompts of generator llm on crucible.campaigns.prompts.<campaign>. It reads the reference tables from the data directory (seed materials, known formulas). The LLM's API key comes from CRUCIBLE_LLM_API_KEY or the file named by CRUCIBLE_LLM_API_KEY_FILE.",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			def, _ := datadir.Dir()
			f.StringVar(&data, "data", def, "data directory with data/ [CRUCIBLE_DATA]")
			f.IntVar(&concurrency, "concurrency", app.EnvInt("CRUCIBLE_PROPOSER_CONCURRENCY", 4), "generation requests handled at once [CRUCIBLE_PROPOSER_CONCURRENCY]")
			f.BoolVar(&baseline, "random-baseline", false, "replace the evolve generator by the random-substitution baseline (comparisons only)")
			f.IntVar(&limits.MaxBudget, "max-budget", app.EnvInt("CRUCIBLE_MAX_BUDGET", 0), "largest budget a campaign may ask for; 0 for no limit [CRUCIBLE_MAX_BUDGET]")
			f.IntVar(&limits.MaxCampaigns, "max-campaigns", app.EnvInt("CRUCIBLE_MAX_CAMPAIGNS", 0), "most campaigns running at once; 0 for no limit [CRUCIBLE_MAX_CAMPAIGNS]")
			f.StringVar(&userLimits, "user-limits", os.Getenv("CRUCIBLE_USER_LIMITS_FILE"), `JSON file of each client user's quotas, {"alice": {"max_budget": N, "max_campaigns": M}, "*": {…}} ("*": every user not named), on top of --max-budget and --max-campaigns; a user is the NATS user a submission came from [CRUCIBLE_USER_LIMITS_FILE]`)
			llmCfg.BindFlags(f, true)
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			db, err := wire.Reference(data)
			if err != nil {
				return nil, nil, err
			}
			provided, err := wire.Provided(data)
			if err != nil {
				return nil, nil, err
			}
			opts := wire.ProposerOptions{Baseline: baseline, Provided: provided}
			collectors := proposer.Collectors()
			if llmCfg.Enabled() {
				if llmCfg.APIKey, err = llm.APIKeyFromEnv(); err != nil {
					return nil, nil, err
				}
				client, err := llm.NewClient(llmCfg)
				if err != nil {
					return nil, nil, err
				}
				if opts.LLM, err = llm.NewGenerator(client, in.Store); err != nil {
					return nil, nil, err
				}
				collectors = append(collectors, llm.Collectors()...)
				in.Log.Info("generator llm offered", client.Config().LogFields()...)
			}
			cfg := wire.Proposer(db, in.Store, opts)
			if limits.MaxBudget < 0 || limits.MaxCampaigns < 0 {
				return nil, nil, fmt.Errorf("config: max-budget %d and max-campaigns %d must not be negative", limits.MaxBudget, limits.MaxCampaigns)
			}
			if userLimits != "" {
				if limits.Users, err = proposer.ReadUserLimits(userLimits); err != nil {
					return nil, nil, err
				}
			}
			cfg.Concurrency = concurrency
			cfg.Limits = limits
			cfg.DrainTimeout = in.Config.DrainTimeout
			return proposer.New(in.Bus, in.Store, in.Log, cfg), collectors, nil
		}))
}
