package store

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Open waits for a Redis server that comes up late (a restart, a
// failover) instead of failing at once, and gives up when its context
// ends.
func TestOpenWaitsForRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	t.Run("gives up with its context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		if _, err := Open(ctx, Options{URL: "redis://" + addr}); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Open without a server: %v, want the context's deadline", err)
		}
	})
	t.Run("connects once the server is up", func(t *testing.T) {
		mr := miniredis.NewMiniRedis()
		t.Cleanup(mr.Close)
		started := make(chan error, 1)
		// The server starts only after Open's first attempts failed.
		time.AfterFunc(500*time.Millisecond, func() { started <- mr.StartAddr(addr) })
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		s, err := Open(ctx, Options{URL: "redis://" + addr})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if err := <-started; err != nil {
			t.Fatal(err)
		}
	})
}
