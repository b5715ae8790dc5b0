// Command evaluator evaluates proposed candidates with the hierarchical
// oracle (validity, reference lookup, CGCNN surrogates, convex hull) and
// publishes evaluations. All replicas share one durable consumer: add
// replicas to add throughput.
package main

import (
	"github.com/nats-io/nats.go"

	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func main() {
	var (
		cfg     evaluator.Config
		data    string
		workers int
	)
	app.Exit(app.Main("evaluator", "Crucible evaluator: properties, stability and score of candidates",
		"The evaluator pulls batches of candidates (durable consumer \"evaluator\" on CANDIDATES), runs the oracle on them and publishes crucible.evaluations.<campaign>. It loads the CGCNN checkpoints and reference tables from the data directory at start.",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			def, _ := datadir.Dir()
			f.StringVar(&data, "data", def, "data directory with data/ and models/cgcnn/ [CRUCIBLE_DATA]")
			f.IntVar(&cfg.Batch, "batch", app.EnvInt("CRUCIBLE_EVALUATOR_BATCH", 16), "candidates per oracle call [CRUCIBLE_EVALUATOR_BATCH]")
			f.IntVar(&workers, "workers", app.EnvInt("CRUCIBLE_EVALUATOR_WORKERS", 0), "structures evaluated in parallel (0: one per CPU) [CRUCIBLE_EVALUATOR_WORKERS]")
			f.DurationVar(&cfg.Delay, "oracle-delay", app.EnvDuration("CRUCIBLE_ORACLE_DELAY", 0), "artificial cost added per candidate, for benchmarks [CRUCIBLE_ORACLE_DELAY]")
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			start := time.Now()
			_, o, err := wire.OracleWith(data, workers, func() (*nats.Conn, error) { return in.Bus.NC, nil })
			if err != nil {
				return nil, nil, err
			}
			in.Log.Sugar().Infof("oracle loaded from %s in %.2f s", data, time.Since(start).Seconds())
			cfg.DrainTimeout = in.Config.DrainTimeout
			return evaluator.New(in.Bus, in.Store, o, in.Log, cfg), evaluator.Collectors(), nil
		}))
}
