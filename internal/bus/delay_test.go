package bus

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestNakDelay(t *testing.T) {
	base := errors.New("endpoint busy")
	cases := []struct {
		name     string
		err      error
		min, max time.Duration
	}{
		{"backoff", base, 200 * time.Millisecond, 400 * time.Millisecond},
		{"a shorter delay than the backoff", RetryAfter(base, time.Millisecond), 200 * time.Millisecond, 400 * time.Millisecond},
		{"Retry-After", RetryAfter(base, 30*time.Second), 30 * time.Second, 30 * time.Second},
		{"wrapped", fmt.Errorf("generation 3: %w", RetryAfter(base, 45*time.Second)), 45 * time.Second, 45 * time.Second},
		{"bounded", RetryAfter(base, time.Hour), MaxRetryAfter, MaxRetryAfter},
	}
	for _, c := range cases {
		d := nakDelay(1, c.err)
		if d < c.min || d > c.max {
			t.Errorf("%s: delay %v outside [%v, %v]", c.name, d, c.min, c.max)
		}
	}
	if !errors.Is(RetryAfter(base, time.Second), base) || RetryAfter(nil, time.Second) != nil {
		t.Fatal("RetryAfter does not wrap")
	}
}
