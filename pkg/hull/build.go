package hull

import (
	"fmt"
	"math/bits"
	"slices"
	"sort"
)

// build finds the vertices of the lower hull among the representatives of
// the compositions, by Clarkson's output-sensitive method for the extreme
// points of a point set (K. L. Clarkson, "More output-sensitive geometric
// algorithms", FOCS 1994; Dulá & Helgason, Eur. J. Oper. Res. 92, 352
// (1996)):
//
//  1. The elemental representatives are vertices (the corners of the
//     composition simplex). A point on or above the plane through them
//     (formation energy ≥ 0 from the references) is not, so only the points
//     below it are candidates.
//  2. For each candidate p, solve the hull programme at x_p over the known
//     vertices S. If E_p is not below that hull, p is not a vertex: the hull
//     of S is above or equal to the hull of all points. Otherwise the
//     multipliers μ of the programme define a plane through hull(S) at x_p
//     that p lies below; the point q minimising E_q − μ·x_q (ties to the
//     first given) is a vertex of the full hull. Add q to S and solve again,
//     until p is found to be a vertex or above hull(S).
//
// Only the points whose elements are a subset of p's are involved: the
// others cannot appear in a decomposition at x_p. Every programme has at
// most as many rows as p has elements and as many columns as vertices in
// p's subsystem, and the scans for q add one vertex each, so the cost is
// about (candidates × small programmes) + (vertices × candidates in the
// subsystem) — no facets are enumerated, and their number, which grows as
// n^⌊d/2⌋ in d dimensions, does not matter.
//
// A final pass certifies every vertex: the programme at x_v over S∖{v}
// must lie more than stableTol above E_v (else v is dropped: it was within
// tolerance of a facet), and its multipliers, a plane below all other
// vertices and above v, are kept for Add.
func (d *Diagram) build() error {
	d.stable = d.stable[:0]
	clear(d.isStable)
	clear(d.cert)
	for _, r := range d.refs {
		d.addStable(r)
	}
	type candidate struct {
		j     int
		size  int
		depth float64
	}
	var cands []candidate
	byMask := map[uint64][]int{}
	dim := d.pts.dim
	for _, j := range d.reps {
		mask := d.pts.mask[j]
		if bits.OnesCount64(mask) < 2 {
			continue
		}
		depth := d.pts.e[j]
		for m := mask; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			depth -= d.pts.e[d.refs[k]] * d.pts.x[j*dim+k]
		}
		if depth >= -stableTol {
			continue
		}
		cands = append(cands, candidate{j, bits.OnesCount64(mask), depth})
		byMask[mask] = append(byMask[mask], j)
	}
	// Low-order subsystems first (their vertices bound the higher ones),
	// deepest first within an order: both find true vertices early.
	sort.Slice(cands, func(a, b int) bool {
		ca, cb := cands[a], cands[b]
		if ca.size != cb.size {
			return ca.size < cb.size
		}
		if ca.depth != cb.depth {
			return ca.depth < cb.depth
		}
		return ca.j < cb.j
	})
	masks := make([]uint64, 0, len(byMask))
	for m := range byMask {
		masks = append(masks, m)
	}
	slices.Sort(masks)

	w := d.getWork()
	defer d.work.Put(w)
	for _, c := range cands {
		p := c.j
		mask := d.pts.mask[p]
		w.setTarget(d, d.pts.x[p*dim:(p+1)*dim], mask)
		for !d.isStable[p] {
			h, err := d.solve(w, mask, -1)
			if err != nil {
				return fmt.Errorf("entry %q: %w", d.entries[p].ID, err)
			}
			if d.pts.e[p] >= h-stableTol {
				break
			}
			q := d.lowest(w, mask, byMask, masks)
			if q < 0 {
				// Impossible in exact arithmetic: p itself is below the plane.
				q = p
			}
			d.addStable(q)
		}
	}
	for _, v := range slices.Clone(d.stable) {
		if _, err := d.certify(w, v); err != nil {
			return err
		}
	}
	return nil
}

// lowest returns the candidate within mask, not yet a vertex, that lies
// furthest below the plane of the multipliers in w: argmin E_q − μ·x_q, the
// first given on exact ties. Candidates are grouped by element mask, so only
// the groups inside mask are scanned.
func (d *Diagram) lowest(w *work, mask uint64, byMask map[uint64][]int, masks []uint64) int {
	best, bestV := -1, 0.0
	scan := func(js []int) {
		for _, j := range js {
			if d.isStable[j] {
				continue
			}
			v := d.pts.e[j]
			base := j * d.pts.dim
			for i, k := range w.rows {
				v -= w.s.mu[i] * d.pts.x[base+k]
			}
			if best < 0 || v < bestV || (v == bestV && j < best) {
				best, bestV = j, v
			}
		}
	}
	if n := bits.OnesCount64(mask); n < 63 && 1<<n < len(masks) {
		for sub := mask; sub != 0; sub = (sub - 1) & mask {
			scan(byMask[sub])
		}
	} else {
		for _, m := range masks {
			if m&^mask == 0 {
				scan(byMask[m])
			}
		}
	}
	return best
}

