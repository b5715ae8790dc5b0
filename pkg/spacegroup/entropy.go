package spacegroup

import "math"

// Entropy returns the Shannon entropy, in nats, of the distribution of
// space-group numbers over a set of structures: −Σ p_g ln p_g with p_g the
// fraction of structures in group g. MADE reports this "spacegroup entropy"
// of the known set as a measure of structural exploration (more distinct
// groups, more evenly used, is higher); the paper does not state the
// logarithm's base, so natural logarithms are used (divide by ln 2 for
// bits). Numbers outside 1–230 (structures without a detected group) are
// ignored; an empty set has entropy 0.
func Entropy(numbers []int) float64 {
	count := map[int]int{}
	n := 0
	for _, g := range numbers {
		if g >= 1 && g <= 230 {
			count[g]++
			n++
		}
	}
	h := 0.0
	for _, c := range count {
		p := float64(c) / float64(n)
		h -= p * math.Log(p)
	}
	return h
}
