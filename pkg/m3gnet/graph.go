package m3gnet

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrInput is returned for a system the potential cannot evaluate: no
// atoms, an element outside the model's 89, coordinates that are not
// finite, a degenerate cell.
var ErrInput = errors.New("m3gnet: bad input")

// System is what the potential evaluates: atoms at Cartesian positions (Å),
// in a periodic cell (rows a, b, c in Å, as crystal.Lattice) or, when
// Periodic is false, a molecule in free space.
type System struct {
	Species  []crystal.Element
	Pos      []crystal.Vec3
	Cell     [3][3]float64
	Periodic bool
}

// FromStructure returns the periodic system of a crystal structure.
func FromStructure(s *crystal.Structure) *System {
	sys := &System{
		Species:  append([]crystal.Element(nil), s.Species...),
		Pos:      make([]crystal.Vec3, len(s.Frac)),
		Cell:     s.Lattice.Matrix(),
		Periodic: true,
	}
	for i := range s.Frac {
		sys.Pos[i] = s.Lattice.Cartesian(s.Frac[i])
	}
	return sys
}

// Structure returns the crystal structure of a periodic system, with
// fractional coordinates as they are (not wrapped).
func (s *System) Structure() (*crystal.Structure, error) {
	if !s.Periodic {
		return nil, fmt.Errorf("%w: a molecule has no crystal structure", ErrInput)
	}
	l, err := crystal.NewLattice(s.Cell)
	if err != nil {
		return nil, err
	}
	frac := make([]crystal.Vec3, len(s.Pos))
	for i, p := range s.Pos {
		frac[i] = l.Fractional(p)
	}
	return crystal.NewStructure(l, s.Species, frac)
}

// Copy returns a deep copy.
func (s *System) Copy() *System {
	c := *s
	c.Species = append([]crystal.Element(nil), s.Species...)
	c.Pos = append([]crystal.Vec3(nil), s.Pos...)
	return &c
}

// minDistance is the shortest bond (Å) accepted: closer atoms have no
// defined bond angle.
const minDistance = 1e-4

// triple is one term of the three-body sum (matgl ThreeBodyInteractions):
// the angle θ between bonds ja and jb (which share their first atom), the
// radial basis at the length of jb, the atom-network output of atom end,
// the product of the three-body cutoff functions of bonds c1 and c2, added
// to the features of bond tgt.
type triple struct {
	ja, jb, c1, c2, end, tgt int32
}

// buildGraph fills ws with the bond graph of sys (every ordered pair of
// atoms, periodic images included, closer than the cutoff) and its
// three-body triples.
func (m *Model) buildGraph(ws *Workspace, sys *System) error {
	n := len(sys.Species)
	ws.src, ws.dst = ws.src[:0], ws.dst[:0]
	ws.shift = ws.shift[:0]
	if sys.Periodic {
		lat, err := crystal.NewLattice(sys.Cell)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		ws.frac = grow(ws.frac, n)
		for i, p := range sys.Pos {
			ws.frac[i] = lat.Fractional(p)
		}
		st := crystal.Structure{Lattice: lat, Species: sys.Species, Frac: ws.frac}
		if err := ws.finder.Find(&st, m.cutoff, 0, &ws.nl); err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		for i := 0; i < n; i++ {
			// Each atom's bonds by neighbour index and image, an order that
			// small displacements do not change (the finder sorts by
			// length); with IndexMatgl the energy depends on it.
			ws.nbrs = append(ws.nbrs[:0], ws.nl.Of(i)...)
			slices.SortFunc(ws.nbrs, compareIndexImage)
			for _, nb := range ws.nbrs {
				ws.src = append(ws.src, int32(i))
				ws.dst = append(ws.dst, int32(nb.Index))
				img := crystal.Vec3{float64(nb.Image[0]), float64(nb.Image[1]), float64(nb.Image[2])}
				ws.shift = append(ws.shift, lat.Cartesian(img))
			}
		}
	} else {
		// Every pair within the cutoff, by row then column, as matgl's
		// graph of a molecule (a sparse adjacency matrix in COO order).
		rc2 := m.cutoff * m.cutoff
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if i == j {
					continue
				}
				d := sys.Pos[j].Sub(sys.Pos[i])
				if d.Dot(d) <= rc2 {
					ws.src = append(ws.src, int32(i))
					ws.dst = append(ws.dst, int32(j))
					ws.shift = append(ws.shift, crystal.Vec3{})
				}
			}
		}
	}
	nb := len(ws.src)
	ws.vec = grow(ws.vec, nb)
	ws.dist = grow(ws.dist, nb)
	for e := 0; e < nb; e++ {
		v := sys.Pos[ws.dst[e]].Add(ws.shift[e]).Sub(sys.Pos[ws.src[e]])
		ws.vec[e] = v
		ws.dist[e] = v.Norm()
		if ws.dist[e] < minDistance {
			return fmt.Errorf("%w: atoms %d and %d (or an image) are %.2g Å apart", ErrInput, ws.src[e], ws.dst[e], ws.dist[e])
		}
	}
	m.buildTriples(ws, n)
	return nil
}

