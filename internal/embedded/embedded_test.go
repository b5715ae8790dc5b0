package embedded_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/embedded"
	"github.com/crucible-sci/crucible/internal/store"
)

// TestRedisDial: a store connected through Dial talks to the embedded
// server (what it writes is there), and after Close the server refuses new
// connections instead of serving them.
func TestRedisDial(t *testing.T) {
	r, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The URL names the server; Dial reaches it without a socket.
	var dials atomic.Int32 // the client's pool dials from its own goroutines
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return r.Dial(ctx, network, addr)
	}
	st, err := store.Open(ctx, store.Options{URL: r.URL(), Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A script, as the services run them, then a plain read.
	if err := st.Client().Eval(ctx, "return redis.call('SET', KEYS[1], ARGV[1])", []string{"k"}, "v").Err(); err != nil {
		t.Fatal(err)
	}
	if dials.Load() == 0 {
		t.Fatal("the store never used Dial")
	}
	// A second client over the socket sees what the piped one wrote.
	other, err := store.Open(ctx, store.Options{URL: r.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if v, err := other.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("over the socket: %q, %v; want the piped client's write", v, err)
	}
	r.Close()
	if _, err := r.Dial(ctx, "tcp", "ignored"); err == nil {
		t.Fatal("Dial after Close succeeded")
	}
}
