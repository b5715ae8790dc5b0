package cgcnn

import (
	"errors"
	"fmt"
	"math"

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
// atom, its MaxNeighbors neighbour slots (index and Gaussian-expanded
// distance). One Graph serves every model of a Set. A Graph is filled by a
// Featurizer and may be refilled for another structure, reusing its
// buffers.
type Graph struct {
	n       int
	kinds   []crystal.Element // distinct elements, in order of first appearance
	kindFea []float64         // len(kinds) × feature length
	feaLen  int
	kindOf  []int32   // per atom, index into kinds
	nbr     []int32   // n × MaxNeighbors neighbour indices
	dist    []float64 // n × MaxNeighbors distances (Å)
	width   int       // Gaussians stored per edge: gaussWindow or NumGaussians
	gauss   []float64 // n × MaxNeighbors × width: Gaussians win[e] … win[e]+width−1
	win     []int32   // n × MaxNeighbors first Gaussian stored for the edge
	padded  int
}

// NumAtoms is the number of atoms of the featurised structure.
func (g *Graph) NumAtoms() int { return g.n }

// Padded is the number of neighbour slots filled with CGCNN's padding
// (index 0 at 9 Å) because an atom has fewer than MaxNeighbors neighbours
// within Radius.
func (g *Graph) Padded() int { return g.padded }

// Neighbors returns atom i's neighbour indices and distances, padding
// included. The slices alias the graph.
func (g *Graph) Neighbors(i int) (index []int32, dist []float64) {
	return g.nbr[i*MaxNeighbors : (i+1)*MaxNeighbors], g.dist[i*MaxNeighbors : (i+1)*MaxNeighbors]
}

// Featurizer turns structures into Graphs. It keeps the neighbour search's
// buffers between calls and is not safe for concurrent use; use one per
// goroutine.
type Featurizer struct {
	// Full makes graphs carry all NumGaussians Gaussians of every edge
	// instead of the gaussWindow around its distance, for models that need
	// them (Model.NeedsFullExpansion; none of the published checkpoints).
	Full bool

	atoms  *AtomFeatures
	finder crystal.NeighborFinder
	nl     crystal.NeighborList
}

// NewFeaturizer returns a featurizer using the given atom feature table.
func NewFeaturizer(atoms *AtomFeatures) *Featurizer { return &Featurizer{atoms: atoms} }

// Featurize fills g with the crystal graph of s, as CGCNN's CIFData does:
// each atom's features from the table; its MaxNeighbors nearest periodic
// neighbours within Radius, sorted by distance (of neighbours equidistant
// with the last kept, those CGCNN keeps: crystal.TiesAsPymatgen), padded
// with index 0 at Radius + 1 when there are fewer; each distance d
// expanded as exp(−(d − μ_k)²/σ²), μ_k = k·GaussianStep, σ = GaussianWidth.
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

	f.finder.Ties = crystal.TiesAsPymatgen
	if err := f.finder.Find(s, Radius, MaxNeighbors, &f.nl); err != nil {
		return fmt.Errorf("%w: neighbour search: %w", ErrInvalidStructure, err)
	}
	slots := n * MaxNeighbors
	g.width = gaussWindow
	if f.Full {
		g.width = NumGaussians
	}
	g.nbr = grow(g.nbr, slots)
	g.dist = grow(g.dist, slots)
	g.win = grow(g.win, slots)
	g.gauss = grow(g.gauss, slots*g.width)
	g.padded = 0
	for i := 0; i < n; i++ {
		nbrs := f.nl.Of(i)
		if len(nbrs) == 0 {
			return fmt.Errorf("%w: site %d (%v)", ErrIsolatedAtom, i, s.Species[i])
		}
		for k := 0; k < MaxNeighbors; k++ {
			e := i*MaxNeighbors + k
			if k < len(nbrs) {
				g.nbr[e] = int32(nbrs[k].Index)
				g.dist[e] = nbrs[k].Distance
			} else {
				g.nbr[e] = 0
				g.dist[e] = padDistance
				g.padded++
			}
			k0 := 0
			if !f.Full {
				k0 = windowStart(g.dist[e])
			}
			g.win[e] = int32(k0)
			expandGaussians(g.gauss[e*g.width:(e+1)*g.width], g.dist[e], k0)
		}
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
