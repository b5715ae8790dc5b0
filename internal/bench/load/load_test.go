package load

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// A small run on embedded servers: every campaign's budget is evaluated,
// and each figure is measured, not defaulted.
func TestRunEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	data := testbed.DataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Campaigns: 3, Budget: 12, Task: "Stable Wide-Bandgap Semiconductors", Evaluators: 2,
		Embedded: true, DataDir: data, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Evaluations != 3*12 {
		t.Errorf("%d evaluations, want %d", res.Evaluations, 3*12)
	}
	if res.Seeds == 0 || res.EvaluationsPerSec <= 0 || res.LatencyP50 <= 0 || res.LatencyP99 < res.LatencyP50 || res.LatencyMax < res.LatencyP99 {
		t.Errorf("implausible figures: %+v", res)
	}
	if res.RedisCommands <= 0 || res.RedisSource != "miniredis command counter" {
		t.Errorf("redis: %d commands from %q", res.RedisCommands, res.RedisSource)
	}
	if len(res.Memory) != 1 || res.Memory[0].RSS <= 0 || res.Memory[0].Heap <= 0 {
		t.Errorf("memory: %+v, want this process's RSS and heap", res.Memory)
	}
}

func TestQuantile(t *testing.T) {
	xs := make([]time.Duration, 100)
	for i := range xs {
		xs[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}, {0, time.Millisecond}} {
		if got := quantile(xs, c.q); got != c.want {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}
