package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
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

// open connects a client; the streams are not created (the services do
// that), so a client needs no more than publish and read permissions.
func (c *connection) open(ctx context.Context) (*client.Client, func(), error) {
	if err := c.cfg.SecretErr(); err != nil {
		return nil, nil, err
	}
	c.cfg.NATS.Namespace = c.cfg.Namespace
	c.cfg.NATS.Name = "crucible-cli"
	c.cfg.Redis.Namespace = c.cfg.Namespace
	say := func(line string) { fmt.Fprintln(os.Stderr, line) }
	c.cfg.NATS.Notify, c.cfg.Redis.Notify = say, say
	store.RouteLogs(zap.NewNop())
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	b, err := bus.Connect(cctx, c.cfg.NATS)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (is NATS running? start one with \"make up\", or use \"crucible local\")", err)
	}
	s, err := store.Open(cctx, c.cfg.Redis)
	if err != nil {
		b.Close()
		return nil, nil, fmt.Errorf("%w (is Redis running? start one with \"make up\", or use \"crucible local\")", err)
	}
	// The plug-ins of this machine's data directory, if it has a
	// registry; the proposer checks again against its own.
	var provided []string
	if d, err := datadir.Dir(); err == nil {
		provided, _ = wire.Provided(d)
	}
	return &client.Client{Bus: b, Store: s, Provided: provided}, func() { b.Close(); _ = s.Close() }, nil
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
