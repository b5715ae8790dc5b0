// Command reflector records evaluations into island pools and campaign
// counters, requests the next generations, writes each episode's reflection
// into the memory bank and finishes campaigns. Run any number of replicas.
package main

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/service/reflector"
)

func main() {
	var (
		cfg    reflector.Config
		llmCfg llm.Config
	)
	app.Exit(app.Main("reflector", "Crucible reflector: island pools, counters, generations, reflections",
		"The reflector consumes evaluations (durable consumer \"reflector\" on EVALUATIONS), updates Redis atomically and idempotently, requests generations, reflects at the end of each episode (by rules, or with an OpenAI-compatible model for campaigns with reflector llm when --llm-url or --llm-model is set; the API key comes from CRUCIBLE_LLM_API_KEY or CRUCIBLE_LLM_API_KEY_FILE) and completes campaigns.",
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&cfg.Concurrency, "concurrency", app.EnvInt("CRUCIBLE_REFLECTOR_CONCURRENCY", 32), "evaluations in flight [CRUCIBLE_REFLECTOR_CONCURRENCY]")
			cmd.Flags().IntVar(&cfg.Batch, "batch", app.EnvInt("CRUCIBLE_REFLECTOR_BATCH", 16), "most evaluations recorded in one Redis call [CRUCIBLE_REFLECTOR_BATCH]")
			cmd.Flags().DurationVar(&cfg.Linger, "linger", app.EnvDuration("CRUCIBLE_REFLECTOR_LINGER", 5*time.Millisecond), "how long to wait for the rest of a batch once an evaluation arrives; negative: take only what is there [CRUCIBLE_REFLECTOR_LINGER]")
			cmd.Flags().BoolVar(&cfg.ReconcileAtStart, "reconcile", app.EnvBool("CRUCIBLE_RECONCILE", false), "reconcile Redis with the streams once at start, whatever the server's run id says: after restoring a Redis Cluster (whose restarts are not detected) from an earlier state [CRUCIBLE_RECONCILE]")
			llmCfg.BindFlags(cmd.Flags(), true)
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			cfg.DrainTimeout = in.Config.DrainTimeout
			collectors := reflector.Collectors()
			if llmCfg.Enabled() {
				var err error
				if llmCfg.APIKey, err = llm.APIKeyFromEnv(); err != nil {
					return nil, nil, err
				}
				client, err := llm.NewClient(llmCfg)
				if err != nil {
					return nil, nil, err
				}
				cfg.LLM = llm.NewReflector(client, in.Store, in.Log)
				collectors = append(collectors, llm.Collectors()...)
				in.Log.Info("reflector llm offered", client.Config().LogFields()...)
			}
			return reflector.New(in.Bus, in.Store, in.Log, cfg), collectors, nil
		}))
}
