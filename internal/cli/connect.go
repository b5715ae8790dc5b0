package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/client"
)

// connection holds the flags of the commands that talk to an installation
// (submit, watch, status, results).
type connection struct {
	cfg     app.Config
	timeout time.Duration
}

func (c *connection) bind(cmd *cobra.Command) {
	c.cfg.BindConnection(cmd.Flags())
	cmd.Flags().DurationVar(&c.timeout, "connect-timeout", 20*time.Second, "give up reaching NATS and Redis after this long")
}

// open connects a client (client.Connect).
func (c *connection) open(ctx context.Context) (*client.Client, func(), error) {
	return client.Connect(ctx, c.cfg, c.timeout)
}

// do connects a client, calls fn with it and closes it.
func (c *connection) do(ctx context.Context, fn func(*client.Client) error) error {
	cl, closeFn, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer closeFn()
	return fn(cl)
}
