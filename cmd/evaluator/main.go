// Command evaluator evaluates proposed candidates with the hierarchical
// oracle (validity, reference lookup, CGCNN surrogates, convex hull) and
// publishes evaluations. All replicas share one durable consumer: add
// replicas to add throughput.
package main

import (
	"github.com/nats-io/nats.go"

	"context"
	"fmt"
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
		"The evaluator pulls batches of candidates (durable consumer \"evaluator\" on CANDIDATES), runs the oracle on them and publishes crucible.evaluations.<campaign>; for a campaign with the relax oracle, candidates that pass its screen go to RELAX instead, where the relax role (durable consumer \"evaluator-relax\") relaxes them with the M3GNet potential and publishes the relaxed evaluation. --role chooses the queues a replica serves, so that each scales on its own. It loads the CGCNN checkpoints and reference tables (and, for the relax role, the potential and MP's corrections) from the data directory at start.",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			def, _ := datadir.Dir()
			f.StringVar(&data, "data", def, "data directory with data/ and models/cgcnn/ (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache) [CRUCIBLE_DATA]")
			f.IntVar(&cfg.Batch, "batch", app.EnvInt("CRUCIBLE_EVALUATOR_BATCH", 16), "candidates per oracle call [CRUCIBLE_EVALUATOR_BATCH]")
			f.IntVar(&workers, "workers", app.EnvInt("CRUCIBLE_EVALUATOR_WORKERS", 0), "structures evaluated in parallel (0: one per CPU) [CRUCIBLE_EVALUATOR_WORKERS]")
			f.StringVar(&cfg.Role, "role", app.EnvString("CRUCIBLE_EVALUATOR_ROLE", evaluator.RoleBoth), "work queues served: screen (candidates), relax (screened candidates to relax with M3GNet) or both [CRUCIBLE_EVALUATOR_ROLE]")
			f.IntVar(&cfg.RelaxWorkers, "relax-workers", app.EnvInt("CRUCIBLE_EVALUATOR_RELAX_WORKERS", 0), "relaxations run at once by the relax role (0: one per CPU) [CRUCIBLE_EVALUATOR_RELAX_WORKERS]")
			f.DurationVar(&cfg.Delay, "oracle-delay", app.EnvDuration("CRUCIBLE_ORACLE_DELAY", 0), "artificial cost added per candidate, for benchmarks [CRUCIBLE_ORACLE_DELAY]")
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			start := time.Now()
			conn := func() (*nats.Conn, error) { return in.Bus.NC, nil }
			var o evaluator.Oracle
			var err error
			switch cfg.Role {
			case evaluator.RoleScreen:
				_, o, err = wire.OracleWith(data, workers, conn)
			case evaluator.RoleRelax, evaluator.RoleBoth:
				_, o, err = wire.RelaxingOracleWith(data, workers, conn)
			default:
				err = fmt.Errorf("--role %q: want %s, %s or %s", cfg.Role, evaluator.RoleScreen, evaluator.RoleRelax, evaluator.RoleBoth)
			}
			if err != nil {
				return nil, nil, err
			}
			in.Log.Sugar().Infof("oracle loaded from %s in %.2f s", data, time.Since(start).Seconds())
			cfg.DrainTimeout = in.Config.DrainTimeout
			return evaluator.New(in.Bus, in.Store, o, in.Log, cfg), evaluator.Collectors(), nil
		}))
}
