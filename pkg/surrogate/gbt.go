package surrogate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// TreeParams configure gradient boosting (Friedman, "Greedy function
// approximation: a gradient boosting machine", Ann. Stat. 29, 1189 (2001);
// stochastic variant, Comput. Stat. Data Anal. 38, 367 (2002)) of
// regression trees under squared loss, with histogram splits as in
// LightGBM (Ke et al., NeurIPS 2017) and the L2-regularised leaf values of
// XGBoost (Chen & Guestrin, KDD 2016, eqs. 5–7). The zero value of a field
// means its default.
type TreeParams struct {
	// Trees is the most trees grown (default 2000).
	Trees int `json:"trees"`
	// LearningRate is the shrinkage ν of each tree (default 0.03).
	LearningRate float64 `json:"learning_rate"`
	// MaxDepth bounds the depth of a tree (default 5).
	MaxDepth int `json:"max_depth"`
	// MinLeaf is the fewest training rows in a leaf (default 5).
	MinLeaf int `json:"min_leaf"`
	// Lambda is the L2 penalty on leaf values: a leaf predicts
	// Σ residuals / (n + λ) (default 1).
	Lambda float64 `json:"lambda"`
	// Subsample is the fraction of training rows each tree sees, drawn
	// without replacement (default 0.8).
	Subsample float64 `json:"subsample"`
	// ColSample is the fraction of features each tree may split on
	// (default 0.5).
	ColSample float64 `json:"colsample"`
	// MaxBins bounds the histogram bins of a feature (default 64, at most
	// 256): split candidates are the midpoints between distinct values, or
	// between quantiles when there are more distinct values than bins.
	MaxBins int `json:"max_bins"`
	// ValidFraction of the rows is held out to choose the number of trees
	// (early stopping on the held-out mean absolute error; default 0.15).
	// Negative: no early stopping, all Trees are kept.
	ValidFraction float64 `json:"valid_fraction"`
	// Patience is how many trees without improvement of the held-out
	// error stop the boosting (default 200).
	Patience int `json:"patience"`
	// Seed makes the row and column draws reproducible.
	Seed uint64 `json:"seed"`
}

func (p TreeParams) withDefaults() TreeParams {
	if p.Trees <= 0 {
		p.Trees = 2000
	}
	if p.LearningRate <= 0 {
		p.LearningRate = 0.03
	}
	if p.MaxDepth <= 0 {
		p.MaxDepth = 5
	}
	if p.MinLeaf <= 0 {
		p.MinLeaf = 5
	}
	if p.Lambda <= 0 {
		p.Lambda = 1
	}
	if p.Subsample <= 0 || p.Subsample > 1 {
		p.Subsample = 0.8
	}
	if p.ColSample <= 0 || p.ColSample > 1 {
		p.ColSample = 0.5
	}
	if p.MaxBins <= 1 || p.MaxBins > 256 {
		p.MaxBins = 64
	}
	if p.ValidFraction == 0 {
		p.ValidFraction = 0.15
	}
	if p.Patience <= 0 {
		p.Patience = 200
	}
	return p
}

// Node is a node of a regression tree: a leaf when Feature < 0, else rows
// with x[Feature] ≤ Threshold go Left and the others Right.
type Node struct {
	Feature   int     `json:"f"`
	Threshold float64 `json:"t,omitempty"`
	Left      int     `json:"l,omitempty"`
	Right     int     `json:"r,omitempty"`
	// Value is the leaf's contribution, shrinkage included.
	Value float64 `json:"v,omitempty"`
}

// Tree is a regression tree; node 0 is the root.
type Tree []Node

// Eval returns the tree's value at x.
func (t Tree) Eval(x []float64) float64 {
	i := 0
	for t[i].Feature >= 0 {
		if x[t[i].Feature] <= t[i].Threshold {
			i = t[i].Left
		} else {
			i = t[i].Right
		}
	}
	return t[i].Value
}

// Ensemble is a boosted sum of trees: Base + Σ Trees(x).
type Ensemble struct {
	Features int     `json:"features"`
	Base     float64 `json:"base"`
	Trees    []Tree  `json:"trees"`
}

// Predict returns the ensemble's value at x, which must have Features
// entries.
func (e *Ensemble) Predict(x []float64) float64 {
	y := e.Base
	for _, t := range e.Trees {
		y += t.Eval(x)
	}
	return y
}

// FitInfo reports how a fit went.
type FitInfo struct {
	// Trees kept (the best iteration under early stopping).
	Trees int
	// ValidMAE is the held-out mean absolute error at that iteration
	// (NaN without early stopping).
	ValidMAE float64
}

// ErrFit reports data a fit cannot use.
var ErrFit = errors.New("cannot fit")

