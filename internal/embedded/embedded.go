// Package embedded starts in-process servers for local mode and tests: a NATS
// server with JetStream on disk and a Redis-protocol server, each on a
// random loopback port (for other processes); in-process clients can skip
// the socket (NATS.Server for NATS, Redis.Dial for Redis).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/nats-io/nats-server/v2/server"
)

// NATS is an embedded NATS server with JetStream.
type NATS struct {
	srv *server.Server
	dir string
	tmp bool
}

// StartNATS starts a NATS server with JetStream storing its streams under
// dir (a new temporary directory when dir is ""), listening on a random
// loopback port.
func StartNATS(dir string) (*NATS, error) {
	tmp := false
	if dir == "" {
		d, err := os.MkdirTemp("", "crucible-nats-")
		if err != nil {
			return nil, err
		}
		dir, tmp = d, true
	}
	opts := &server.Options{
		ServerName: "crucible-embedded",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoLog:      true,
		NoSigs:     true,
		// Generous limits for one machine.
		JetStreamMaxMemory: 256 << 20,
		JetStreamMaxStore:  8 << 30,
		MaxPayload:         8 << 20,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("embedded nats: not ready after 10 s")
	}
	return &NATS{srv: srv, dir: dir, tmp: tmp}, nil
}

// URL is the client URL.
func (n *NATS) URL() string { return n.srv.ClientURL() }

// Server is the server, for in-process connections (bus.Options.InProcess).
func (n *NATS) Server() *server.Server { return n.srv }

// Dir is the JetStream storage directory.
func (n *NATS) Dir() string { return n.dir }

// Shutdown stops the server and removes a temporary storage directory.
func (n *NATS) Shutdown() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	if n.tmp {
		os.RemoveAll(n.dir)
	}
}

// Redis is an embedded Redis-protocol server (miniredis): strings, hashes,
// sets, sorted sets, lists and Lua scripts, in memory.
type Redis struct {
	mr *miniredis.Miniredis

	mu     sync.Mutex
	closed bool
}

// StartRedis starts the server on a random loopback port.
func StartRedis() (*Redis, error) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("embedded redis: %w", err)
	}
	return &Redis{mr: mr}, nil
}

// URL is the client URL (redis://127.0.0.1:port).
func (r *Redis) URL() string { return "redis://" + r.mr.Addr() }

// Dial opens an in-process connection to the server (store.Options.Dial):
// a synchronous pipe, without a socket or the kernel in between.
func (r *Redis) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("embedded redis: closed")
	}
	client, server := net.Pipe()
	r.mr.Server().ServeConn(server)
	return client, nil
}

// Close stops the server and closes its connections.
func (r *Redis) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.mr.Close()
}
