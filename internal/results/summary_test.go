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