// Fit boosts regression trees on rows X (all of one length) and targets y
// under squared loss: each tree is fitted to the residuals of the ones
// before it on a subsample of the rows and a subset of the features, and
// added with shrinkage. With early stopping a random ValidFraction of the
// rows is held out and the ensemble is cut at the tree count with the
// lowest held-out mean absolute error.
func Fit(X [][]float64, y []float64, p TreeParams) (*Ensemble, FitInfo, error) {
	p = p.withDefaults()
	n := len(X)
	if n == 0 || len(y) != n {
		return nil, FitInfo{}, fmt.Errorf("%w: %d rows, %d targets", ErrFit, n, len(y))
	}
	nf := len(X[0])
	for i, row := range X {
		if len(row) != nf {
			return nil, FitInfo{}, fmt.Errorf("%w: row %d has %d features, row 0 %d", ErrFit, i, len(row), nf)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, FitInfo{}, fmt.Errorf("%w: row %d feature %d is %v", ErrFit, i, j, v)
			}
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, FitInfo{}, fmt.Errorf("%w: target %d is %v", ErrFit, i, y[i])
		}
	}
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))

	// Split off the early-stopping rows.
	order := rng.Perm(n)
	var train, valid []int
	if p.ValidFraction > 0 {
		nv := int(math.Round(p.ValidFraction * float64(n)))
		if nv < 1 || n-nv < 2*p.MinLeaf {
			return nil, FitInfo{}, fmt.Errorf("%w: %d rows are too few to hold out %g for early stopping", ErrFit, n, p.ValidFraction)
		}
		valid, train = order[:nv], order[nv:]
		slices.Sort(valid)
		slices.Sort(train)
	} else {
		train = order
		slices.Sort(train)
	}

	trainX := make([][]float64, len(train))
	for i, r := range train {
		trainX[i] = X[r]
	}
	edges := binEdges(trainX, p.MaxBins)
	bins := binRows(X, edges) // all rows, so held-out rows walk the same splits

	base := 0.0
	for _, r := range train {
		base += y[r]
	}
	base /= float64(len(train))
	ens := &Ensemble{Features: nf, Base: base}
	pred := make([]float64, n)
	for i := range pred {
		pred[i] = base
	}
	resid := make([]float64, n)

	g := grower{p: p, edges: edges, bins: bins, resid: resid}
	nSub := max(2*p.MinLeaf, int(math.Round(p.Subsample*float64(len(train)))))
	nSub = min(nSub, len(train))
	nCol := max(1, int(math.Ceil(p.ColSample*float64(nf))))
	rows := slices.Clone(train)
	cols := make([]int, nf)
	for j := range cols {
		cols[j] = j
	}

	best, bestMAE, since := 0, math.Inf(1), 0
	if len(valid) > 0 {
		bestMAE = maeAt(pred, y, valid)
	}
	for t := 0; t < p.Trees; t++ {
		for _, r := range train {
			resid[r] = y[r] - pred[r]
		}
		partialShuffle(rng, rows, nSub)
		partialShuffle(rng, cols, nCol)
		sub := slices.Clone(rows[:nSub])
		slices.Sort(sub)
		g.cols = slices.Clone(cols[:nCol])
		slices.Sort(g.cols)
		tree, splitBins := g.grow(sub)
		ens.Trees = append(ens.Trees, tree)
		for i := range pred {
			pred[i] += evalBinned(tree, splitBins, bins[i])
		}
		if len(valid) == 0 {
			continue
		}
		if m := maeAt(pred, y, valid); m < bestMAE-1e-12 {
			best, bestMAE, since = t+1, m, 0
		} else if since++; since >= p.Patience {
			break
		}
	}
	if len(valid) == 0 {
		return ens, FitInfo{Trees: len(ens.Trees), ValidMAE: math.NaN()}, nil
	}
	ens.Trees = ens.Trees[:best]
	return ens, FitInfo{Trees: best, ValidMAE: bestMAE}, nil
}

// partialShuffle puts a uniform random choice of k elements of s, in random
// order, in s[:k] (the first k steps of a Fisher–Yates shuffle).
func partialShuffle(rng *rand.Rand, s []int, k int) {
	for i := 0; i < k && i < len(s)-1; i++ {
		j := i + rng.IntN(len(s)-i)
		s[i], s[j] = s[j], s[i]
	}
}

func maeAt(pred, y []float64, rows []int) float64 {
	s := 0.0
	for _, r := range rows {
		s += math.Abs(pred[r] - y[r])
	}
	return s / float64(len(rows))
}

