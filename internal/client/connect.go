package client

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

// Connect reaches the installation of cfg within timeout and returns a
// client and the function that closes it. The streams are not created (the
// services do that), so a client needs no more than publish and read
// permissions.
func Connect(ctx context.Context, cfg app.Config, timeout time.Duration) (*Client, func(), error) {
	if err := cfg.SecretErr(); err != nil {
		return nil, nil, err
	}
	cfg.NATS.Namespace = cfg.Namespace
	cfg.NATS.Name = "crucible-cli"
	cfg.Redis.Namespace = cfg.Namespace
	say := func(line string) { fmt.Fprintln(os.Stderr, line) }
	cfg.NATS.Notify, cfg.Redis.Notify = say, say
	store.RouteLogs(zap.NewNop())
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b, err := bus.Connect(cctx, cfg.NATS)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (is NATS running? start one with \"make up\", or use \"crucible local\")", err)
	}
	s, err := store.Open(cctx, cfg.Redis)
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
	return &Client{Bus: b, Store: s, Provided: provided, Submitter: cfg.NATS.User}, func() { b.Close(); _ = s.Close() }, nil
}
