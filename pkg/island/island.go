// Package island holds the maths of LLEMA's multi-island evolution: which
// island a generation draws its demonstrations and parents from.
package island

import (
	"errors"
	"math"
	"math/rand/v2"
)

// LLEMA App. D.2 hyperparameters of the island temperature schedule.
const (
	T0 = 0.1
	M  = 10000
)

// Temperature is LLEMA's τ_c = T0·(1 − (u mod M)/M) (App. D.2), where u is
// the number of candidates evaluated so far. LLEMA's text says "on the
// island"; the choice here is over islands, so u counts the population the
// choice is made over (as in FunSearch's cluster sampling, which the
// formula comes from). τ falls from T0 towards 0 as the search proceeds,
// so the choice turns from exploring to exploiting, and restarts every M
// candidates.
func Temperature(u int) float64 {
	if u < 0 {
		u = 0
	}
	return T0 * (1 - float64(u%M)/M)
}

// Probabilities returns P_i = exp(s_i/τ) / Σ_j exp(s_j/τ) over the islands'
// mean scores s_i (LLEMA §2.4), computed stably (shifted by the maximum).
// A τ of 0 (or below) puts all the probability on the best islands.
func Probabilities(scores []float64, tau float64) []float64 {
	p := make([]float64, len(scores))
	if len(scores) == 0 {
		return p
	}
	best := math.Inf(-1)
	for _, s := range scores {
		best = math.Max(best, s)
	}
	sum := 0.0
	for i, s := range scores {
		switch {
		case tau <= 0 && s == best:
			p[i] = 1
		case tau <= 0:
			p[i] = 0
		default:
			p[i] = math.Exp((s - best) / tau)
		}
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// ErrNoIslands is returned when there is nothing to choose from.
var ErrNoIslands = errors.New("no islands")

// Select draws an island by Boltzmann sampling over the mean scores at the
// temperature for u evaluated candidates. Islands that have not been
// evaluated yet (counts[i] == 0) are chosen first, lowest index first, so
// every island is explored before the scores take over.
func Select(rng *rand.Rand, scores []float64, counts []int, u int) (int, error) {
	if len(scores) == 0 || len(scores) != len(counts) {
		return 0, ErrNoIslands
	}
	for i, n := range counts {
		if n == 0 {
			return i, nil
		}
	}
	p := Probabilities(scores, Temperature(u))
	x := rng.Float64()
	for i, pi := range p {
		if x < pi {
			return i, nil
		}
		x -= pi
	}
	return len(p) - 1, nil
}
