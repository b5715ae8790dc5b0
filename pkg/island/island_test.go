package island

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestTemperature(t *testing.T) {
	for _, tc := range []struct {
		u    int
		want float64
	}{{0, 0.1}, {5000, 0.05}, {9999, 0.1 * 1e-4}, {10000, 0.1}, {-3, 0.1}} {
		if got := Temperature(tc.u); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("Temperature(%d) = %v, want %v", tc.u, got, tc.want)
		}
	}
}

func TestProbabilities(t *testing.T) {
	p := Probabilities([]float64{0, math.Log(3) * 0.1}, 0.1)
	if math.Abs(p[0]-0.25) > 1e-12 || math.Abs(p[1]-0.75) > 1e-12 {
		t.Errorf("got %v, want [0.25 0.75]", p)
	}
	// Extreme scores do not overflow.
	p = Probabilities([]float64{1000, -1000}, 1e-4)
	if p[0] != 1 || p[1] != 0 {
		t.Errorf("got %v", p)
	}
	p = Probabilities([]float64{0.3, 0.3, 0.1}, 0)
	if p[0] != 0.5 || p[1] != 0.5 || p[2] != 0 {
		t.Errorf("zero temperature: %v", p)
	}
}

func TestSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// Unvisited islands first.
	if i, _ := Select(rng, []float64{0.9, 0, 0}, []int{4, 0, 3}, 7); i != 1 {
		t.Errorf("chose %d, want the unvisited island 1", i)
	}
	// Frequencies follow the Boltzmann probabilities.
	scores := []float64{0.1, 0.2, 0.15}
	counts := []int{10, 10, 10}
	n := 200000
	hist := make([]int, 3)
	for k := 0; k < n; k++ {
		i, err := Select(rng, scores, counts, 0)
		if err != nil {
			t.Fatal(err)
		}
		hist[i]++
	}
	p := Probabilities(scores, Temperature(0))
	for i := range p {
		if got := float64(hist[i]) / float64(n); math.Abs(got-p[i]) > 0.005 {
			t.Errorf("island %d chosen %.4f of the time, want %.4f", i, got, p[i])
		}
	}
	if _, err := Select(rng, nil, nil, 0); err == nil {
		t.Error("no error without islands")
	}
}
