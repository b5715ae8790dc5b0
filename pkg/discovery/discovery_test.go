package discovery

import (
	"math"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestAUDC(t *testing.T) {
	tests := []struct {
		name    string
		indices []int
		budget  int
		want    float64
	}{
		// N(t) = 0→1, 1, 1→2, 2: trapezoids ½ + 1 + 3/2 + 2 = 5 over 4²/2 = 8.
		{"hand-computed curve", []int{1, 3}, 4, 5.0 / 8},
		// N(t) = 0, 0, 0, 0→1: one half-unit triangle.
		{"one discovery at the last query", []int{4}, 4, 0.5 / 8},
		// N(t) = t: the ideal curve, area B²/2.
		{"every query a discovery", []int{1, 2, 3, 4}, 4, 1},
		{"every query a discovery, B = 40", seq(40), 40, 1},
		{"one discovery first, B = 40", []int{1}, 40, 39.5 / 800},
		{"one discovery last, B = 40", []int{40}, 40, 0.5 / 800},
		// MADE's B = 40 with discoveries at 5, 10, 20: 35.5 + 30.5 + 20.5 = 86.5.
		{"MADE budget", []int{5, 10, 20}, 40, 86.5 / 800},
		{"order does not matter", []int{3, 1}, 4, 5.0 / 8},
		{"indices outside [1, B] are ignored", []int{0, -2, 5, 3}, 4, 1.5 / 8},
		{"repeats are ignored", []int{1, 1, 3, 3}, 4, 5.0 / 8},
		{"no discoveries", nil, 40, 0},
		{"no budget", []int{1}, 0, 0},
	}
	for _, tc := range tests {
		if got := AUDC(tc.indices, tc.budget); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: AUDC(%v, %d) = %v, want %v", tc.name, tc.indices, tc.budget, got, tc.want)
		}
	}
	// Earlier is better: the same count found sooner scores higher.
	if AUDC([]int{1, 2}, 10) <= AUDC([]int{9, 10}, 10) {
		t.Error("AUDC does not reward early discoveries")
	}
	// Never above 1, whatever the indices.
	if a := AUDC(append(seq(300), seq(300)...), 300); a > 1 {
		t.Errorf("AUDC %v above 1", a)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestEpisodes(t *testing.T) {
	// Budgets 4, 4, 2 over 10 queries; discoveries at 1, 3 (episode 0),
	// 8 (episode 1: local index 4), 9, 10 (episode 2: 1, 2).
	ys := Episodes([]int{1, 3, 8, 9, 10}, []int{4, 4, 2}, 10)
	want := []EpisodeYield{
		{Episode: 0, Budget: 4, Evaluated: 4, NStable: 2, AUDC: 5.0 / 8, SDE: 0.5},
		{Episode: 1, Budget: 4, Evaluated: 4, NStable: 1, AUDC: 0.5 / 8, SDE: 0.25},
		{Episode: 2, Budget: 2, Evaluated: 2, NStable: 2, AUDC: 1, SDE: 1},
	}
	if len(ys) != len(want) {
		t.Fatalf("got %d episodes", len(ys))
	}
	for i := range ys {
		if ys[i] != want[i] {
			t.Errorf("episode %d: %+v, want %+v", i, ys[i], want[i])
		}
	}
	// A campaign that stopped early: the last episode spent less.
	if ys := Episodes(nil, []int{4, 4}, 5); ys[0].Evaluated != 4 || ys[1].Evaluated != 1 {
		t.Errorf("short campaign: %+v", ys)
	}
}

func TestSlope(t *testing.T) {
	tests := []struct {
		ys   []float64
		want float64
		ok   bool
	}{
		{[]float64{1, 3, 5}, 2, true},
		{[]float64{4, 4, 4, 4}, 0, true},
		{[]float64{3, 1}, -2, true},
		// Least squares through (0,1), (1,2), (2,1), (3,4): slope 0.8.
		{[]float64{1, 2, 1, 4}, 0.8, true},
		{[]float64{7}, 0, false},
		{nil, 0, false},
	}
	for _, tc := range tests {
		got, ok := Slope(tc.ys)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Slope(%v) = %v, %v; want %v, %v", tc.ys, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSDE(t *testing.T) {
	tests := []struct {
		n, b int
		want float64
	}{{14, 40, 0.35}, {0, 40, 0}, {40, 40, 1}, {3, 0, 0}, {-1, 10, 0}}
	for _, tc := range tests {
		if got := SDE(tc.n, tc.b); got != tc.want {
			t.Errorf("SDE(%d, %d) = %v, want %v", tc.n, tc.b, got, tc.want)
		}
	}
}

func TestEpisode(t *testing.T) {
	comps := []CompositionStat{{Formula: "ZnO", Queries: 3, Stable: 1, Hits: 2}, {Formula: "GaN", Queries: 1}, {Formula: "NoQueries"}}
	c := messages.Counters{Evaluated: 8, Valid: 6, Hits: 2, Stable: 2, StableHits: 1, Novel: 5, Known: 2}
	s := Episode(4, 4, c, comps)
	// p = (3/4, 1/4): H = −(0.75 ln 0.75 + 0.25 ln 0.25) / ln 2.
	h := -(0.75*math.Log(0.75) + 0.25*math.Log(0.25)) / math.Log(2)
	want := EpisodeStats{
		Episode: 4, Evaluated: 8, EpisodeEvaluated: 4, Valid: 6, Hits: 2, Stable: 2, StableHits: 1, Novel: 5, Known: 2,
		HitRate: 0.25, StabilityRate: 0.125, MemorizationRate: 0.25, SDE: 0.25,
		UniqueCompositions: 2, Queries: 4, Breadth: 0.5, CompositionEntropy: h, TopShare: 0.75,
		HitCompositions: 1, StableCompositions: 1,
	}
	if math.Abs(s.CompositionEntropy-h) > 1e-12 {
		t.Errorf("entropy %v, want %v", s.CompositionEntropy, h)
	}
	s.CompositionEntropy = h
	if s != want {
		t.Errorf("stats\n%+v\nwant\n%+v", s, want)
	}
	// Equal shares: entropy 1; one composition: 0.
	if e := Episode(0, 0, messages.Counters{}, []CompositionStat{{Formula: "ZnO", Queries: 2}, {Formula: "GaN", Queries: 2}}).CompositionEntropy; math.Abs(e-1) > 1e-12 {
		t.Errorf("equal shares: entropy %v", e)
	}
	if e := Episode(0, 0, messages.Counters{}, []CompositionStat{{Formula: "ZnO", Queries: 5}}).CompositionEntropy; e != 0 {
		t.Errorf("one composition: entropy %v", e)
	}
	if s := Episode(0, 0, messages.Counters{}, nil); s.Breadth != 0 || s.SDE != 0 || s.HitRate != 0 {
		t.Errorf("empty campaign: %+v", s)
	}
	// Negative counts count as zero.
	if s := Episode(1, -3, messages.Counters{Evaluated: -2, Hits: -1}, nil); s.Evaluated != 0 || s.Hits != 0 || s.EpisodeEvaluated != 0 || s.HitRate != 0 {
		t.Errorf("negative counts: %+v", s)
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		n, of int
		want  float64
	}{{1, 4, 0.25}, {0, 4, 0}, {3, 0, 0}, {3, -1, 0}} {
		if got := Rate(tc.n, tc.of); got != tc.want {
			t.Errorf("Rate(%d, %d) = %v, want %v", tc.n, tc.of, got, tc.want)
		}
	}
}
