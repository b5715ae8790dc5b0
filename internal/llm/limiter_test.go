package llm

import (
	"context"
	"testing"
	"time"
)

func TestLimiterRequestsPerMinute(t *testing.T) {
	fc := newFakeClock()
	l := newLimiter(60, 0, fc) // one request a second, a minute's burst
	ctx := context.Background()
	for i := 0; i < 60; i++ {
		if err := l.wait(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	if w := fc.waits(); len(w) != 0 {
		t.Fatalf("the first 60 requests waited %v", w)
	}
	if err := l.wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if w := fc.waits(); len(w) != 1 || w[0] != time.Second {
		t.Fatalf("the 61st request waited %v, want [1s]", w)
	}
}

func TestLimiterTokensPerMinute(t *testing.T) {
	fc := newFakeClock()
	l := newLimiter(0, 6000, fc) // 100 tokens a second
	ctx := context.Background()
	if err := l.wait(ctx, 5000); err != nil {
		t.Fatal(err)
	}
	l.adjust(5000, 1000) // the call used 1000: 4000 come back
	if err := l.wait(ctx, 5000); err != nil {
		t.Fatal(err)
	}
	if w := fc.waits(); len(w) != 0 {
		t.Fatalf("waited %v with 5000 of 6000 tokens free", w)
	}
	// 0 tokens left; 3000 more need 30 s.
	if err := l.wait(ctx, 3000); err != nil {
		t.Fatal(err)
	}
	if w := fc.waits(); len(w) != 1 || w[0] != 30*time.Second {
		t.Fatalf("waits %v, want [30s]", w)
	}
	// A request larger than a minute's quota waits for a full bucket, not
	// forever.
	if err := l.wait(ctx, 100000); err != nil {
		t.Fatal(err)
	}
	if w := fc.waits(); len(w) != 2 || w[1] != time.Minute {
		t.Fatalf("waits %v, want a minute for a full bucket", w)
	}
	// A call that used more than it reserved leaves a debt.
	l.adjust(100, 700)
	if err := l.wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if w := fc.waits(); len(w) != 3 || w[2] != 6*time.Second {
		t.Fatalf("waits %v, want 6 s to repay a 600-token debt", w)
	}
}

func TestLimiterHonoursContext(t *testing.T) {
	fc := newFakeClock()
	l := newLimiter(1, 0, fc)
	ctx, cancel := context.WithCancel(context.Background())
	if err := l.wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := l.wait(ctx, 0); err == nil {
		t.Fatal("a cancelled wait returned no error")
	}
}

func TestLimiterUnlimited(t *testing.T) {
	fc := newFakeClock()
	l := newLimiter(0, 0, fc)
	for i := 0; i < 1000; i++ {
		if err := l.wait(context.Background(), 1e6); err != nil {
			t.Fatal(err)
		}
	}
	l.adjust(10, 20)
	if w := fc.waits(); len(w) != 0 {
		t.Fatalf("an unlimited limiter waited %v", w)
	}
}
