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
	"github.com/crucible-sci/crucible/internal/service/reflector"
)

func main() {
	var cfg reflector.Config
	app.Exit(app.Main("reflector", "Crucible reflector: island pools, counters, generations, reflections",
		"The reflector consumes evaluations (durable consumer \"reflector\" on EVALUATIONS), updates Redis atomically and idempotently, requests generations, reflects at the end of each episode and completes campaigns.",
		func(cmd *cobra.Command) {
			cmd.Flags().IntVar(&cfg.Concurrency, "concurrency", app.EnvInt("CRUCIBLE_REFLECTOR_CONCURRENCY", 32), "evaluations in flight [CRUCIBLE_REFLECTOR_CONCURRENCY]")
			cmd.Flags().IntVar(&cfg.Batch, "batch", app.EnvInt("CRUCIBLE_REFLECTOR_BATCH", 16), "most evaluations recorded in one Redis call [CRUCIBLE_REFLECTOR_BATCH]")
			cmd.Flags().DurationVar(&cfg.Linger, "linger", app.EnvDuration("CRUCIBLE_REFLECTOR_LINGER", 5*time.Millisecond), "how long to wait for the rest of a batch once an evaluation arrives; negative: take only what is there [CRUCIBLE_REFLECTOR_LINGER]")
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			cfg.DrainTimeout = in.Config.DrainTimeout
			return reflector.New(in.Bus, in.Store, in.Log, cfg), reflector.Collectors(), nil
		}))
}
