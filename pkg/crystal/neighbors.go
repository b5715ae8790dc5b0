package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Neighbor is one periodic image of a site near another site. The image's
// fractional position is Frac[Index] + Image, relative to the coordinates
// stored in the structure (wrapped or not).
type Neighbor struct {
	Index    int
	Distance float64 // Å
	Image    [3]int
}

// less orders neighbours by distance, then index, then image, so a list is
// the same whatever order the search visited them in.
func (n Neighbor) less(m Neighbor) bool {
	if n.Distance != m.Distance {
		return n.Distance < m.Distance
	}
	if n.Index != m.Index {
		return n.Index < m.Index
	}
	for k := 0; k < 3; k++ {
		if n.Image[k] != m.Image[k] {
			return n.Image[k] < m.Image[k]
		}
	}
	return false
}

func compareNeighbors(a, b Neighbor) int {
	switch {
	case a.Distance < b.Distance:
		return -1
	case a.Distance > b.Distance:
		return 1
	case a.less(b):
		return -1
	case b.less(a):
		return 1
	}
	return 0
}

// NeighborList holds the neighbours of every site of a structure, each
// site's sorted by increasing distance (ties by index, then image, unless
// the finder's TieOrder says otherwise).
type NeighborList struct {
	start []int // site i's neighbours are nbrs[start[i]:start[i+1]]
	nbrs  []Neighbor
}

// NumSites is the number of sites the list covers.
func (nl *NeighborList) NumSites() int { return len(nl.start) - 1 }

// Of returns the neighbours of site i. The slice aliases the list.
func (nl *NeighborList) Of(i int) []Neighbor { return nl.nbrs[nl.start[i]:nl.start[i+1]] }

// Total is the number of (site, neighbour) pairs.
func (nl *NeighborList) Total() int { return len(nl.nbrs) }

// ErrBadCutoff is returned for a cutoff that is not positive and finite.
var ErrBadCutoff = errors.New("bad neighbour cutoff")

// Neighbors returns, for every site, every periodic image of every site
// (including other images of itself, excluding itself) within cutoff Å.
func (s *Structure) Neighbors(cutoff float64) (*NeighborList, error) {
	var f NeighborFinder
	var nl NeighborList
	if err := f.Find(s, cutoff, 0, &nl); err != nil {
		return nil, err
	}
	return &nl, nil
}

// NearestNeighbors returns, for every site, its k nearest periodic
// neighbours within cutoff Å (fewer where fewer exist), as CGCNN's graph
// construction uses them (k = 12, cutoff = 8 Å).
func (s *Structure) NearestNeighbors(k int, cutoff float64) (*NeighborList, error) {
	if k < 1 {
		return nil, fmt.Errorf("%w: k = %d must be positive", ErrBadCutoff, k)
	}
	var f NeighborFinder
	var nl NeighborList
	if err := f.Find(s, cutoff, k, &nl); err != nil {
		return nil, err
	}
	return &nl, nil
}

// NeighborFinder finds periodic neighbours with a cell list. It keeps its
// buffers between calls, so a finder reused over a batch of structures
// allocates little; it is not safe for concurrent use.
//
// Method: the cell is divided into nb_a × nb_b × nb_c bins along the
// lattice vectors, about one atom per bin. For every bin offset o the
// fractional difference u between a point of bin b and a point of bin b+o
// lies in the box ((o−1)/nb, (o+1)/nb), which bounds the distance between
// any two atoms of such bins from below (see latticeShape). Offsets are
// sorted by that bound, and a site scans
// them in order until the bound exceeds the cutoff (or, for the k nearest,
// the k-th best distance so far). Offsets past the cell wrap around with a
// lattice translation, so cutoffs larger than the cell and triclinic cells
// need no special case, and every pair within the cutoff is visited once.
type NeighborFinder struct {
	// Ties chooses among neighbours equidistant with the k-th of a
	// k-nearest search (default TiesByIndex).
	Ties TieOrder
	// Margin (Å), when positive, makes a k-nearest search keep, past the
	// k-th, every neighbour within cutoff that is farther than the k-th by
	// at most Margin: the neighbours tied or nearly tied with the k-th,
	// for a caller that weighs them itself (they come sorted like the
	// rest). It must be finite; TiesAsPymatgen ignores it and keeps k.
	Margin float64

	cart    []Vec3
	binOf   []int32
	binHead []int32 // first atom of each bin, −1 if empty
	next    []int32 // next atom in the same bin
	shift   [][3]int
	offsets []binOffset
	cand    []Neighbor
	pmg     pymatgenFrame
	pmgTied []tiedNeighbor
}

type binOffset struct {
	d     [3]int
	bound float64 // lower bound on the distance (Å)
}

// maxBinsPerAxis bounds the bin grid of very elongated cells.
const maxBinsPerAxis = 64

// maxImagesPerAxis bounds the search of a cutoff that is huge compared with
// a thin cell, where the neighbour count itself would be unreasonable.
const maxImagesPerAxis = 200

