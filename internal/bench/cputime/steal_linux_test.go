package cputime

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestStealOf(t *testing.T) {
	for _, c := range []struct {
		stat string
		want time.Duration
		cpus int
		ok   bool
	}{
		{"cpu  70316 0 6853 92177 2952 0 746 45713 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\ncpu1 1 2 3 4 5 6 7 8 0 0\nintr 5\n", 457130 * time.Millisecond, 2, true},
		{"cpu  1 2 3 4 5 6 7 0\ncpu0 1 2 3 4 5 6 7 0\n", 0, 1, true},
		{"cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n", 0, 0, false}, // a kernel without the column
		{"cpu0 1 2 3 4 5 6 7 8 0 0\n", 0, 0, false},               // not the total line
		{"cpu  1 2 3 4 5 6 7 x 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n", 0, 0, false},
		{"cpu  1 2 3 4 5 6 7 8 0 0\n", 0, 0, false}, // no CPU lines
		{"", 0, 0, false},
	} {
		got, cpus, ok := stealOf(strings.NewReader(c.stat))
		if got != c.want || cpus != c.cpus || ok != c.ok {
			t.Errorf("%q: %v, %d, %v; want %v, %d, %v", c.stat, got, cpus, ok, c.want, c.cpus, c.ok)
		}
	}
}

// TestSteal: where the kernel has /proc/stat, Steal reads it and never
// goes back.
func TestSteal(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat here")
	}
	a, cpus, ok := Steal()
	if !ok || cpus < 1 {
		t.Fatalf("Steal: ok %v, %d CPUs, though /proc/stat is there", ok, cpus)
	}
	b, _, _ := Steal()
	if b < a || a < 0 {
		t.Errorf("steal went from %v to %v", a, b)
	}
}
