package spacegroup

import (
	"math"
	"strconv"
)

// Name names a space group: its ITA number (1–230) and short international
// symbol, as Dataset gives them. It is how a structure's space group is
// recorded beside it (evaluations, discoveries, "crucible validate" and
// "crucible predict" with --json: space_group {number, symbol}).
type Name struct {
	Number int    `json:"number"`
	Symbol string `json:"symbol"`
}

// Name is the dataset's space group.
func (d *Dataset) Name() Name { return Name{Number: d.Number, Symbol: d.Symbol} }

// String is "Fm-3m (225)".
func (n Name) String() string { return n.Symbol + " (" + strconv.Itoa(n.Number) + ")" }

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
	for _, g := range numbers {
		count[g]++
	}
	return EntropyOfCounts(count)
}

// EntropyOfCounts is Entropy of a set given as the number of its structures
// in each space group (by ITA number); groups outside 1–230 and counts
// below 1 are ignored. The terms are summed in group order, so equal
// counts give the same bits however the map was built.
func EntropyOfCounts(count map[int]int) float64 {
	n := 0
	for g, c := range count {
		if g >= 1 && g <= 230 && c > 0 {
			n += c
		}
	}
	h := 0.0
	for g := 1; g <= 230; g++ {
		if c := count[g]; c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log(p)
		}
	}
	return h
}