// Find fills dst with the neighbours of every site of s within cutoff; with
// k > 0 only the k nearest of each site are kept (with Margin, also those
// within Margin of the k-th).
func (f *NeighborFinder) Find(s *Structure, cutoff float64, k int, dst *NeighborList) error {
	if !(cutoff > 0) || math.IsInf(cutoff, 0) {
		return fmt.Errorf("%w: %v Å", ErrBadCutoff, cutoff)
	}
	if !(f.Margin >= 0) || math.IsInf(f.Margin, 0) {
		return fmt.Errorf("%w: margin %v Å", ErrBadCutoff, f.Margin)
	}
	n := len(s.Species)
	if n == 0 || len(s.Frac) != n {
		return fmt.Errorf("%w: %d species, %d coordinates", ErrBadStructure, n, len(s.Frac))
	}
	lat := s.Lattice
	spacing := lat.PlaneSpacings()

	// Bins of about one atom each, at most maxBinsPerAxis along an axis.
	w := math.Cbrt(lat.Volume() / float64(n))
	var nb [3]int
	for a := 0; a < 3; a++ {
		nb[a] = max(1, min(maxBinsPerAxis, int(spacing[a]/w)))
		if reach := cutoff / spacing[a]; reach > maxImagesPerAxis {
			return fmt.Errorf("%w: cutoff %.3g Å spans %.0f cells along lattice vector %d", ErrBadCutoff, cutoff, reach, a)
		}
	}
	nbins := nb[0] * nb[1] * nb[2]

	// Wrapped positions and bin membership (linked lists per bin).
	f.cart = resize(f.cart, n)
	f.binOf = resize(f.binOf, n)
	f.next = resize(f.next, n)
	f.binHead = resize(f.binHead, nbins)
	for i := range f.binHead {
		f.binHead[i] = -1
	}
	f.shift = resize(f.shift, n)
	shift := f.shift // floor of the stored coordinates
	for i, x := range s.Frac {
		var wf Vec3
		var bin [3]int
		for a := 0; a < 3; a++ {
			fl := math.Floor(x[a])
			wf[a] = x[a] - fl
			shift[i][a] = int(fl)
			if wf[a] >= 1 {
				wf[a] = 0
				shift[i][a]++
			}
			bin[a] = min(nb[a]-1, int(wf[a]*float64(nb[a])))
		}
		f.cart[i] = lat.Cartesian(wf)
		b := int32((bin[0]*nb[1]+bin[1])*nb[2] + bin[2])
		f.binOf[i] = b
		f.next[i] = f.binHead[b]
		f.binHead[b] = int32(i)
	}

	f.offsets = f.offsets[:0]
	lengths, lambda := latticeShape(lat)
	var reach [3]int
	for a := 0; a < 3; a++ {
		reach[a] = int(math.Ceil(cutoff/(spacing[a]/float64(nb[a])))) + 1
	}
	for da := -reach[0]; da <= reach[0]; da++ {
		for db := -reach[1]; db <= reach[1]; db++ {
			for dc := -reach[2]; dc <= reach[2]; dc++ {
				d := [3]int{da, db, dc}
				// The smallest |u_a| over the difference box of this offset.
				plane, norm2 := 0.0, 0.0
				for a := 0; a < 3; a++ {
					u := float64(max(abs(d[a])-1, 0)) / float64(nb[a])
					plane = math.Max(plane, u*spacing[a])
					norm2 += u * lengths[a] * u * lengths[a]
				}
				bound := math.Max(plane, math.Sqrt(lambda*norm2))
				if bound <= cutoff {
					f.offsets = append(f.offsets, binOffset{d, bound})
				}
			}
		}
	}
	slices.SortFunc(f.offsets, func(x, y binOffset) int {
		switch {
		case x.bound < y.bound:
			return -1
		case x.bound > y.bound:
			return 1
		}
		return 0
	})

	dst.start = resize(dst.start, n+1)
	dst.nbrs = dst.nbrs[:0]
	m := lat.Matrix()
	cut2 := cutoff * cutoff
	// A k-nearest search keeps, past the k-th, the neighbours within
	// window of it: Margin's, or with TiesAsPymatgen tieWindow's, for
	// rankTies to choose from.
	window := 0.0
	pymatgen := k > 0 && f.Ties == TiesAsPymatgen
	switch {
	case pymatgen:
		window = tieWindow
	case k > 0:
		window = f.Margin
	}
	framed := false
	for i := 0; i < n; i++ {
		dst.start[i] = len(dst.nbrs)
		bi := int(f.binOf[i])
		bin := [3]int{bi / (nb[1] * nb[2]), (bi / nb[2]) % nb[1], bi % nb[2]}
		ci := f.cart[i]
		f.cand = f.cand[:0]
		limit, limit2 := cutoff, cut2
		for _, o := range f.offsets {
			if o.bound > limit {
				break
			}
			var tb, img [3]int
			for a := 0; a < 3; a++ {
				t := bin[a] + o.d[a]
				img[a] = floorDiv(t, nb[a])
				tb[a] = t - img[a]*nb[a]
			}
			tr := Vec3{
				float64(img[0])*m[0][0] + float64(img[1])*m[1][0] + float64(img[2])*m[2][0],
				float64(img[0])*m[0][1] + float64(img[1])*m[1][1] + float64(img[2])*m[2][1],
				float64(img[0])*m[0][2] + float64(img[1])*m[1][2] + float64(img[2])*m[2][2],
			}
			for j := f.binHead[(tb[0]*nb[1]+tb[1])*nb[2]+tb[2]]; j >= 0; j = f.next[j] {
				cj := f.cart[j]
				dx := cj[0] + tr[0] - ci[0]
				dy := cj[1] + tr[1] - ci[1]
				dz := cj[2] + tr[2] - ci[2]
				d2 := dx*dx + dy*dy + dz*dz
				if d2 > limit2 || (int(j) == i && img == [3]int{}) {
					continue
				}
				nbr := Neighbor{Index: int(j), Distance: math.Sqrt(d2)}
				for a := 0; a < 3; a++ {
					nbr.Image[a] = img[a] + shift[i][a] - shift[j][a]
				}
				if k <= 0 {
					f.cand = append(f.cand, nbr)
					continue
				}
				f.cand = insertBest(f.cand, nbr, k, window)
				if len(f.cand) >= k {
					limit = min(cutoff, f.cand[k-1].Distance+window)
					limit2 = limit * limit
				}
			}
		}
		if k <= 0 {
			slices.SortFunc(f.cand, compareNeighbors)
		}
		if len(f.cand) > k && pymatgen {
			if !framed {
				f.pmg.init(s, cutoff)
				framed = true
			}
			f.cand, f.pmgTied = f.pmg.rankTies(s, i, f.cand, k, f.pmgTied)
		}
		dst.nbrs = append(dst.nbrs, f.cand...)
	}
	dst.start[n] = len(dst.nbrs)
	return nil
}

// insertBest inserts nbr into best (sorted), keeping the k best and, past
// them, those within window (Å) of the k-th; the rest are dropped.
func insertBest(best []Neighbor, nbr Neighbor, k int, window float64) []Neighbor {
	if len(best) >= k && nbr.Distance > best[k-1].Distance+window {
		return best
	}
	if window == 0 && len(best) == k {
		if !nbr.less(best[k-1]) {
			return best
		}
		best = best[:k-1]
	}
	pos := len(best)
	for pos > 0 && nbr.less(best[pos-1]) {
		pos--
	}
	best = append(best, Neighbor{})
	copy(best[pos+1:], best[pos:])
	best[pos] = nbr
	if window > 0 && len(best) > k {
		end := len(best)
		for end > k && best[end-1].Distance > best[k-1].Distance+window {
			end--
		}
		best = best[:end]
	}
	return best
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// latticeShape returns the lengths of the lattice vectors and the smallest
// eigenvalue λ of their cosine matrix C (C_ij = cos of the angle between
// vectors i and j). For a fractional difference u, |u·M|² = (Du)·C·(Du) ≥
// λ·Σ(u_i·|a_i|)², D = diag(lengths): with the distance to the lattice
// planes (|u_i|·d_i ≤ |u·M|) it bounds the distance between two bins from
// below, which lets the search visit bins nearest first.
func latticeShape(l Lattice) (lengths Vec3, lambda float64) {
	var c [3][3]float64
	for i := 0; i < 3; i++ {
		lengths[i] = l.Vector(i).Norm()
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i][j] = l.Vector(i).Dot(l.Vector(j)) / (lengths[i] * lengths[j])
		}
	}
	return lengths, math.Max(0, minEigenSymmetric3(c))
}

// minEigenSymmetric3 returns the smallest eigenvalue of a symmetric 3×3
// matrix by the trigonometric solution of the characteristic cubic
// (Smith, Comm. ACM 4, 168 (1961)).
func minEigenSymmetric3(a [3][3]float64) float64 {
	p1 := a[0][1]*a[0][1] + a[0][2]*a[0][2] + a[1][2]*a[1][2]
	q := (a[0][0] + a[1][1] + a[2][2]) / 3
	if p1 == 0 {
		return math.Min(a[0][0], math.Min(a[1][1], a[2][2]))
	}
	p2 := (a[0][0]-q)*(a[0][0]-q) + (a[1][1]-q)*(a[1][1]-q) + (a[2][2]-q)*(a[2][2]-q) + 2*p1
	p := math.Sqrt(p2 / 6)
	var b [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			b[i][j] = a[i][j] / p
			if i == j {
				b[i][j] -= q / p
			}
		}
	}
	det := b[0][0]*(b[1][1]*b[2][2]-b[1][2]*b[2][1]) - b[0][1]*(b[1][0]*b[2][2]-b[1][2]*b[2][0]) + b[0][2]*(b[1][0]*b[2][1]-b[1][1]*b[2][0])
	r := math.Max(-1, math.Min(1, det/2))
	phi := math.Acos(r) / 3
	// Eigenvalues q + 2p·cos(φ + 2πk/3); the smallest is k = 1.
	return q + 2*p*math.Cos(phi+2*math.Pi/3)
}
