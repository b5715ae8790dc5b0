package surrogate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Folds assigns each of n samples to one of k folds, reproducibly from
// seed. Without groups the samples are shuffled and dealt round-robin
// (fold sizes differ by at most one). With groups (one key per sample)
// every group lands in one fold: groups are shuffled, then placed largest
// first into the fold with the fewest samples so far, which balances the
// folds (a group larger than n/k makes its fold larger).
func Folds(n, k int, seed uint64, groups []string) ([]int, error) {
	if k < 2 || k > n {
		return nil, fmt.Errorf("%d folds for %d samples", k, n)
	}
	if groups != nil && len(groups) != n {
		return nil, fmt.Errorf("%d group keys for %d samples", len(groups), n)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	fold := make([]int, n)
	if groups == nil {
		for i, s := range rng.Perm(n) {
			fold[s] = i % k
		}
		return fold, nil
	}
	members := map[string][]int{}
	var keys []string
	for i, g := range groups {
		if members[g] == nil {
			keys = append(keys, g)
		}
		members[g] = append(members[g], i)
	}
	if len(keys) < k {
		return nil, fmt.Errorf("%d groups for %d folds", len(keys), k)
	}
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	slices.SortStableFunc(keys, func(a, b string) int { return len(members[b]) - len(members[a]) })
	size := make([]int, k)
	for _, g := range keys {
		f := 0
		for j := 1; j < k; j++ {
			if size[j] < size[f] {
				f = j
			}
		}
		for _, i := range members[g] {
			fold[i] = f
		}
		size[f] += len(members[g])
	}
	return fold, nil
}

// Learner fits a predictor on training rows X and targets y.
type Learner func(X [][]float64, y []float64, seed uint64) (func(x []float64) float64, error)

// MeanLearner is the mean predictor: it predicts the mean of the training
// targets everywhere.
func MeanLearner(_ [][]float64, y []float64, _ uint64) (func([]float64) float64, error) {
	m := 0.0
	for _, v := range y {
		m += v
	}
	m /= float64(len(y))
	return func([]float64) float64 { return m }, nil
}

// TreeLearner is gradient boosting with the given parameters (the seed of
// each fit replaces p.Seed).
func TreeLearner(p TreeParams) Learner {
	return func(X [][]float64, y []float64, seed uint64) (func([]float64) float64, error) {
		p.Seed = seed
		e, _, err := Fit(X, y, p)
		if err != nil {
			return nil, err
		}
		return e.Predict, nil
	}
}

// CrossValidate returns the out-of-fold predictions of learn: for each
// fold, fitted on the other folds' rows (with seed + fold) and evaluated
// on the fold's.
func CrossValidate(X [][]float64, y []float64, fold []int, learn Learner, seed uint64) ([]float64, error) {
	k := slices.Max(fold) + 1
	pred := make([]float64, len(y))
	for f := 0; f < k; f++ {
		var tx [][]float64
		var ty []float64
		var test []int
		for i := range y {
			if fold[i] == f {
				test = append(test, i)
			} else {
				tx = append(tx, X[i])
				ty = append(ty, y[i])
			}
		}
		predict, err := learn(tx, ty, seed+uint64(f))
		if err != nil {
			return nil, fmt.Errorf("fold %d: %w", f, err)
		}
		for _, i := range test {
			pred[i] = predict(X[i])
		}
	}
	return pred, nil
}

// Metrics summarise predictions of a log10-transformed target against the
// truth.
type Metrics struct {
	N int `json:"n"`
	// MAE in the property's unit: mean |10^ŷ − y|.
	MAE float64 `json:"mae"`
	// MAELog10 is the mean |ŷ − log10 y|, in decades.
	MAELog10 float64 `json:"mae_log10"`
	// Spearman's ρ of predictions and truth; null for a constant
	// predictor.
	Spearman *float64 `json:"spearman"`
	// AbsErr68 and AbsErr95 are the 68 % and 95 % quantiles of |10^ŷ − y|
	// (property's unit); AbsErrLog68 and AbsErrLog95 those of |ŷ − log10 y|.
	AbsErr68    float64 `json:"abs_err_68"`
	AbsErr95    float64 `json:"abs_err_95"`
	AbsErrLog68 float64 `json:"abs_err_log10_68"`
	AbsErrLog95 float64 `json:"abs_err_log10_95"`
	// MedianTarget is the median of the truth, for scale.
	MedianTarget float64 `json:"median_target"`
}

// ScoreLog computes Metrics of predictions predLog (log10 of the property)
// for true values y (in the property's unit).
func ScoreLog(predLog, y []float64) Metrics {
	n := len(y)
	abs := make([]float64, n)
	absLog := make([]float64, n)
	nat := make([]float64, n)
	for i := range y {
		nat[i] = math.Pow(10, predLog[i])
		abs[i] = math.Abs(nat[i] - y[i])
		absLog[i] = math.Abs(predLog[i] - math.Log10(y[i]))
	}
	m := Metrics{
		N: n, MAE: mean(abs), MAELog10: mean(absLog),
		AbsErr68: Quantile(abs, 0.68), AbsErr95: Quantile(abs, 0.95),
		AbsErrLog68: Quantile(absLog, 0.68), AbsErrLog95: Quantile(absLog, 0.95),
		MedianTarget: Quantile(y, 0.5),
	}
	if rho := Spearman(predLog, y); !math.IsNaN(rho) {
		m.Spearman = &rho
	}
	return m
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
