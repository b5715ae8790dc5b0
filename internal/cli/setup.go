package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() { register(newSetupCmd) }

func newSetupCmd() *cobra.Command {
	var (
		conn     connection
		replicas int
	)
	cmd := &cobra.Command{
		Use:   "setup [--stream-replicas N]",
		Short: "Create or update the JetStream streams and durable consumers of an installation",
		Long: `setup creates Crucible's JetStream streams and the durable consumers of the
four services, or updates them to this version's definitions. By default
each service does this itself when it starts; on an installation where the
services' NATS users may not manage streams (per-service permissions, as in
deploy/k8s), an administrator runs setup once per install or upgrade with a
user that may, and the services run with --provisioned.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replicas < 1 || replicas > 5 {
				return &exitError{code: 2, err: fmt.Errorf("--stream-replicas %d outside [1, 5]", replicas)}
			}
			conn.cfg.NATS.Namespace = conn.cfg.Namespace
			conn.cfg.NATS.Name = "crucible-setup"
			conn.cfg.NATS.Replicas = replicas
			ctx, cancel := context.WithTimeout(cmd.Context(), conn.timeout)
			defer cancel()
			b, err := bus.Connect(ctx, conn.cfg.NATS)
			if err != nil {
				return fmt.Errorf("%w (is NATS running?)", err)
			}
			defer b.Close()
			if err := b.ProvisionStreams(ctx, true); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, s := range messages.Streams {
				fmt.Fprintf(w, "stream %s (%d replicas)\n", b.Stream(s.Name), replicas)
			}
			for _, c := range messages.Consumers {
				if _, err := b.CreateConsumer(ctx, c); err != nil {
					return err
				}
				fmt.Fprintf(w, "consumer %s on %s\n", c.Name, b.Stream(c.Stream))
			}
			return nil
		},
	}
	conn.bind(cmd)
	cmd.Flags().IntVar(&replicas, "stream-replicas", app.EnvInt("CRUCIBLE_STREAM_REPLICAS", 1), "replicas of each stream (3 on a NATS cluster) [CRUCIBLE_STREAM_REPLICAS]")
	return cmd
}
