package surrogate

import (
	"math"
	"slices"
	"testing"
)

func TestRanks(t *testing.T) {
	got := Ranks([]float64{10, 20, 10, 30, 20, 20})
	want := []float64{1.5, 4, 1.5, 6, 4, 4}
	if !slices.Equal(got, want) {
		t.Errorf("Ranks = %v, want %v", got, want)
	}
}

func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{"monotone", []float64{1, 2, 3, 4, 5}, []float64{1, 8, 27, 64, 125}, 1},
		{"reversed", []float64{1, 2, 3, 4, 5}, []float64{5, 4, 3, 2, 1}, -1},
		// 1 − 6Σd²/(n(n²−1)) with d = (0, 0, 1, −1, 0): 1 − 12/120.
		{"one swap", []float64{1, 2, 3, 4, 5}, []float64{1, 2, 4, 3, 5}, 0.9},
		// Ranks of b with the tie averaged: 1, 4, 2.5, 2.5, 6, 5; Pearson
		// with 1…6: Σ dₐd_b = 13, Σ dₐ² = 17.5, Σ d_b² = 17.
		{"ties", []float64{1, 2, 3, 4, 5, 6}, []float64{1, 3, 2, 2, 5, 4}, 13 / math.Sqrt(17.5*17)},
	} {
		if got := Spearman(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: ρ = %.15g, want %.15g", c.name, got, c.want)
		}
	}
	if got := Spearman([]float64{1, 2, 3}, []float64{4, 4, 4}); !math.IsNaN(got) {
		t.Errorf("ρ with a constant = %v, want NaN", got)
	}
}

// TestQuantile checks definition 7 against numpy.quantile's default.
func TestQuantile(t *testing.T) {
	v := []float64{7, 1, 3, 15, 9}
	for _, c := range []struct{ q, want float64 }{
		{0, 1}, {0.25, 3}, {0.5, 7}, {0.68, 8.44}, {0.95, 13.8}, {1, 15},
	} {
		if got := Quantile(v, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%g) = %v, want %v", c.q, got, c.want)
		}
	}
}

func TestScoreLog(t *testing.T) {
	y := []float64{1, 10, 100}
	pred := []float64{0, 2, 2} // log10: exact, +1 decade, exact
	m := ScoreLog(pred, y)
	if m.N != 3 || math.Abs(m.MAELog10-1.0/3) > 1e-12 || math.Abs(m.MAE-30) > 1e-9 {
		t.Errorf("ScoreLog = %+v, want MAE log10 1/3 and MAE 30", m)
	}
	if m.Spearman == nil || math.Abs(*m.Spearman-0.8660254037844387) > 1e-12 {
		t.Errorf("ρ = %v, want √3/2 (one tie in the predictions)", m.Spearman)
	}
}
