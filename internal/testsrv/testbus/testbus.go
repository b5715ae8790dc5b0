// Package testbus gives a test a bus with Crucible's streams, in memory
// and in a namespace of the test's own, on the test NATS server
// (testsrv.NATS: the real one when CRUCIBLE_TEST_NATS_URL names it, else
// an embedded one), and removes the streams when the test ends.
package testbus

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/testsrv"
)

// Open connects in namespace ns and creates the streams. It returns the
// bus and the server's URL (for the command line's --nats).
func Open(t testing.TB, ctx context.Context, ns string) (*bus.Bus, string) {
	t.Helper()
	url, _ := testsrv.NATS(t)
	b, err := bus.Connect(ctx, bus.Options{URL: url, Name: t.Name(), Namespace: ns, MemoryStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureStreams(ctx); err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.DeleteStreams(ctx)
		b.Close()
	})
	return b, url
}