func (d *Diagram) addStable(j int) {
	if d.isStable[j] {
		return
	}
	d.isStable[j] = true
	i, _ := slices.BinarySearch(d.stable, j)
	d.stable = slices.Insert(d.stable, i, j)
}

func (d *Diagram) removeStable(j int) {
	if !d.isStable[j] {
		return
	}
	d.isStable[j] = false
	delete(d.cert, j)
	if i, ok := slices.BinarySearch(d.stable, j); ok {
		d.stable = slices.Delete(d.stable, i, i+1)
	}
}

// certify checks that vertex v lies more than stableTol below the hull of
// the other vertices, records the multipliers of that hull at x_v as v's
// certificate, and otherwise removes v from the vertices. Removing a point
// that is not a vertex leaves the hull unchanged, so the order in which
// vertices are certified does not matter beyond ties within tolerance. The
// elemental references are always vertices.
func (d *Diagram) certify(w *work, v int) (bool, error) {
	mask := d.pts.mask[v]
	if bits.OnesCount64(mask) < 2 {
		return true, nil
	}
	dim := d.pts.dim
	w.setTarget(d, d.pts.x[v*dim:(v+1)*dim], mask)
	h, err := d.solve(w, mask, v)
	if err != nil {
		return false, fmt.Errorf("entry %q: %w", d.entries[v].ID, err)
	}
	if d.pts.e[v] >= h-stableTol {
		d.removeStable(v)
		return false, nil
	}
	d.cert[v] = w.certificate(dim)
	return true, nil
}

// certificate returns the multipliers of the last solution as a vector over
// all the diagram's elements (zero outside the rows).
func (w *work) certificate(dim int) []float64 {
	mu := make([]float64, dim)
	for i, k := range w.rows {
		mu[k] = w.s.mu[i]
	}
	return mu
}

// Add puts entries into the diagram — typically a campaign's own evaluated
// candidates — and updates the hull without rebuilding it:
//
//   - An entry that is not the lowest of its composition, or not below the
//     current hull by more than 1e-10 eV/atom, changes nothing but the
//     entry list.
//   - An entry below the hull is a new vertex (it is below the hull of all
//     other points). Each existing vertex v whose subsystem contains it is
//     tested against its certificate μ_v, a plane below all other vertices
//     and above v: if the new entry is not below the plane, v is still a
//     vertex; otherwise v is certified again against the new hull and
//     removed if it no longer lies below it.
//
// The result is the same as New on all the entries (the same vertices; the
// same decompositions except for the choice among equivalent ones on a
// degenerate facet). Entries must be within the diagram's elements
// (ErrOutsideSystem). An exact repeat of an entry is ignored; a different
// entry with a used id is ErrDuplicateID. Entries before a failing one
// remain added.
func (d *Diagram) Add(entries ...Entry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.getWork()
	defer d.work.Put(w)
	for _, e := range entries {
		if err := d.add(w, e); err != nil {
			return fmt.Errorf("add %q: %w", e.ID, err)
		}
	}
	return nil
}

func (d *Diagram) add(w *work, e Entry) error {
	prev, newRep, err := d.insert(e)
	if err != nil || !newRep {
		return err
	}
	p := len(d.entries) - 1
	dim := d.pts.dim
	mask := d.pts.mask[p]
	if prev >= 0 {
		d.removeStable(prev)
	}
	if bits.OnesCount64(mask) == 1 {
		// A lower elemental entry: the new reference of its element.
		d.refs[bits.TrailingZeros64(mask)] = p
	} else {
		w.setTarget(d, d.pts.x[p*dim:(p+1)*dim], mask)
		h, err := d.solve(w, mask, -1)
		if err != nil {
			return err
		}
		if d.pts.e[p] >= h-stableTol {
			return nil
		}
		d.cert[p] = w.certificate(dim)
	}
	d.addStable(p)
	xp := d.pts.x[p*dim : (p+1)*dim]
	for _, v := range slices.Clone(d.stable) {
		if v == p || d.pts.mask[v]&mask != mask || bits.OnesCount64(d.pts.mask[v]) < 2 {
			continue
		}
		if mu, ok := d.cert[v]; ok {
			plane := 0.0
			for k := range xp {
				plane += mu[k] * xp[k]
			}
			if plane <= d.pts.e[p]+priceTol {
				continue
			}
		}
		if _, err := d.certify(w, v); err != nil {
			return err
		}
	}
	return nil
}
