package cgcnn

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Featurisation of the published checkpoints (CGCNN predict.py defaults,
// data.py CIFData): the MaxNeighbors nearest periodic neighbours within
// Radius, distances expanded on Gaussians centred at k·GaussianStep,
// k = 0 … NumGaussians−1 (numpy.arange(0, Radius+step, step)), of width
// GaussianWidth.
const (
	Radius        = 8.0 // Å
	MaxNeighbors  = 12
	GaussianStep  = 0.2 // Å
	GaussianWidth = 0.2 // Å
	NumGaussians  = 41
	// padDistance is where CGCNN puts the missing neighbours of an atom
	// with fewer than MaxNeighbors within Radius (index 0, radius + 1).
	padDistance = Radius + 1
)

// Reasons a structure cannot be featurised. Each wraps ErrInvalidStructure,
// so a caller can record the structure as invalid with the reason.
var (
	ErrInvalidStructure = errors.New("structure cannot be evaluated by CGCNN")
	// ErrNoSites: a structure without atoms.
	ErrNoSites = fmt.Errorf("%w: no sites", ErrInvalidStructure)
	// ErrUnsupportedElement: an element the atom feature table does not cover.
	ErrUnsupportedElement = fmt.Errorf("%w: element without CGCNN atom features", ErrInvalidStructure)
	// ErrIsolatedAtom: an atom with no neighbour within Radius, whose
	// convolution would see only padding.
	ErrIsolatedAtom = fmt.Errorf("%w: atom without neighbours within %g Å", ErrInvalidStructure, Radius)
)

// gaussWindow is the number of consecutive Gaussians, around an edge's
// distance, that the convolutions use. The centres it leaves out are more
// than gaussHalfWindow steps away, where the Gaussian is below
// exp(−6.5²) ≈ 4.5·10⁻¹⁹: their contribution to a pre-activation is
// bounded by that times the edge weights' row sums, far below one unit in
// the last place (windowSuffices checks the bound for each checkpoint;
// graphs of Featurizer.Full carry all NumGaussians for those that fail).
const (
	gaussWindow     = 14
	gaussHalfWindow = (gaussWindow - 1) / 2.0
)

// Graph is a featurised crystal: CGCNN's crystal graph with, for every
// atom, its neighbour edges (index, distance, Gaussian expansion and
// weight in the convolution's sum). An atom's MaxNeighbors nearest
// neighbours have weight 1, or, where neighbours are tied at the twelfth
// distance, the nearer ones have weight 1 and the tied ones fractional
// weights summing to the slots left (see TieTolerance). Images of one
// neighbour at one distance (to mergeTolerance), which send the same
// message, are one edge whose weight is their sum: six images of the atom
// itself in a simple cubic cell are one edge of weight 6. The weights of
// an atom's edges sum to MaxNeighbors. One Graph serves every model of a
// Set. A Graph is filled by a Featurizer and may be refilled for another
// structure, reusing its buffers.
type Graph struct {
	n       int
	kinds   []crystal.Element // distinct elements, in order of first appearance
	kindFea []float64         // len(kinds) × feature length
	feaLen  int
	kindOf  []int32 // per atom, index into kinds
	// Atom i's edges are start[i] … start[i+1]−1; those before split[i]
	// have weight 1, the others weight[e].
	start  []int32
	split  []int32
	maxDeg int               // most edges of an atom
	nbr    []int32           // per edge: neighbour index
	nbrEl  []crystal.Element // per edge: neighbour element
	dist   []float64         // per edge: distance (Å)
	weight []float64         // per edge: weight in the convolution's sum
	mult   []float64         // per edge: the number of neighbour images it stands for
	width  int               // Gaussians stored per edge: gaussWindow or NumGaussians
	gauss  []float64         // per edge, width Gaussians: win[e] … win[e]+width−1
	win    []int32           // per edge: first Gaussian stored
	padded int
	tied   int         // atoms with fractional weights
	alts   [][]float64 // alternative weights (setTieChoices), aliasing altBuf
	altBuf []float64
	// Scratch of setTieChoices: the atoms whose tied neighbours are of
	// several elements, and the weights of each one's compositions
	// (tieOpts[tieOptStart[a]:tieOptStart[a+1]]).
	tieEls      []crystal.Element
	tieAtoms    []int32
	tieOpts     []float64
	tieOptStart []int
	tieRank     []int
}

// NumAtoms is the number of atoms of the featurised structure.
func (g *Graph) NumAtoms() int { return g.n }

// Padded is the number of neighbour slots filled with CGCNN's padding
// (index 0 at 9 Å) because an atom has fewer than MaxNeighbors neighbours
// within Radius.
func (g *Graph) Padded() int { return g.padded }

// Neighbors returns atom i's neighbour indices and distances, padding
// (index 0 at Radius + 1) included, those that fill a slot each first
// (sorted by distance), then the TiedEdges(i) tied at the cut (see
// Weights). The slices alias the graph.
func (g *Graph) Neighbors(i int) (index []int32, dist []float64) {
	lo, hi := g.start[i], g.start[i+1]
	return g.nbr[lo:hi], g.dist[lo:hi]
}

// Weights returns the weights of atom i's neighbours in the convolution,
// in the order of Neighbors; they sum to MaxNeighbors. The slice aliases
// the graph.
func (g *Graph) Weights(i int) []float64 { return g.weight[g.start[i]:g.start[i+1]] }

// Multiplicities returns the number of neighbour slots (images, or padding)
// each of atom i's edges stands for, in the order of Neighbors. The slice
// aliases the graph.
func (g *Graph) Multiplicities(i int) []float64 { return g.mult[g.start[i]:g.start[i+1]] }

// TiedEdges is the number of atom i's edges, the last ones, that are tied
// at the cut and share the slots the others leave.
func (g *Graph) TiedEdges(i int) int { return int(g.start[i+1] - g.split[i]) }

// mergeTolerance (Å) is how close two distances to images of one
// neighbour must be for them to be one edge: far below anything that
// changes a message (the difference of the two messages is about 10⁻¹¹
// of either), above the rounding of distances in float64.
const mergeTolerance = 1e-12

// TiedAtoms is the number of atoms whose neighbours are tied (or nearly
// tied) at the cut, so that some of them have fractional weights.
func (g *Graph) TiedAtoms() int { return g.tied }

// TieChoices is the number of alternative ways of filling the tied slots
// that can change a prediction (see TieTolerance): 0 when no atom has
// fractional weights on neighbours of different elements. Model.
// EvalTieChoice evaluates them.
func (g *Graph) TieChoices() int { return len(g.alts) }

// Featurizer turns structures into Graphs. It keeps the neighbour search's
// buffers between calls and is not safe for concurrent use; use one per
// goroutine.
type Featurizer struct {
	// Full makes graphs carry all NumGaussians Gaussians of every edge
	// instead of the gaussWindow around its distance, for models that need
	// them (Model.NeedsFullExpansion; none of the published checkpoints).
	Full bool
	// ReferenceTies keeps, of neighbours tied at the twelfth distance,
	// those the published reference implementation keeps
	// (crystal.TiesAsPymatgen), each with weight 1, instead of weighing
	// them all (see TieTolerance). The graph then depends on the
	// orientation of the cell and the order of the sites; this is for
	// comparisons with the reference's own predictions.
	ReferenceTies bool

	atoms  *AtomFeatures
	finder crystal.NeighborFinder
	nl     crystal.NeighborList
	d, w   []float64 // one atom's neighbour distances and weights
}

// NewFeaturizer returns a featurizer using the given atom feature table.
func NewFeaturizer(atoms *AtomFeatures) *Featurizer { return &Featurizer{atoms: atoms} }

// Featurize fills g with the crystal graph of s, as CGCNN's CIFData does,
// except at ties: each atom's features from the table; its MaxNeighbors
// nearest periodic neighbours within Radius (widened by TieTolerance),
// with weight 1, padded with index 0 at Radius + 1 when there are fewer,
// or, where neighbours are tied at the twelfth distance, the nearer ones
// and all the tied ones with the weights of TieTolerance's rule; each
// distance d expanded as exp(−(d − μ_k)²/σ²), μ_k = k·GaussianStep,
// σ = GaussianWidth.
//
// Structures without sites, with an element the table does not cover, or
// with an atom that has no neighbour within Radius are rejected with an
// error wrapping ErrInvalidStructure.
func (f *Featurizer) Featurize(s *crystal.Structure, g *Graph) error {
	g.n = 0 // until the graph is complete, models see an empty one
	n := len(s.Species)
	if n == 0 {
		return ErrNoSites
	}
	if len(s.Frac) != n {
		return fmt.Errorf("%w: %d species but %d coordinates", ErrInvalidStructure, n, len(s.Frac))
	}
	if v := s.Lattice.Volume(); !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%w: lattice of volume %v Å³", ErrInvalidStructure, v)
	}
	g.feaLen = f.atoms.Len()
	g.kinds = g.kinds[:0]
	g.kindFea = g.kindFea[:0]
	g.kindOf = grow(g.kindOf, n)
	for i, e := range s.Species {
		k := -1
		for j, seen := range g.kinds {
			if seen == e {
				k = j
				break
			}
		}
		if k < 0 {
			fea := f.atoms.Of(e)
			if fea == nil {
				return fmt.Errorf("%w: site %d is %v (Z = %d)", ErrUnsupportedElement, i, e, int(e))
			}
			k = len(g.kinds)
			g.kinds = append(g.kinds, e)
			g.kindFea = append(g.kindFea, fea...)
		}
		g.kindOf[i] = int32(k)
	}

	// A neighbour at Radius in exact arithmetic is inside whatever the
	// rounding: the search reaches TieTolerance beyond it.
	cutoff := Radius + TieTolerance
	f.finder.Ties, f.finder.Margin = crystal.TiesByIndex, tieMargin
	if f.ReferenceTies {
		cutoff = Radius
		f.finder.Ties, f.finder.Margin = crystal.TiesAsPymatgen, 0
	}
	if err := f.finder.Find(s, cutoff, MaxNeighbors, &f.nl); err != nil {
		return fmt.Errorf("%w: neighbour search: %w", ErrInvalidStructure, err)
	}
	g.width = gaussWindow
	if f.Full {
		g.width = NumGaussians
	}
	g.start = grow(g.start, n+1)
	g.split = grow(g.split, n)
	edges := 0 // at most
	for i := 0; i < n; i++ {
		edges += max(MaxNeighbors, len(f.nl.Of(i)))
	}
	g.nbr, g.nbrEl = slices.Grow(g.nbr[:0], edges), slices.Grow(g.nbrEl[:0], edges)
	g.dist, g.weight = slices.Grow(g.dist[:0], edges), slices.Grow(g.weight[:0], edges)
	g.mult = slices.Grow(g.mult[:0], edges)
	g.win, g.gauss = slices.Grow(g.win[:0], edges), slices.Grow(g.gauss[:0], edges*g.width)
	g.padded, g.tied, g.maxDeg = 0, 0, 0
	g.alts = g.alts[:0]
	// add adds neighbour j at distance d with weight w and multiplicity
	// m to atom i's edges from edge `from` on, to an edge of the same
	// neighbour at the same distance when there is one.
	add := func(from, j int, d, w, m float64) {
		for e := from; e < len(g.nbr); e++ {
			if int(g.nbr[e]) == j && math.Abs(g.dist[e]-d) <= mergeTolerance {
				g.weight[e] += w
				g.mult[e] += m
				return
			}
		}
		g.nbr = append(g.nbr, int32(j))
		g.nbrEl = append(g.nbrEl, s.Species[j])
		g.dist = append(g.dist, d)
		g.weight = append(g.weight, w)
		g.mult = append(g.mult, m)
		k0 := 0
		if !f.Full {
			k0 = windowStart(d)
		}
		g.win = append(g.win, int32(k0))
		e := len(g.gauss)
		g.gauss = slices.Grow(g.gauss, g.width)[:e+g.width]
		expandGaussians(g.gauss[e:], d, k0)
	}
	for i := 0; i < n; i++ {
		first := len(g.nbr)
		g.start[i] = int32(first)
		nbrs := f.nl.Of(i)
		if len(nbrs) == 0 {
			return fmt.Errorf("%w: site %d (%v)", ErrIsolatedAtom, i, s.Species[i])
		}
		if len(nbrs) <= MaxNeighbors {
			for _, nb := range nbrs {
				add(first, nb.Index, nb.Distance, 1, 1)
			}
			if pad := MaxNeighbors - len(nbrs); pad > 0 {
				add(first, 0, padDistance, float64(pad), float64(pad))
				g.padded += pad
			}
			g.split[i] = int32(len(g.nbr))
			g.maxDeg = max(g.maxDeg, len(g.nbr)-first)
			continue
		}
		f.d, f.w = grow(f.d, len(nbrs)), grow(f.w, len(nbrs))
		for j, nb := range nbrs {
			f.d[j] = nb.Distance
		}
		cutWeights(f.d, MaxNeighbors, f.w)
		for j, nb := range nbrs {
			if f.w[j] == 1 {
				add(first, nb.Index, nb.Distance, 1, 1)
			}
		}
		split := len(g.nbr)
		g.split[i] = int32(split)
		for j, nb := range nbrs {
			if f.w[j] > 0 && f.w[j] < 1 {
				add(split, nb.Index, nb.Distance, f.w[j], 1)
			}
		}
		if split < len(g.nbr) {
			g.tied++
		}
		g.maxDeg = max(g.maxDeg, len(g.nbr)-first)
	}
	g.start[n] = int32(len(g.nbr))
	if g.tied > 0 {
		g.setTieChoices()
	}
	g.n = n
	return nil
}

// expandGaussians writes exp(−(d − μ_k)²/σ²) for the centres μ_k,
// k = k0, k0+1, …, in the order of operations of CGCNN's
// GaussianDistance.expand (μ_k = k·step as numpy.arange computes it).
func expandGaussians(dst []float64, d float64, k0 int) {
	for i := range dst {
		x := d - float64(k0+i)*GaussianStep
		dst[i] = math.Exp(-(x * x) / gaussVar2)
	}
}

// gaussVar2 is σ² rounded as numpy computes var**2 (0.2·0.2 in float64,
// one unit in the last place above the constant 0.04).
var gaussVar2 = func() float64 { w := float64(GaussianWidth); return w * w }()

// windowStart is the first of the gaussWindow centres around distance d:
// every centre more than gaussHalfWindow steps from d lies outside.
func windowStart(d float64) int {
	k := math.Ceil(d/GaussianStep - gaussHalfWindow)
	return int(max(0, min(k, NumGaussians-gaussWindow)))
}

// grow returns s resized to n, reallocating only when its capacity is short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
