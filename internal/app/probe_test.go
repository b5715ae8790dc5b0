package app

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestProbeReady(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		if !ready.Load() {
			http.Error(w, "nats: reconnecting", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, addr := range []string{":" + port, "0.0.0.0:" + port, "127.0.0.1:" + port} {
		if err := ProbeReady(ctx, addr); err != nil {
			t.Errorf("ready instance at --http %s: %v", addr, err)
		}
	}
	ready.Store(false)
	if err := ProbeReady(ctx, ":"+port); err == nil {
		t.Error("an instance answering 503 passed the probe")
	}
	for _, addr := range []string{"", "no-port"} {
		if err := ProbeReady(ctx, addr); err == nil {
			t.Errorf("--http %q passed the probe", addr)
		}
	}
}
