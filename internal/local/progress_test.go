package local

import "testing"

// TestProgressWaiting: the progress line says what the run waits for.
func TestProgressWaiting(t *testing.T) {
	line := ProgressLine(Progress{Budget: 10, Evaluated: 4, Waiting: "Redis"}, 0)
	if want := "4/10 evaluated · 0 hits · 0 stable · 0 discoveries · 0.0 eval/s · waiting for Redis"; line != want {
		t.Errorf("%q, want %q", line, want)
	}
}
