// Command proposer starts submitted campaigns and proposes their candidates
// with the configured generators (evolve: LLEMA's chemistry rules as
// operators; llm: an OpenAI-compatible model). Run any number of replicas.
package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/datadir"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/wire"
)

func main() {
	var (
		data        string
		concurrency int
		baseline    bool
	)
	app.Exit(app.Main("proposer", "Crucible proposer: campaigns in, candidates out",
		"The proposer consumes submissions (durable consumer \"proposer-submit\" on CAMPAIGNS) and generation requests (\"proposer\" on PROPOSE), and publishes crucible.candidates.<campaign>. It reads the reference tables from the data directory (seed materials, known formulas).",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			def, _ := datadir.Dir()
			f.StringVar(&data, "data", def, "data directory with data/ [CRUCIBLE_DATA]")
			f.IntVar(&concurrency, "concurrency", app.EnvInt("CRUCIBLE_PROPOSER_CONCURRENCY", 4), "generation requests handled at once [CRUCIBLE_PROPOSER_CONCURRENCY]")
			f.BoolVar(&baseline, "random-baseline", false, "replace the evolve generator by the random-substitution baseline (comparisons only)")
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			db, err := wire.Reference(data)
			if err != nil {
				return nil, nil, err
			}
			cfg := wire.Proposer(db, in.Store, wire.ProposerOptions{Baseline: baseline})
			cfg.Concurrency = concurrency
			cfg.DrainTimeout = in.Config.DrainTimeout
			return proposer.New(in.Bus, in.Store, in.Log, cfg), proposer.Collectors(), nil
		}))
}
