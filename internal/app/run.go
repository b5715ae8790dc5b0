package app

import (
	"context"
	"fmt"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
)

// Service is what a service binary runs once its connections are up.
type Service interface {
	Run(ctx context.Context) error
}

// secretsHelp documents the settings that are never flags.
const secretsHelp = `

Secrets are read from the environment only, never from flags (they would
show in process lists): CRUCIBLE_NATS_PASSWORD, CRUCIBLE_NATS_TOKEN and
CRUCIBLE_REDIS_PASSWORD, or a file named by the same variable with the
suffix _FILE (CRUCIBLE_REDIS_PASSWORD_FILE=/run/secrets/redis); a file
named but unreadable is an error. Every flag
can also be set by the CRUCIBLE_* variable shown in its help.

Endpoints, on 127.0.0.1:9090 unless --http says otherwise: /metrics
(Prometheus), /healthz (alive), /readyz (NATS and Redis reachable; when
not, it names which, the error goes to the log). SIGTERM stops fetching work and lets in-flight work finish
within --drain-timeout.`

// Main builds the cobra command of a service binary: flags for the shared
// configuration plus the service's own (bind), then connect, serve
// /metrics and health, run until SIGTERM, drain, exit.
func Main(name, short, long string, bind func(*cobra.Command), build func(ctx context.Context, in *Infra) (Service, []prometheus.Collector, error)) *cobra.Command {
	var cfg Config
	cmd := &cobra.Command{
		Use:           name,
		Short:         short,
		Long:          long + secretsHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Probe {
				return ProbeReady(cmd.Context(), cfg.HTTPAddr)
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			log, err := Logger(cfg.LogLevel, cfg.LogFormat)
			if err != nil {
				return err
			}
			defer func() { _ = log.Sync() }()
			log = log.With(zap.String("service", name))
			ctx, stop := SignalContext()
			defer stop()
			in, err := Connect(ctx, &cfg, log)
			if err != nil {
				return err
			}
			defer in.Close()
			svc, collectors, err := build(ctx, in)
			if err != nil {
				return err
			}
			addr, err := ServeHTTP(ctx, cfg.HTTPAddr, Registry(collectors...), in.Health, log)
			if err != nil {
				return err
			}
			log.Info("started", zap.String("http", addr), zap.String("namespace", cfg.Namespace))
			err = svc.Run(ctx)
			log.Info("stopped", zap.Error(err))
			return err
		},
	}
	cfg.Bind(cmd.Flags(), name)
	if bind != nil {
		bind(cmd)
	}
	return cmd
}

// Exit runs a service command and exits with its status.
func Exit(cmd *cobra.Command) {
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", cmd.Name(), err)
		os.Exit(1)
	}
}
