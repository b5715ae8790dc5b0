package surrogate

import (
	"math"
	"slices"
	"sort"
)

// MAE is the mean absolute difference of a and b.
func MAE(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += math.Abs(a[i] - b[i])
	}
	return s / float64(len(a))
}

// Ranks returns the ranks 1…n of v, ties sharing the mean of their ranks
// (fractional ranking).
func Ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
		}
		i = j + 1
	}
	return r
}

// Pearson is the correlation coefficient of a and b; NaN when either is
// constant.
func Pearson(a, b []float64) float64 {
	n := float64(len(a))
	var ma, mb float64
	for i := range a {
		ma += a[i]
		mb += b[i]
	}
	ma /= n
	mb /= n
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-ma, b[i]-mb
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

// Spearman is Spearman's rank correlation ρ of a and b: the Pearson
// correlation of their fractional ranks (ties averaged). NaN when either
// is constant, as for a constant predictor.
func Spearman(a, b []float64) float64 { return Pearson(Ranks(a), Ranks(b)) }

// Quantile is the q-quantile of v by linear interpolation between order
// statistics (Hyndman & Fan, Am. Stat. 50, 361 (1996), definition 7, R's
// and numpy's default).
func Quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
