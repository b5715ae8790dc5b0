package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestOpenUnreachable: Redis that cannot be reached is said once, in one
// line with the address and the cause, and Open gives up when its
// context ends with the same cause.
func TestOpenUnreachable(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	RouteLogs(zap.New(core))
	defer RouteLogs(zap.NewNop())
	var lines []string
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := Open(ctx, Options{URL: "redis://127.0.0.1:1", Notify: func(l string) { lines = append(lines, l) }})
	if err == nil {
		t.Fatal("Open reached a server on port 1")
	}
	if len(lines) != 1 || lines[0] != "cannot reach Redis at 127.0.0.1:1: connection refused; retrying every 2s" {
		t.Errorf("notices %q, want one line naming the address and the cause", lines)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %v does not say why", err)
	}
	if logs.FilterMessage("redis client").Len() == 0 {
		t.Error("go-redis's own messages did not reach the zap logger")
	}
}
