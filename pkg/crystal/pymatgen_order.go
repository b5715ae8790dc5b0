package crystal

import (
	"cmp"
	"math"
	"slices"
)

// TieOrder says how a k-nearest search chooses among neighbours that are
// equidistant with the k-th: which of them are kept, and in what order.
type TieOrder int

const (
	// TiesByIndex keeps the lower site index, then the lower image.
	TiesByIndex TieOrder = iota
	// TiesAsPymatgen reproduces pymatgen's Structure.get_all_neighbors
	// followed by a stable sort on distance, as CGCNN builds its graph
	// (pymatgen 2022.11.7, the version of the published reference
	// predictions). It is exact when the structure's lattice matrix and
	// coordinates are pymatgen's to the bit (LatticeFromParameters matches
	// pymatgen for right angles). See pymatgenFrame.
	TiesAsPymatgen
)

// tieWindow is the width (Å) of the group of near-equidistant neighbours
// that TiesAsPymatgen re-ranks at the k-th place. Distances of symmetry
// equivalent neighbours differ by rounding noise (~1e-15 Å); re-ranking a
// wider group is harmless, since pymatgen's own distances order truly
// different ones the same way.
const tieWindow = 1e-9

// pymatgenFrame reproduces the arithmetic of pymatgen's neighbour search
// (pymatgen.optimization.neighbors.find_points_in_spheres, called by
// Structure.get_all_neighbors) closely enough to predict, for one centre,
// the distance pymatgen computes for a neighbour to the last bit and the
// position at which its list names that neighbour. CGCNN sorts that list
// by distance with Python's stable sort, so equidistant neighbours keep
// pymatgen's listing order, and which of them survive the cut at the 12th
// depends on both: on the rounding of pymatgen's distances (a cubic cell
// built from its parameters has off-diagonal lattice elements of order
// 1e-16, from cos 90°), and, for bit-identical distances, on the listing
// order. The published predictions depend on that choice (up to 0.5 eV in
// efermi on the golden perovskites), so the featuriser reproduces it.
//
// What is reproduced, in pymatgen's order of floating-point operations
// (the search's compiled code never fuses a product with a sum; numpy's
// dot, through OpenBLAS, does):
//   - the sites' Cartesian coordinates frac·M (numpy's dot: a chain of
//     fused multiply-adds);
//   - the search's own fractional coordinates, from M⁻¹ by cofactors, wrapped
//     into [0, 1) with Python's modulo, and back to Cartesian;
//   - each image: i·a + j·b + k·c + position in the cell, and its squared
//     distance (Δx² + Δy²) + Δz²;
//   - the listing order: the centre's cube and its 26 neighbours (cubes of
//     edge r from the lower corner of the centres' bounding box widened by
//     r + 1e-8), in lexicographic order of the cube offset, and within a
//     cube the images in reverse order of (i, j, k, site).
type pymatgenFrame struct {
	m       [3][3]float64
	cart    []Vec3 // the sites' Cartesian coordinates, as pymatgen's site.coords
	wrapped []Vec3 // the search's wrapped fractional coordinates
	inCell  []Vec3 // wrapped · M
	lowest  Vec3   // lower corner of the cube grid
	edge    float64
}

// pymatgenTol is get_all_neighbors' default numerical tolerance, which
// find_points_in_spheres uses to widen its search box.
const pymatgenTol = 1e-8

// prod returns x·y rounded to float64 on its own, so that a following
// addition is never fused with it (Go may fuse x*y + z on some
// architectures; pymatgen's compiled code does not).
func prod(x, y float64) float64 { return float64(x * y) }

func (p *pymatgenFrame) init(s *Structure, cutoff float64) {
	n := len(s.Frac)
	p.m = s.Lattice.Matrix()
	m := &p.m
	p.cart = resize(p.cart, n)
	p.wrapped = resize(p.wrapped, n)
	p.inCell = resize(p.inCell, n)

	// M⁻¹ as the search computes it: cofactors over the determinant.
	det := prod(m[0][0], prod(m[1][1], m[2][2])-prod(m[1][2], m[2][1])) +
		prod(m[0][1], prod(m[1][2], m[2][0])-prod(m[1][0], m[2][2])) +
		prod(m[0][2], prod(m[1][0], m[2][1])-prod(m[1][1], m[2][0]))
	var inv [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			inv[i][j] = (prod(m[(j+1)%3][(i+1)%3], m[(j+2)%3][(i+2)%3]) -
				prod(m[(j+2)%3][(i+1)%3], m[(j+1)%3][(i+2)%3])) / det
		}
	}
	for l, f := range s.Frac {
		p.cart[l] = blasRowTimes(f, m)
		fc := rowTimes(p.cart[l], &inv)
		var w Vec3
		for a := 0; a < 3; a++ {
			w[a] = pyMod1(fc[a])
		}
		p.wrapped[l] = w
		p.inCell[l] = rowTimes(w, m)
	}
	// The search is run with r as a C float; 8 Å (CGCNN's radius) is exact.
	r := float64(float32(cutoff))
	p.edge = r
	if r < 0.1 {
		p.edge = 0.1
	}
	for a := 0; a < 3; a++ {
		lo := p.cart[0][a]
		for _, c := range p.cart {
			lo = math.Min(lo, c[a])
		}
		p.lowest[a] = lo - r - pymatgenTol
	}
}

