package cgcnn

import (
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// The cut at the twelfth neighbour. CGCNN convolves each atom with its
// MaxNeighbors nearest neighbours. Where several neighbours are at the
// distance of the twelfth, which of them a plain sort keeps depends on the
// rounding of the distances and on the order of the sites, so the same
// crystal rotated, translated, with its sites listed in another order or
// read back from a file would get different graphs and, where the tied
// neighbours differ (different elements, or inequivalent sites), different
// predictions. The featuriser therefore cuts with a rule that depends on
// the distances alone: every neighbour gets a weight w_j ∈ [0, 1] in the
// convolution's sum over neighbours,
//
//	v_i ← softplus(v_i + BN₂(Σ_j w_j · sigmoid(z_ij^filter) ⊙ softplus(z_ij^core))),
//
// with Σ_j w_j = MaxNeighbors (the sum keeps the scale the network was
// trained with), and
//
//	w_j = clamp((c − x_j)/TieRamp + ½, 0, 1),  x_j = sign(e_j)·max(0, |e_j| − TieTolerance),
//
// where e_j = d_j − d₁₂ is the neighbour's distance from the twelfth
// distance and c is the level that makes the weights sum to MaxNeighbors.
// So:
//
//   - Neighbours whose distances differ from the twelfth by at most
//     TieTolerance are tied: they have equal weights (x_j = 0), the last
//     slots split evenly among them. For k slots left and t tied
//     neighbours each has weight k/t: each convolution's sum is the
//     average of its sums over every choice of k of them, the one
//     choice-free value. Where the tied neighbours are equivalent (the
//     same element at symmetry-equivalent sites) every choice gives the
//     same sum, and so does the split.
//   - Where the next distance is more than TieTolerance + TieRamp beyond
//     the twelfth, the weights are 1 for the twelve nearest and 0 for the
//     rest: CGCNN's own cut, unchanged. All structures without near-ties at
//     the cut get the original network's values.
//   - In between, the weights move linearly from the split to the cut, so
//     a prediction is a continuous function of the positions: no
//     threshold on a distance difference decides between two graphs, and
//     a rounding error δ in a distance changes a weight by about
//     δ/TieRamp at most (nothing within TieTolerance of a tie).
//
// The dead zone TieTolerance (10⁻⁶ Å) is far above the rounding of
// distances in float64 (about 10⁻¹⁵ Å times the size of the cell), so a
// rotation, translation or permutation of the sites, or a round trip
// through a file written with 12 or more decimals, never moves a tie out
// of it; and above the rounding of coordinates written with 8 decimals
// (pymatgen's CIFs: ~10⁻⁷ Å in cells of tens of Å), so that symmetry ties
// of such files are recognised. TieRamp (10⁻⁵ Å) is far below what the
// network resolves (Gaussians of width 0.2 Å): neighbours within it of
// each other are interchangeable for the model, and a distance difference
// below TieTolerance + TieRamp decides nothing by itself.
//
// The average over the tied neighbours is the value; how much the choice
// among them could move it is reported separately (Prediction.Low and
// High, from EvalTieChoice). A choice matters where an atom's neighbours
// with fractional weights include several elements: the first
// convolution sees a neighbour only through its element and distance, so
// what a hard cut decides is how many neighbours of each element the atom
// keeps. The alternatives are those compositions: every such atom has
// the ways of giving its fractional slots (a whole number of them) to
// whole numbers of neighbours of each element, split evenly among the
// neighbours of an element, in lexicographic order of the numbers of
// neighbours of each element kept, lightest element first; each alternative
// gives every atom the composition of the same rank (scaled to the atom's
// number of compositions), from the fewest neighbours of the lightest
// element to the most, at most maxTieChoices of them. For a cubic
// perovskite ABX₃, whose X atoms each fill 10 slots from 4 A and 8 X
// neighbours, that is every X keeping 2, 3 or 4 A. The combinations of
// different ranks at different atoms are not explored (their number grows
// exponentially with the atoms), nor choices among neighbours of one
// element at inequivalent sites: the spread is a lower bound on what a
// plain sort could do.
const (
	// TieTolerance (Å): distances within it of the twelfth are tied.
	TieTolerance = 1e-6
	// TieRamp (Å): beyond TieTolerance, the width over which the weights
	// go from the even split to the hard cut.
	TieRamp = 1e-5
	// tieMargin is how far past the twelfth a neighbour can still have a
	// weight.
	tieMargin = TieTolerance + TieRamp
	// maxTieChoices bounds the alternative choices evaluated for a
	// structure's tie spread.
	maxTieChoices = 8
)

// cutWeights sets w[j] to the weight of the j-th of the sorted distances d
// (len(d) > k) under the rule above, for a cut at k neighbours.
func cutWeights(d []float64, k int, w []float64) {
	dk := d[k-1]
	x := w // the offsets x_j, overwritten by the weights below
	for j, dj := range d {
		e := dj - dk
		switch {
		case e > TieTolerance:
			x[j] = e - TieTolerance
		case e < -TieTolerance:
			x[j] = e + TieTolerance
		default:
			x[j] = 0
		}
	}
	c := cutLevel(x, k)
	for j, xj := range x {
		w[j] = min(1, max(0, (c-xj)/TieRamp+0.5))
	}
}

// cutLevel solves Σ_j clamp((c − x_j)/TieRamp + ½, 0, 1) = k for c, x
// sorted. The sum is piecewise linear and non-decreasing in c, with
// corners at x_j ± TieRamp/2; c is found on the segment where it reaches k
// (the lowest solution where the sum is flat at k, which gives the same
// weights as any other).
func cutLevel(x []float64, k int) float64 {
	sum := func(c float64) float64 {
		s := 0.0
		for _, xj := range x {
			s += min(1, max(0, (c-xj)/TieRamp+0.5))
		}
		return s
	}
	const h = TieRamp / 2
	// Corners in increasing order: merge x_j − h and x_j + h.
	lo, flo := x[0]-h, 0.0
	i, j := 0, 0
	for i < len(x) || j < len(x) {
		var c float64
		if i < len(x) && x[i]-h <= x[j]+h {
			c = x[i] - h
			i++
		} else {
			c = x[j] + h
			j++
		}
		f := sum(c)
		switch {
		case f == float64(k):
			return c
		case f > float64(k):
			return lo + (float64(k)-flo)/(f-flo)*(c-lo)
		}
		lo, flo = c, f
	}
	return lo // unreachable for len(x) > k
}

// setTieChoices sets g.alts to the alternative weights described with
// TieTolerance: with n_i compositions at atom i (compositions' order) and
// M = min(maxTieChoices, max n_i), choice j = 0 … M−1 gives every atom
// its composition round(j·(n_i − 1)/(M − 1)), the same rank everywhere
// and the ends of every atom's range at j = 0 and M − 1; repeated choices
// are left out. g.alts stays empty when no atom has fractional weights on
// neighbours of different elements.
func (g *Graph) setTieChoices() {
	g.alts = g.alts[:0]
	g.tieAtoms = g.tieAtoms[:0]
	g.tieOpts = g.tieOpts[:0]
	g.tieOptStart = append(g.tieOptStart[:0], 0)
	most := 0
	for i := range g.split {
		lo, hi := int(g.split[i]), int(g.start[i+1])
		if !mixed(g.nbrEl[lo:hi]) {
			continue
		}
		before := len(g.tieOpts)
		g.tieOpts = g.compositions(g.tieOpts, i)
		if n := (len(g.tieOpts) - before) / (hi - lo); n > 1 {
			g.tieAtoms = append(g.tieAtoms, int32(i))
			g.tieOptStart = append(g.tieOptStart, len(g.tieOpts))
			most = max(most, n)
		} else {
			g.tieOpts = g.tieOpts[:before]
		}
	}
	if most == 0 {
		return
	}
	m, choices := len(g.weight), min(maxTieChoices, most)
	g.altBuf = grow(g.altBuf, choices*m)
	prev := g.tieRank[:0]
	for j := range choices {
		w := g.altBuf[len(g.alts)*m : (len(g.alts)+1)*m]
		copy(w, g.weight)
		same := j > 0
		for a, i := range g.tieAtoms {
			lo, hi := int(g.split[i]), int(g.start[i+1])
			opts := g.tieOpts[g.tieOptStart[a]:g.tieOptStart[a+1]]
			n := len(opts) / (hi - lo)
			k := int(math.Round(float64(j*(n-1)) / float64(choices-1)))
			copy(w[lo:hi], opts[k*(hi-lo):(k+1)*(hi-lo)])
			if j == 0 {
				prev = append(prev, k)
			} else if prev[a] != k {
				same = false
				prev[a] = k
			}
		}
		if !same {
			g.alts = append(g.alts, w)
		}
	}
	g.tieRank = prev
}

// compositions appends to dst the weights, on the fractional edges lo …
// hi−1 of atom i, of each composition of its remaining slots: whole
// numbers 0 ≤ c_e ≤ n_e of neighbours of each element e among them (n_e of
// them, counting an edge's multiplicity) with Σ c_e = R = MaxNeighbors −
// (slots of the other edges), each neighbour of e weighing c_e/n_e. (The
// fractional weights sum to R, a whole number, whether they split a tie
// or lie on the ramp.) It returns
// dst unchanged when the neighbours have more than maxTieKinds elements.
func (g *Graph) compositions(dst []float64, i int) []float64 {
	lo, hi := int(g.split[i]), int(g.start[i+1])
	el := g.nbrEl[lo:hi]
	var kinds [maxTieKinds]crystal.Element
	var count [maxTieKinds]int
	nk := 0
	for _, e := range el {
		if slices.Contains(kinds[:nk], e) {
			continue
		}
		if nk == maxTieKinds {
			return dst
		}
		kinds[nk] = e
		nk++
	}
	slices.SortFunc(kinds[:nk], func(a, b crystal.Element) int { return int(a) - int(b) })
	mult := g.mult[lo:hi]
	for p, e := range el {
		count[slices.Index(kinds[:nk], e)] += int(mult[p])
	}
	slots := MaxNeighbors
	for _, m := range g.mult[g.start[i]:lo] {
		slots -= int(m)
	}
	// Odometer over the counts of all elements but the last, which takes
	// the rest of the slots: lexicographic order, lightest element first.
	var c [maxTieKinds]int
	for {
		rest := slots
		for k := range nk - 1 {
			rest -= c[k]
		}
		if rest >= 0 && rest <= count[nk-1] {
			c[nk-1] = rest
			for p, e := range el {
				k := slices.Index(kinds[:nk], e)
				dst = append(dst, mult[p]*float64(c[k])/float64(count[k]))
			}
		}
		k := nk - 2
		for ; k >= 0; k-- {
			if c[k] < count[k] {
				c[k]++
				break
			}
			c[k] = 0
		}
		if k < 0 {
			return dst
		}
	}
}

// maxTieKinds is the most elements among one atom's tied neighbours whose
// compositions are enumerated.
const maxTieKinds = 4

// mixed reports whether els holds more than one element.
func mixed(els []crystal.Element) bool {
	for _, e := range els {
		if e != els[0] {
			return true
		}
	}
	return false
}
