// Command judge decides which feasible, stable candidates are discoveries:
// it debates each hit with four tool-grounded role agents and a judge
// (offline rules, or LLM agents for campaigns with judge.debate llm), or
// judges it by the rule checks, and publishes discoveries and verdicts.
// Run any number of replicas.
package main

import (
	"context"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/service/judge"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/debate"
	pjudge "github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func main() {
	var (
		cfg                  judge.Config
		data                 string
		workers, transcripts int
		llmCfg               llm.Config
	)
	app.Exit(app.Main("judge", "Crucible judge: debates stable hits, accepts discoveries or rejects them with reasons",
		"The judge consumes evaluations (durable consumer \"judge\" on EVALUATIONS); each feasible, stable hit within the task's rules is debated by four role agents grounded in tools over the reference data (docs/debate.md) — offline rules, or LLM agents for campaigns with judge.debate llm — up to the campaign's judge.max_debates, the rest judged by the rule checks; it publishes crucible.discoveries.<campaign> or crucible.verdicts.<campaign>, stores the transcripts in Redis and the LLM exchanges on crucible.campaigns.prompts.<campaign>. The LLM's API key comes from CRUCIBLE_LLM_API_KEY or the file named by CRUCIBLE_LLM_API_KEY_FILE.",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			def, _ := datadir.Dir()
			if _, err := os.Stat(datadir.Tables(def)); err != nil {
				def = "" // none here: the debate's hull tools say so
			}
			f.StringVar(&data, "data", def, "data directory with data/: the debate tools' reference phases (default CRUCIBLE_DATA or the user cache when it holds them) [CRUCIBLE_DATA]")
			f.IntVar(&cfg.Concurrency, "concurrency", app.EnvInt("CRUCIBLE_JUDGE_CONCURRENCY", 8), "evaluations handled at once [CRUCIBLE_JUDGE_CONCURRENCY]")
			f.IntVar(&workers, "debate-workers", app.EnvInt("CRUCIBLE_JUDGE_DEBATE_WORKERS", judge.DefaultDebateWorkers), "debates run at once [CRUCIBLE_JUDGE_DEBATE_WORKERS]")
			f.IntVar(&transcripts, "transcripts", app.EnvInt("CRUCIBLE_JUDGE_TRANSCRIPTS", store.DefaultTranscripts), "debate transcripts kept per campaign, the most recent [CRUCIBLE_JUDGE_TRANSCRIPTS]")
			f.Float64Var(&cfg.Options.ConfidenceK, "confidence-k", app.EnvFloat("CRUCIBLE_JUDGE_CONFIDENCE_K", pjudge.DefaultConfidenceK), "a surrogate property must clear its bound by K times the surrogate's error [CRUCIBLE_JUDGE_CONFIDENCE_K]")
			f.Float64Var(&cfg.Options.SuspiciousBelowHull, "suspicious-below-hull", app.EnvFloat("CRUCIBLE_JUDGE_SUSPICIOUS_BELOW_HULL", pjudge.DefaultSuspiciousBelowHull), "reject energies this far below the known hull (eV/atom) as likely surrogate errors, where the evaluation carries no calibrated error (else its 95 % quantile is the bound) [CRUCIBLE_JUDGE_SUSPICIOUS_BELOW_HULL]")
			llmCfg.BindFlags(f, true)
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			cfg.DrainTimeout = in.Config.DrainTimeout
			collectors := judge.Collectors()
			var err error
			if data != "" {
				// Without reference data the debate's hull tools answer
				// that the data is missing.
				db, err := wire.Reference(data)
				if err != nil {
					return nil, nil, err
				}
				if cfg.Debate, err = judge.DebateData(db); err != nil {
					return nil, nil, err
				}
			}
			cfg.Debate.Workers, cfg.Debate.Transcripts = workers, transcripts
			if llmCfg.Enabled() {
				if llmCfg.APIKey, err = llm.APIKeyFromEnv(); err != nil {
					return nil, nil, err
				}
				client, err := llm.NewClient(llmCfg)
				if err != nil {
					return nil, nil, err
				}
				cfg.Debate.Agents = func(s *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
					return llm.DebateAgents(client, s, spec)
				}
				collectors = append(collectors, llm.Collectors()...)
			}
			return judge.New(in.Bus, in.Store, in.Log, cfg), collectors, nil
		}))
}
