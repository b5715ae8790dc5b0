package surrogate

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// synthetic draws n rows of nf uniform features on [0, 1) and y = f(x).
func synthetic(n, nf int, seed uint64, f func(x []float64) float64) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := make([][]float64, n)
	y := make([]float64, n)
	for i := range X {
		X[i] = make([]float64, nf)
		for j := range X[i] {
			X[i][j] = rng.Float64()
		}
		y[i] = f(X[i])
	}
	return X, y
}

// TestFitStep: one split of depth 1 on a step function finds the step.
func TestFitStep(t *testing.T) {
	X, y := synthetic(400, 3, 1, func(x []float64) float64 {
		if x[1] > 0.6 {
			return 2
		}
		return -1
	})
	e, _, err := Fit(X, y, TreeParams{Trees: 1, MaxDepth: 1, LearningRate: 1, Lambda: 1e-9, Subsample: 1, ColSample: 1, MaxBins: 256, ValidFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	root := e.Trees[0][0]
	if root.Feature != 1 || math.Abs(root.Threshold-0.6) > 0.01 {
		t.Fatalf("root splits feature %d at %.4f, want feature 1 at 0.6", root.Feature, root.Threshold)
	}
	for _, c := range []struct{ x, want float64 }{{0.2, -1}, {0.59, -1}, {0.61, 2}, {0.9, 2}} {
		if got := e.Predict([]float64{0.5, c.x, 0.5}); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("f(x1 = %g) = %g, want %g", c.x, got, c.want)
		}
	}
}

// TestFitSmoothFunction: boosting learns an additive smooth function of
// two of five features to a small fraction of its spread, on rows it has
// not seen, and stops early.
func TestFitSmoothFunction(t *testing.T) {
	f := func(x []float64) float64 { return math.Sin(2*math.Pi*x[0]) + 2*x[3]*x[3] }
	X, y := synthetic(1500, 5, 2, f)
	Xt, yt := synthetic(500, 5, 3, f)
	e, info, err := Fit(X, y, TreeParams{Seed: 4, LearningRate: 0.1, Trees: 800})
	if err != nil {
		t.Fatal(err)
	}
	pred := make([]float64, len(yt))
	meanY := mean(y)
	base := make([]float64, len(yt))
	for i := range yt {
		pred[i] = e.Predict(Xt[i])
		base[i] = meanY
	}
	mae, maeMean := MAE(pred, yt), MAE(base, yt)
	t.Logf("held-out MAE %.4f (mean predictor %.4f), %d trees, valid MAE %.4f", mae, maeMean, info.Trees, info.ValidMAE)
	if mae > 0.1*maeMean {
		t.Errorf("held-out MAE %.4f is more than a tenth of the mean predictor's %.4f", mae, maeMean)
	}
	if info.Trees == 0 || info.Trees != len(e.Trees) {
		t.Errorf("%d trees kept, info says %d", len(e.Trees), info.Trees)
	}
}

// TestFitSelectsInformativeFeatures: with every feature available to
// every tree, the first trees split on the two features y depends on.
func TestFitSelectsInformativeFeatures(t *testing.T) {
	X, y := synthetic(1500, 5, 2, func(x []float64) float64 { return math.Sin(2*math.Pi*x[0]) + 2*x[3]*x[3] })
	e, _, err := Fit(X, y, TreeParams{Seed: 4, Trees: 30, ColSample: 1, ValidFraction: -1})
	if err != nil {
		t.Fatal(err)
	}
	used := map[int]int{}
	for _, tr := range e.Trees {
		for _, n := range tr {
			if n.Feature >= 0 {
				used[n.Feature]++
			}
		}
	}
	if informative, other := used[0]+used[3], used[1]+used[2]+used[4]; informative < 9*other {
		t.Errorf("splits per feature %v: features 0 and 3 should dominate", used)
	}
}

// TestFitNoise: on a target independent of the features, early stopping
// keeps few trees and the prediction stays near the mean.
func TestFitNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	X, _ := synthetic(600, 4, 6, func([]float64) float64 { return 0 })
	y := make([]float64, len(X))
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	e, info, err := Fit(X, y, TreeParams{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if info.Trees > 150 {
		t.Errorf("%d trees kept on pure noise", info.Trees)
	}
	if got := e.Predict([]float64{0.5, 0.5, 0.5, 0.5}); math.Abs(got-mean(y)) > 0.3 {
		t.Errorf("prediction %.3f far from the mean %.3f", got, mean(y))
	}
}

func TestFitDeterministic(t *testing.T) {
	X, y := synthetic(300, 4, 8, func(x []float64) float64 { return x[0] - x[2] })
	a, _, _ := Fit(X, y, TreeParams{Seed: 9, Trees: 50})
	b, _, _ := Fit(X, y, TreeParams{Seed: 9, Trees: 50})
	c, _, _ := Fit(X, y, TreeParams{Seed: 10, Trees: 50})
	same := func(p, q *Ensemble) bool {
		return p.Base == q.Base && slices.EqualFunc(p.Trees, q.Trees, func(s, u Tree) bool { return slices.Equal(s, u) })
	}
	if !same(a, b) {
		t.Error("two fits with one seed differ")
	}
	if same(a, c) {
		t.Error("fits with different seeds are identical")
	}
}

func TestFitErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		X    [][]float64
		y    []float64
	}{
		{"no rows", nil, nil},
		{"length mismatch", [][]float64{{1}, {2}}, []float64{1}},
		{"ragged", [][]float64{{1, 2}, {2}}, []float64{1, 2}},
		{"NaN feature", [][]float64{{math.NaN()}, {2}}, []float64{1, 2}},
		{"infinite target", [][]float64{{1}, {2}}, []float64{1, math.Inf(1)}},
		{"too few to hold out", [][]float64{{1}, {2}, {3}}, []float64{1, 2, 3}},
	} {
		if _, _, err := Fit(c.X, c.y, TreeParams{}); !errors.Is(err, ErrFit) {
			t.Errorf("%s: err = %v, want ErrFit", c.name, err)
		}
	}
}

func TestBinEdges(t *testing.T) {
	X := [][]float64{{3}, {1}, {2}, {2}, {5}}
	got := binEdges(X, 64)[0]
	if want := []float64{1.5, 2.5, 4}; !slices.Equal(got, want) {
		t.Errorf("edges %v, want %v", got, want)
	}
	// More distinct values than bins: quantile edges, strictly increasing.
	X, _ = synthetic(1000, 1, 11, func([]float64) float64 { return 0 })
	e := binEdges(X, 16)[0]
	if len(e) != 15 {
		t.Errorf("%d edges for 16 bins", len(e))
	}
	if !slices.IsSorted(e) || len(slices.Compact(slices.Clone(e))) != len(e) {
		t.Errorf("edges not strictly increasing: %v", e)
	}
	// A constant feature has no split.
	if e := binEdges([][]float64{{7}, {7}}, 64)[0]; len(e) != 0 {
		t.Errorf("constant feature edges %v", e)
	}
	// Adjacent floats: the midpoint is the lower one, so a ≤ m < b.
	a := 1.0
	b := math.Nextafter(a, 2)
	if m := midpoint(a, b); !(m >= a && m < b) {
		t.Errorf("midpoint(%v, %v) = %v", a, b, m)
	}
}