// buildTriples lists the three-body terms as matgl forms them: the bonds
// no longer than the three-body cutoff are kept in graph order (bonds are
// grouped by first atom), and every ordered pair (a, b), a ≠ b, of kept
// bonds of the same atom is a triple.
func (m *Model) buildTriples(ws *Workspace, n int) {
	ws.kept = ws.kept[:0]
	for e, d := range ws.dist {
		if d <= m.cutoff3 {
			ws.kept = append(ws.kept, int32(e))
		}
	}
	ws.tri = ws.tri[:0]
	for lo := 0; lo < len(ws.kept); {
		i := ws.src[ws.kept[lo]]
		hi := lo
		for hi < len(ws.kept) && ws.src[ws.kept[hi]] == i {
			hi++
		}
		for a := lo; a < hi; a++ {
			for b := lo; b < hi; b++ {
				if a == b {
					continue
				}
				ja, jb := ws.kept[a], ws.kept[b]
				ws.tri = append(ws.tri, triple{ja: ja, jb: jb, c1: ja, c2: jb, end: ws.dst[jb], tgt: ja})
			}
		}
		lo = hi
	}
	if m.indexing == IndexMatgl {
		m.matglIndexing(ws)
	}
}

// Indexing chooses how the three-body terms address bonds and atoms.
type Indexing int

const (
	// IndexMatgl reproduces matgl's ThreeBodyInteractions as it runs
	// (and as the potential was trained): its triples are formed on the
	// list of bonds within the three-body cutoff, but the layer then uses
	// their positions in that list as indices into the full bond list
	// when it takes the three-body cutoff weights, the end atom and the
	// bond the term is added to (the segment ids of its scatter also skip
	// bonds of atoms with a single short bond). Where every bond is
	// within the three-body cutoff the two indexings agree; elsewhere the
	// energy depends slightly on the order of the bond list (bonds are
	// grouped by atom, each atom's sorted by length) and jumps slightly
	// when a bond crosses the three-body cutoff. The golden energy of
	// matgl's 42-atom molecule is reproduced only with this indexing
	// (2e-5 eV, against 2.5e-4 eV with IndexPaper; tolerance 1e-4).
	IndexMatgl Indexing = iota
	// IndexPaper follows the equations (Chen & Ong 2022, Eqs. 2–3):
	// each triple (i, j, k) of bonds within the three-body cutoff adds
	// to bond ij with the weight f_c(r_ij) f_c(r_ik) and the atom network
	// of k. The energy is then invariant under any reordering of atoms or
	// bonds and continuous.
	IndexPaper
)

// WithIndexing returns a copy of the potential that indexes its three-body
// terms as ix says; the weights are shared.
func (m *Model) WithIndexing(ix Indexing) *Model {
	c := *m
	c.indexing = ix
	return &c
}

// matglIndexing re-addresses the triples built by buildTriples as matgl's
// layer does (see IndexMatgl): a triple of kept bonds at positions a, b of
// the kept list takes its cutoff weights from bonds a and b of the full
// list, its atom from the end of full bond b, and is added to full bond
// s, where s counts the distinct values among the running totals of
// (triples per kept bond) before it, as matgl's get_segment_indices_from_n
// computes segment ids.
func (m *Model) matglIndexing(ws *Workspace) {
	nb, nt := len(ws.src), len(ws.tri)
	ws.pos = grow(ws.pos, nb)
	for p, e := range ws.kept {
		ws.pos[e] = int32(p)
	}
	// Triples per kept bond: (kept bonds of its atom) − 1.
	ws.cnt = grow(ws.cnt, len(ws.kept))
	maxID := int32(-1)
	for lo := 0; lo < len(ws.kept); {
		i := ws.src[ws.kept[lo]]
		hi := lo
		for hi < len(ws.kept) && ws.src[ws.kept[hi]] == i {
			hi++
		}
		for a := lo; a < hi; a++ {
			ws.cnt[a] = int32(hi - lo - 1)
		}
		if hi-lo > 1 {
			maxID = int32(hi - 1)
		}
		lo = hi
	}
	ws.mark = grow(ws.mark, nt+1)
	clear(ws.mark)
	cum := 0
	for k := 0; k < int(maxID); k++ {
		cum += int(ws.cnt[k])
		if cum < nt {
			ws.mark[cum] = 1
		}
	}
	seg := int32(0)
	for t := range ws.tri {
		seg += ws.mark[t]
		tr := &ws.tri[t]
		a, b := ws.pos[tr.ja], ws.pos[tr.jb]
		tr.c1, tr.c2 = a, b
		tr.end = ws.dst[b]
		tr.tgt = seg
	}
}

func compareIndexImage(a, b crystal.Neighbor) int {
	if c := cmp.Compare(a.Index, b.Index); c != 0 {
		return c
	}
	for k := 0; k < 3; k++ {
		if c := cmp.Compare(a.Image[k], b.Image[k]); c != 0 {
			return c
		}
	}
	return 0
}
