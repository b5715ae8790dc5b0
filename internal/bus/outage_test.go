package bus

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestConnectUnreachable: a NATS server that cannot be reached is said
// once, within seconds, with the address and the cause; a host name that
// does not resolve fails at once.
func TestConnectUnreachable(t *testing.T) {
	var lines []string
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	_, err := Connect(ctx, Options{URL: "nats://127.0.0.1:1", Notify: func(l string) { lines = append(lines, l) }})
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Connect: %v, want the cause", err)
	}
	if len(lines) != 1 || lines[0] != "cannot reach NATS at 127.0.0.1:1: connection refused; retrying every 250ms" {
		t.Errorf("notices %q, want one line naming the address and the cause", lines)
	}

	start := time.Now()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel2()
	_, err = Connect(ctx2, Options{URL: "nats://no-such-host.invalid:4222"})
	if err == nil || !strings.Contains(err.Error(), "no such host") {
		t.Errorf("Connect to a name that does not resolve: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a name that does not resolve took %v to fail", d)
	}
}