// binEdges returns per feature the split thresholds: midpoints between
// consecutive distinct values, or, with more than maxBins distinct values,
// between the values at the maxBins-quantiles and the next larger value.
func binEdges(X [][]float64, maxBins int) [][]float64 {
	nf := len(X[0])
	edges := make([][]float64, nf)
	col := make([]float64, len(X))
	for j := 0; j < nf; j++ {
		for i, row := range X {
			col[i] = row[j]
		}
		slices.Sort(col)
		uniq := slices.Compact(slices.Clone(col))
		var e []float64
		if len(uniq) <= maxBins {
			for k := 0; k+1 < len(uniq); k++ {
				e = append(e, midpoint(uniq[k], uniq[k+1]))
			}
		} else {
			for k := 1; k < maxBins; k++ {
				v := col[k*len(col)/maxBins]
				// The next distinct value above v.
				u := sort.SearchFloat64s(uniq, v)
				if u+1 < len(uniq) {
					m := midpoint(uniq[u], uniq[u+1])
					if len(e) == 0 || m > e[len(e)-1] {
						e = append(e, m)
					}
				}
			}
		}
		edges[j] = e
	}
	return edges
}

// midpoint is (a+b)/2, but never equal to b, so that a ≤ m < b even when
// a and b are adjacent floats.
func midpoint(a, b float64) float64 {
	m := a + (b-a)/2
	if m >= b {
		m = a
	}
	return m
}

// binRows maps each value to its bin: bin k holds edges[k−1] < x ≤ edges[k].
func binRows(X [][]float64, edges [][]float64) [][]uint8 {
	out := make([][]uint8, len(X))
	for i, row := range X {
		b := make([]uint8, len(row))
		for j, v := range row {
			b[j] = uint8(sort.SearchFloat64s(edges[j], v))
		}
		out[i] = b
	}
	return out
}

// evalBinned walks a tree with a binned row; splitBins[i] is the bin of
// node i's split: bins ≤ k go left, which is x ≤ edges[k].
func evalBinned(t Tree, splitBins []int, b []uint8) float64 {
	i := 0
	for t[i].Feature >= 0 {
		if int(b[t[i].Feature]) <= splitBins[i] {
			i = t[i].Left
		} else {
			i = t[i].Right
		}
	}
	return t[i].Value
}

// grower grows one tree on binned rows.
type grower struct {
	p     TreeParams
	edges [][]float64
	bins  [][]uint8
	resid []float64
	cols  []int
	tree  Tree
	split []int // bin of each node's split, −1 for leaves
	// one node's histogram, reused
	sum   [256]float64
	count [256]int
}

// grow fits a tree to the residuals of rows and returns it, leaf values
// scaled by the learning rate, with the bins of its splits.
func (g *grower) grow(rows []int) (Tree, []int) {
	g.tree, g.split = g.tree[:0], g.split[:0]
	g.node(rows, 0)
	return slices.Clone(g.tree), slices.Clone(g.split)
}

// node appends the subtree of rows at depth d and returns its index.
func (g *grower) node(rows []int, d int) int {
	idx := len(g.tree)
	g.tree = append(g.tree, Node{Feature: -1})
	g.split = append(g.split, -1)
	total := 0.0
	for _, r := range rows {
		total += g.resid[r]
	}
	lambda := g.p.Lambda
	leaf := func() int {
		g.tree[idx] = Node{Feature: -1, Value: g.p.LearningRate * total / (float64(len(rows)) + lambda)}
		return idx
	}
	if d >= g.p.MaxDepth || len(rows) < 2*g.p.MinLeaf {
		return leaf()
	}
	parent := total * total / (float64(len(rows)) + lambda)
	bestGain, bestF, bestB := 1e-12, -1, -1
	for _, f := range g.cols {
		nb := len(g.edges[f]) + 1
		if nb < 2 {
			continue
		}
		clear(g.sum[:nb])
		clear(g.count[:nb])
		for _, r := range rows {
			b := g.bins[r][f]
			g.sum[b] += g.resid[r]
			g.count[b]++
		}
		sl, nl := 0.0, 0
		for b := 0; b < nb-1; b++ {
			sl += g.sum[b]
			nl += g.count[b]
			nr := len(rows) - nl
			if nl < g.p.MinLeaf {
				continue
			}
			if nr < g.p.MinLeaf {
				break
			}
			sr := total - sl
			gain := sl*sl/(float64(nl)+lambda) + sr*sr/(float64(nr)+lambda) - parent
			if gain > bestGain {
				bestGain, bestF, bestB = gain, f, b
			}
		}
	}
	if bestF < 0 {
		return leaf()
	}
	var left, right []int
	for _, r := range rows {
		if int(g.bins[r][bestF]) <= bestB {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	l := g.node(left, d+1)
	r := g.node(right, d+1)
	g.tree[idx] = Node{Feature: bestF, Threshold: g.edges[bestF][bestB], Left: l, Right: r}
	g.split[idx] = bestB
	return idx
}
