// Command judge decides which feasible, stable candidates are discoveries,
// with tool-grounded checks, and publishes discoveries and verdicts. Run
// any number of replicas.
package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/service/judge"
	pjudge "github.com/crucible-sci/crucible/pkg/judge"
)

func main() {
	var cfg judge.Config
	app.Exit(app.Main("judge", "Crucible judge: accepts discoveries or rejects them with reasons",
		"The judge consumes evaluations (durable consumer \"judge\" on EVALUATIONS); for each feasible and stable one it checks validity, constraints, thermodynamics, property confidence against surrogate error and novelty, and publishes crucible.discoveries.<campaign> or crucible.verdicts.<campaign>.",
		func(cmd *cobra.Command) {
			f := cmd.Flags()
			f.IntVar(&cfg.Concurrency, "concurrency", app.EnvInt("CRUCIBLE_JUDGE_CONCURRENCY", 8), "evaluations handled at once [CRUCIBLE_JUDGE_CONCURRENCY]")
			f.Float64Var(&cfg.Options.ConfidenceK, "confidence-k", app.EnvFloat("CRUCIBLE_JUDGE_CONFIDENCE_K", pjudge.DefaultConfidenceK), "a surrogate property must clear its bound by K times the surrogate's error [CRUCIBLE_JUDGE_CONFIDENCE_K]")
			f.Float64Var(&cfg.Options.SuspiciousBelowHull, "suspicious-below-hull", app.EnvFloat("CRUCIBLE_JUDGE_SUSPICIOUS_BELOW_HULL", pjudge.DefaultSuspiciousBelowHull), "reject energies this far below the known hull (eV/atom) as likely surrogate errors, where the evaluation carries no calibrated error (else its 95 % quantile is the bound) [CRUCIBLE_JUDGE_SUSPICIOUS_BELOW_HULL]")
		},
		func(_ context.Context, in *app.Infra) (app.Service, []prometheus.Collector, error) {
			cfg.DrainTimeout = in.Config.DrainTimeout
			return judge.New(in.Bus, in.Store, in.Log, cfg), judge.Collectors(), nil
		}))
}
