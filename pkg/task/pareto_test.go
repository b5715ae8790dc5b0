package task

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDominates(t *testing.T) {
	tests := []struct {
		a, b []float64
		want bool
	}{
		{[]float64{1, 1}, []float64{0, 0}, true},
		{[]float64{1, 0}, []float64{0, 0}, true},
		{[]float64{1, 1}, []float64{1, 1}, false},
		{[]float64{1, 0}, []float64{0, 1}, false},
		{[]float64{0, 0}, []float64{1, 1}, false},
		{[]float64{1, 1}, []float64{0}, false},
		{nil, nil, false},
	}
	for _, tt := range tests {
		if got := Dominates(tt.a, tt.b); got != tt.want {
			t.Errorf("Dominates(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParetoFront(t *testing.T) {
	tests := []struct {
		name   string
		points [][]float64
		want   []int
	}{
		{"empty", nil, nil},
		{"single", [][]float64{{0.1, 0.2}}, []int{0}},
		{"trade-off", [][]float64{{1, 0}, {0, 1}, {0.5, 0.5}, {0.4, 0.4}, {-1, -1}}, []int{0, 1, 2}},
		{"duplicates kept", [][]float64{{0.5, 0.5}, {0.5, 0.5}, {0.1, 0.1}}, []int{0, 1}},
		{"weak domination", [][]float64{{1, 0.5}, {1, 0.2}}, []int{0}},
		{"one objective", [][]float64{{0.3}, {0.9}, {0.9}, {-1}}, []int{1, 2}},
		{"three objectives", [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 0}, {0.2, 0.2, 0.2}}, []int{0, 1, 2, 4}},
		{"infinities", [][]float64{{math.Inf(1), -1}, {0, math.Inf(-1)}, {0, 0}}, []int{0, 2}},
	}
	for _, tt := range tests {
		got, err := ParetoFront(tt.points)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: ParetoFront = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParetoFrontErrors(t *testing.T) {
	if _, err := ParetoFront([][]float64{{1, 2}, {1}}); err == nil {
		t.Error("ragged points: want an error")
	}
	if _, err := ParetoFront([][]float64{{1, math.NaN()}}); err == nil {
		t.Error("NaN objective: want an error")
	}
}

// TestParetoFrontMatchesDefinition compares the sweep with the definition
// (no other point dominates) on random points, with ties from a coarse
// grid.
func TestParetoFrontMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n, d := 1+rng.IntN(40), 1+rng.IntN(4)
		points := make([][]float64, n)
		for i := range points {
			points[i] = make([]float64, d)
			for j := range points[i] {
				points[i][j] = float64(rng.IntN(5)) / 4
			}
		}
		var want []int
		for i := range points {
			dominated := false
			for j := range points {
				if Dominates(points[j], points[i]) {
					dominated = true
					break
				}
			}
			if !dominated {
				want = append(want, i)
			}
		}
		got, err := ParetoFront(points)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: ParetoFront(%v) = %v, want %v", trial, points, got, want)
		}
	}
}
