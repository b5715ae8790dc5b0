package results

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestParetoFormulas(t *testing.T) {
	front := []messages.ParetoPoint{{Formula: "NaLiF2"}, {Formula: "KMgF3"}, {Formula: "NaLiF2"}, {Formula: "BaF2"}}
	if got, want := paretoFormulas(front), "BaF2, KMgF3, NaLiF2 ×2"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestProgressWaiting: the progress line says what the run waits for.
func TestProgressWaiting(t *testing.T) {
	line := ProgressLine(Progress{Budget: 10, Evaluated: 4, Waiting: "Redis"}, 0)
	if want := "4/10 evaluated · 0 hits · 0 stable · 0 discoveries · 0.0 eval/s · waiting for Redis"; line != want {
		t.Errorf("%q, want %q", line, want)
	}
}
