package llm

import (
	"context"
	"sync"
	"time"
)

// clock is the time source of the limiter and of retry waits, replaced in
// tests so that waits are computed, not slept.
type clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends (returning its error).
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// bucket is a token bucket holding at most capacity, refilled at rate per
// second; its level may go negative (debt) when a call used more tokens
// than it reserved.
type bucket struct {
	capacity, level, rate float64
	last                  time.Time
}

func newBucket(perMinute int, now time.Time) *bucket {
	if perMinute <= 0 {
		return nil
	}
	c := float64(perMinute)
	return &bucket{capacity: c, level: c, rate: c / 60, last: now}
}

func (b *bucket) refill(now time.Time) {
	if dt := now.Sub(b.last).Seconds(); dt > 0 {
		b.level = min(b.capacity, b.level+dt*b.rate)
	}
	b.last = now
}

// wait returns how long until the bucket holds n (0 when it does).
func (b *bucket) wait(n float64) time.Duration {
	if b.level >= n {
		return 0
	}
	return time.Duration((n - b.level) / b.rate * float64(time.Second))
}

// limiter enforces requests-per-minute and tokens-per-minute limits, each a
// token bucket holding a minute's quota (so a burst may use a minute's
// quota at once; the concurrency bound keeps bursts small). A request
// reserves its estimated tokens (prompt and maximum answer) before it is
// sent; adjust settles the difference with the tokens it really used.
type limiter struct {
	mu    sync.Mutex
	clock clock
	req   *bucket
	tok   *bucket
}

func newLimiter(rpm, tpm int, c clock) *limiter {
	now := c.Now()
	return &limiter{clock: c, req: newBucket(rpm, now), tok: newBucket(tpm, now)}
}

// wait blocks until one request and tokens fit both limits, and takes
// them. A request needing more tokens than a minute's quota waits for a
// full bucket.
func (l *limiter) wait(ctx context.Context, tokens int) error {
	for {
		l.mu.Lock()
		now := l.clock.Now()
		var d time.Duration
		need := float64(tokens)
		if l.req != nil {
			l.req.refill(now)
			d = max(d, l.req.wait(1))
		}
		if l.tok != nil {
			l.tok.refill(now)
			need = min(need, l.tok.capacity)
			d = max(d, l.tok.wait(need))
		}
		if d == 0 {
			if l.req != nil {
				l.req.level--
			}
			if l.tok != nil {
				l.tok.level -= need
			}
			l.mu.Unlock()
			return nil
		}
		l.mu.Unlock()
		metricLimiterWait.Add(d.Seconds())
		if err := l.clock.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// adjust settles a request that reserved tokens and used actual.
func (l *limiter) adjust(reserved, actual int) {
	if l.tok == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tok.refill(l.clock.Now())
	l.tok.level = min(l.tok.capacity, l.tok.level+float64(min(reserved, int(l.tok.capacity))-actual))
}
