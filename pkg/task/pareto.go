package task

import (
	"fmt"
	"math"
	"slices"
)

// Dominates reports whether a Pareto-dominates b with every objective
// maximised: a_j ≥ b_j for every j and a_k > b_k for some k. Vectors of
// different lengths do not dominate each other.
func Dominates(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	better := false
	for j := range a {
		if a[j] < b[j] {
			return false
		}
		if a[j] > b[j] {
			better = true
		}
	}
	return better
}

// ParetoFront returns, in increasing order, the indices of the points that
// no other point dominates, every objective maximised (LLEMA §3.2, Pareto
// front analysis; for margins Φ_i, higher is better). Equal points are all
// kept. Every point must have the same number of objectives, none NaN.
//
// Points are visited in decreasing lexicographic order, in which any point
// that dominates p comes before p; p is then on the front iff no point
// already on the front dominates it (a dominated dominator is itself
// dominated by one on the front). Cost O(n log n + n·|front|·d).
func ParetoFront(points [][]float64) ([]int, error) {
	if len(points) == 0 {
		return nil, nil
	}
	d := len(points[0])
	for i, p := range points {
		if len(p) != d {
			return nil, fmt.Errorf("pareto front: point %d has %d objectives, point 0 has %d", i, len(p), d)
		}
		for j, v := range p {
			if math.IsNaN(v) {
				return nil, fmt.Errorf("pareto front: point %d objective %d is NaN", i, j)
			}
		}
	}
	order := make([]int, len(points))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return -slices.Compare(points[a], points[b])
	})
	var front []int
	for _, i := range order {
		dominated := false
		for _, f := range front {
			if Dominates(points[f], points[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	slices.Sort(front)
	return front, nil
}
