package llm

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// fakeClock advances only when slept on, and records every wait.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// testClient builds a client on url whose waits go to a fake clock.
func testClient(t *testing.T, cfg Config) (*Client, *fakeClock) {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	fc := newFakeClock()
	c.clock = fc
	c.lim = newLimiter(c.cfg.RequestsPerMinute, c.cfg.TokensPerMinute, fc)
	return c, fc
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }
