package reflection

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestReflectStats: the output's statistics are discovery.Episode of the
// input after cleaning: duplicate formulas summed, compositions without
// queries dropped.
func TestReflectStats(t *testing.T) {
	in := input(stat("ZnO", 2, 1, 1), stat("GaN", 1, 0, 0), stat("ZnO", 1, 0, 1), stat("AlN", 0, 0, 0))
	in.Episode = 4
	in.Counters = messages.Counters{Evaluated: 8, Valid: 6, Hits: 2, Stable: 2, StableHits: 1, Novel: 5, Known: 2}
	in.EpisodeEvaluated = 4
	want := discovery.Episode(4, 4, in.Counters, []discovery.CompositionStat{stat("GaN", 1, 0, 0), stat("ZnO", 3, 1, 2)})
	if got := Reflect(in).Stats; got != want {
		t.Errorf("stats\n%+v\nwant\n%+v", got, want)
	}
}