// blasRowTimes returns v·M as numpy's dot of a vector and a 3×3 matrix
// computes it through OpenBLAS's gemv: a chain of fused multiply-adds,
// v₂·M₂ⱼ + (v₁·M₁ⱼ + v₀·M₀ⱼ).
func blasRowTimes(v Vec3, m *[3][3]float64) Vec3 {
	var out Vec3
	for j := 0; j < 3; j++ {
		out[j] = math.FMA(v[2], m[2][j], math.FMA(v[1], m[1][j], v[0]*m[0][j]))
	}
	return out
}

// rowTimes returns v·M summed in index order without fused operations, as
// the search's own compiled matmul computes it.
func rowTimes(v Vec3, m *[3][3]float64) Vec3 {
	var out Vec3
	for j := 0; j < 3; j++ {
		out[j] = prod(v[0], m[0][j]) + prod(v[1], m[1][j]) + prod(v[2], m[2][j])
	}
	return out
}

// pyMod1 is Python's x % 1.0 on floats: fmod, shifted into [0, 1) for
// negative x (so a tiny negative x wraps to exactly 1.0 after rounding).
func pyMod1(x float64) float64 {
	r := math.Mod(x, 1)
	if r < 0 {
		r++
	}
	return r
}

// pymatgenKey is a neighbour's place in CGCNN's sorted list: pymatgen's
// distance, then its listing position (cube rank, then the image and site
// in reverse).
type pymatgenKey struct {
	dist  float64
	cube  int
	image [3]int
	site  int
}

// compare orders neighbours as CGCNN's list does: by pymatgen's distance,
// then by listing position (cube rank ascending, image and site
// descending).
func (k pymatgenKey) compare(o pymatgenKey) int {
	if c := cmp.Compare(k.dist, o.dist); c != 0 {
		return c
	}
	if c := cmp.Compare(k.cube, o.cube); c != 0 {
		return c
	}
	for a := 0; a < 3; a++ {
		if c := cmp.Compare(o.image[a], k.image[a]); c != 0 {
			return c
		}
	}
	return cmp.Compare(o.site, k.site)
}

// key computes where pymatgen lists neighbour nb of site c, and at what
// distance. s must be the structure the frame was built from.
func (p *pymatgenFrame) key(s *Structure, c int, nb Neighbor) pymatgenKey {
	l := nb.Index
	// The neighbour's image relative to the search's wrapped position.
	var img [3]int
	for a := 0; a < 3; a++ {
		img[a] = nb.Image[a] + int(math.Round(s.Frac[l][a]-p.wrapped[l][a]))
	}
	m := &p.m
	var pos Vec3
	for a := 0; a < 3; a++ {
		pos[a] = prod(float64(img[0]), m[0][a]) + prod(float64(img[1]), m[1][a]) + prod(float64(img[2]), m[2][a]) + p.inCell[l][a]
	}
	ctr := p.cart[c]
	d2 := 0.0
	for a := 0; a < 3; a++ {
		d := pos[a] - ctr[a]
		d2 += prod(d, d)
	}
	cube := 0
	for a := 0; a < 3; a++ {
		delta := p.cubeIndex(pos[a], a) - p.cubeIndex(ctr[a], a)
		cube = 3*cube + max(-1, min(1, delta)) + 1
	}
	return pymatgenKey{dist: math.Sqrt(d2), cube: cube, image: img, site: l}
}

func (p *pymatgenFrame) cubeIndex(x float64, axis int) int {
	return int(math.Floor((x - p.lowest[axis] + 1e-8) / p.edge))
}

// tiedNeighbor is a neighbour with its place in pymatgen's list.
type tiedNeighbor struct {
	nb  Neighbor
	key pymatgenKey
}

// rankTies re-orders the near-equidistant group around the k-th neighbour
// of site c (cand sorted by distance, possibly longer than k) as pymatgen
// and CGCNN's stable sort would, and returns the first k. buf is scratch
// space, returned for reuse.
func (p *pymatgenFrame) rankTies(s *Structure, c int, cand []Neighbor, k int, buf []tiedNeighbor) ([]Neighbor, []tiedNeighbor) {
	if len(cand) <= k {
		return cand, buf
	}
	kth := cand[k-1].Distance
	lo := k - 1
	for lo > 0 && kth-cand[lo-1].Distance <= tieWindow {
		lo--
	}
	group := cand[lo:]
	buf = buf[:0]
	for _, nb := range group {
		buf = append(buf, tiedNeighbor{nb, p.key(s, c, nb)})
	}
	slices.SortFunc(buf, func(x, y tiedNeighbor) int { return x.key.compare(y.key) })
	for i, t := range buf {
		group[i] = t.nb
	}
	return cand[:k], buf
}
