package crystal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Parameters of the structure fingerprint. They are part of the key's
// definition: changing one changes every key.
const (
	// fingerprintRanks is how many nearest atoms of each species per site
	// the first-shell search looks at. The first shell ends at the largest
	// relative gap between consecutive distances among them, so it must be
	// larger than any first shell (cage sites reach 24).
	fingerprintRanks = 32
	// fingerprintDepth is how far the coordination sequence of the bond
	// graph goes. Depth 3 tells diamond (4, 12, 24) from lonsdaleite
	// (4, 12, 25), and hence zinc blende from wurtzite.
	fingerprintDepth = 3
	// similarityNeighbors is how many neighbours of each species per site
	// Dissimilarity compares.
	similarityNeighbors = 8
	// maxFingerprintCutoffGrowths bounds the neighbour-search retries.
	maxFingerprintCutoffGrowths = 16
)

// Fingerprint returns a deterministic key for deduplicating structures:
// the reduced formula, a hyphen, and 16 hex digits of a SHA-256 hash of a
// canonical descriptor (FingerprintDescriptor), e.g. "NaCl-b8318bffeab454b7" for rock salt.
//
// The descriptor is the topology of a bond graph, not a quantisation of
// distances:
//
//  1. First shells. For each site and each species B, the distances to the
//     nearest 32 atoms of B (periodic images included) are sorted and the
//     first shell ends at the largest ratio between consecutive distances:
//     6 Cl around Na in rock salt (next at √3 × farther), 12 Na around Na,
//     4 O around Zn in wurtzite. No threshold is involved, so no common
//     distance ratio can sit on a boundary; the shell changes only when two
//     gaps are nearly equal in size.
//  2. Bond graph. Two atoms are bonded when each is in a first shell of
//     the other (all species, like ones included). Mutuality keeps an atom
//     of a dilute species from bonding to every site that has it as its
//     nearest atom of that species, without a distance threshold.
//  3. Coordination sequences. From each site, the number of atoms of each
//     species at graph distance 1, 2 and 3 (O'Keeffe's coordination
//     sequence, split by species).
//
// A site's signature is its first-shell counts and coordination sequence;
// the key hashes, per element, the multiset of its sites' signatures as
// fractions of its sites. Hence it is invariant to site order, to the cell
// chosen (supercells, sheared or differently reduced cells, origin
// shifts), to rotations and to uniform scaling, and it is robust to noise:
// under Gaussian noise of σ = 0.01 Å per Cartesian coordinate no key of
// the library's prototypes (and their supercells) changed, nor of 48 of
// the 51 golden COD and Materials Project structures; the three that did
// are amorphous 100-atom cells (see the tests).
//
// Limits:
//
//   - It sees topology only: a uniformly scaled, strained or slightly
//     distorted copy (a triclinic distortion of cubic SrTiO3 that keeps
//     every first shell, a tetragonal perovskite) has the key of the
//     undistorted one. That is the point for deduplication, but two
//     genuinely different structures with the same bond graph to depth 3
//     also collide. Dissimilarity compares distances; use it to confirm.
//   - Enantiomorphs (left- and right-handed quartz) and homometric
//     structures have identical distance sets and always collide.
//   - Polytypes and superstructures that differ only beyond three bonds of
//     every site collide.
//   - A site whose two largest distance gaps (among its first 32 of a
//     species) are nearly equal can change its first shell under noise,
//     and so the key: a missed duplicate, never a merge of different
//     coordinations. It was not seen in the test structures but will occur
//     in some strongly distorted, low-symmetry cells.
//   - Amorphous and glassy cells have no shell structure: their keys are
//     not stable under noise, and deduplicating them by key is
//     meaningless.
//   - First shells larger than 31 atoms of one species are not seen whole.
//
// Polymorphs it tells apart include rock salt vs CsCl (6 vs 8 unlike
// neighbours), zinc blende vs wurtzite (coordination sequences differ at
// depth 2 through the cation sublattice, fcc vs hcp, and at depth 3 in the
// bond network), fcc vs hcp vs bcc metals, and rutile vs fluorite vs CdI2
// TiO2.
func Fingerprint(s *Structure) (string, error) {
	f := fingerprinters.Get().(*fingerprinter)
	defer fingerprinters.Put(f)
	desc, err := f.descriptor(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(desc)
	return s.Composition().ReducedFormula() + "-" + hex.EncodeToString(sum[:8]), nil
}

// FingerprintFormula is the reduced formula a Fingerprint key begins with
// (a key holds "<reduced formula>-<hash>"); false when fp is not such a
// key.
func FingerprintFormula(fp string) (string, bool) {
	f, _, ok := strings.Cut(fp, "-")
	return f, ok && f != ""
}

// FingerprintDescriptor returns the canonical text that Fingerprint hashes:
// per element (by symbol), its distinct site signatures with the fraction
// of its sites having each. A signature lists the first-shell size for each
// species (by symbol), then the coordination sequence, each depth giving
// the atoms of each species. Rock salt NaCl (each Na: 6 Cl and 12 Na in
// its first shells; 6 Cl + 12 Na one bond away, 32 + 42 two bonds away,
// 78 + 92 three bonds away; all Na sites alike):
//
//	Cl[12,6/12.6,42.32,92.78×1] Na[6,12/6.12,32.42,78.92×1]
func FingerprintDescriptor(s *Structure) (string, error) {
	f := fingerprinters.Get().(*fingerprinter)
	defer fingerprinters.Put(f)
	desc, err := f.descriptor(s)
	return string(desc), err
}

// fingerprinters recycles the buffers of descriptor computations, which
// run concurrently in the proposer.
var fingerprinters = sync.Pool{New: func() any { return new(fingerprinter) }}

// fingerprinter computes descriptors, keeping its buffers between calls.
// It is not safe for concurrent use.
type fingerprinter struct {
	frac  []Vec3
	nbrs  speciesNeighborList
	shell []int // first-shell size by site and species
	edges [][]bondEdge
	bfs   bondSearch
	// Per-site signatures: site i's is sigs[sigStart[i]:sigStart[i+1]].
	sigs     []byte
	sigStart []int
	order    []int
	out      []byte
}

// descriptor returns FingerprintDescriptor's text in a buffer that the
// next call reuses.
func (f *fingerprinter) descriptor(s *Structure) ([]byte, error) {
	if err := checkStructureShape(s); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	// Wrapped coordinates keep the image offsets of the bond graph small.
	n := len(s.Species)
	f.frac = resize(f.frac, n)
	for i, x := range s.Frac {
		f.frac[i] = Vec3{wrap(x[0]), wrap(x[1]), wrap(x[2])}
	}
	sp := newSpeciesIndex(s)
	nb := &f.nbrs
	if err := nb.find(s.Lattice, f.frac, sp, fingerprintRanks+1, fingerprintRanks); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	// First shells.
	nsp := len(sp.elems)
	f.shell = resize(f.shell, n*nsp)
	for i := range n {
		for b := range nsp {
			f.shell[i*nsp+b] = firstShellSize(nb.of(i, b))
		}
	}
	firstShell := func(i, b int) []nearCand { return nb.of(i, b)[:f.shell[i*nsp+b]] }
	// Keep mutual bonds only: j is in a first shell of i and i in one of
	// j. A dilute species' nearest atom, many ångströms from most sites,
	// would otherwise become a hub bonded to every site.
	if cap(f.edges) < n {
		f.edges = append(f.edges[:cap(f.edges)], make([][]bondEdge, n-cap(f.edges))...)
	}
	f.edges = f.edges[:n]
	for i := range n {
		es := f.edges[i][:0]
		for b := range nsp {
			for _, nbr := range firstShell(i, b) {
				img := unpackImage(nbr.img)
				back := packImage(-img[0], -img[1], -img[2])
				for _, m := range firstShell(int(nbr.j), sp.of[i]) {
					if int(m.j) == i && m.img == back {
						es = append(es, bondEdge{int(nbr.j), img})
						break
					}
				}
			}
		}
		f.edges[i] = es
	}
	// A site's signature: its first-shell sizes, then its coordination
	// sequence.
	f.sigs = f.sigs[:0]
	f.sigStart = resize(f.sigStart, n+1)
	f.bfs.prepare(f.edges, sp, fingerprintDepth)
	for i := range n {
		f.sigStart[i] = len(f.sigs)
		for b := range nsp {
			if b > 0 {
				f.sigs = append(f.sigs, ',')
			}
			f.sigs = strconv.AppendInt(f.sigs, int64(f.shell[i*nsp+b]), 10)
		}
		f.sigs = append(f.sigs, '/')
		f.sigs = f.bfs.coordinationSequence(f.sigs, i)
	}
	f.sigStart[n] = len(f.sigs)
	sig := func(i int) []byte { return f.sigs[f.sigStart[i]:f.sigStart[i+1]] }

	// Per element, the distinct signatures in byte order with the
	// fraction of the element's sites having each.
	out := f.out[:0]
	for a, e := range sp.elems {
		f.order = f.order[:0]
		for i := range n {
			if sp.of[i] == a {
				f.order = append(f.order, i)
			}
		}
		slices.SortFunc(f.order, func(x, y int) int { return bytes.Compare(sig(x), sig(y)) })
		total := len(f.order)
		if a > 0 {
			out = append(out, ' ')
		}
		out = append(out, e.Symbol()...)
		out = append(out, '[')
		for k := 0; k < total; {
			run := k + 1
			for run < total && bytes.Equal(sig(f.order[run]), sig(f.order[k])) {
				run++
			}
			if k > 0 {
				out = append(out, ' ')
			}
			out = append(out, sig(f.order[k])...)
			g := GCD(run-k, total)
			out = append(out, "×"...)
			out = strconv.AppendInt(out, int64((run-k)/g), 10)
			if total/g != 1 {
				out = append(out, '/')
				out = strconv.AppendInt(out, int64(total/g), 10)
			}
			k = run
		}
		out = append(out, ']')
	}
	f.out = out
	return out, nil
}

// bondEdge is a bond to atom J in the cell shifted by Image.
type bondEdge struct {
	J     int
	Image [3]int
}

// firstShellSize returns the number of atoms before the largest ratio of
// consecutive distances among the first fingerprintRanks (sorted) atoms;
// ties go to the smaller shell.
func firstShellSize(nbs []nearCand) int {
	best, size := -1.0, len(nbs)
	for k := 0; k+1 < len(nbs) && k+1 < fingerprintRanks; k++ {
		r := nbs[k+1].d / math.Max(nbs[k].d, 1e-9)
		if r > best {
			best, size = r, k+1
		}
	}
	return size
}

// bondSearch holds the state of the breadth-first searches of the bond
// graph. Visited atoms are marked in a dense array over the atoms of the
// cells a search can reach (each bond shifts the image by at most span
// cells per axis, so depth d stays within d·span), stamped with the
// search's number so that nothing is cleared between searches. In that
// array an atom's index is linear in its image, so a bond is a fixed
// offset. A graph whose reachable box would be too large falls back to a
// hash set of packed nodes.
type bondSearch struct {
	dense  bool
	stamp  []uint32
	cur    uint32
	origin int         // index of image (0, 0, 0), atom 0
	bonds  []denseBond // site i's are bonds[first[i]:first[i+1]]
	first  []int
	front  []denseNode
	next   []denseNode
	counts []int

	seen              map[uint64]struct{}
	sfront, snext     []bfsNode
	sedges            [][]bondEdge
	speciesOf         []int
	numSpecies, depth int
}

// denseBond is a bond to atom to, of species sp, whose image moves the
// dense index by shift.
type denseBond struct {
	to, sp int32
	shift  int
}

// denseNode is atom i of the image whose first atom has dense index base.
type denseNode struct {
	i    int32
	base int
}

// maxBondSearchBox bounds the dense visited array (entries).
const maxBondSearchBox = 1 << 21

// prepare readies searches of the given depth over the bond graph edges.
func (bfs *bondSearch) prepare(edges [][]bondEdge, sp speciesIndex, depth int) {
	n := len(edges)
	var span [3]int
	for _, es := range edges {
		for _, e := range es {
			for a := range 3 {
				span[a] = max(span[a], abs(e.Image[a]))
			}
		}
	}
	var dim [3]int
	size := n
	for a := range 3 {
		dim[a] = 2*depth*span[a] + 1
		size *= dim[a]
	}
	bfs.numSpecies, bfs.depth, bfs.speciesOf = len(sp.elems), depth, sp.of
	bfs.dense = size <= maxBondSearchBox
	if !bfs.dense {
		if bfs.seen == nil {
			bfs.seen = make(map[uint64]struct{}, 1024)
		}
		bfs.sedges = edges
		return
	}
	if cap(bfs.stamp) < size {
		bfs.stamp, bfs.cur = make([]uint32, size), 0
	}
	bfs.stamp = bfs.stamp[:size]
	linear := func(img [3]int) int { return ((img[0]*dim[1]+img[1])*dim[2] + img[2]) * n }
	bfs.origin = linear([3]int{depth * span[0], depth * span[1], depth * span[2]})
	bfs.first = resize(bfs.first, n+1)
	bfs.bonds = bfs.bonds[:0]
	for i, es := range edges {
		bfs.first[i] = len(bfs.bonds)
		for _, e := range es {
			bfs.bonds = append(bfs.bonds, denseBond{int32(e.J), int32(sp.of[e.J]), linear(e.Image)})
		}
	}
	bfs.first[n] = len(bfs.bonds)
}

// coordinationSequence counts, by breadth-first search of the periodic bond
// graph from site i, the atoms of each species at graph distance 1 … depth,
// and appends them to dst as "a.b,c.d,…" (species in symbol order, depths
// separated by commas).
func (bfs *bondSearch) coordinationSequence(dst []byte, i int) []byte {
	bfs.counts = resize(bfs.counts, bfs.numSpecies)
	if !bfs.dense {
		return bfs.sparseSequence(dst, i)
	}
	if bfs.cur++; bfs.cur == 0 {
		clear(bfs.stamp)
		bfs.cur = 1
	}
	cur, stamp := bfs.cur, bfs.stamp
	stamp[bfs.origin+i] = cur
	bfs.front = append(bfs.front[:0], denseNode{int32(i), bfs.origin})
	for d := range bfs.depth {
		last := d == bfs.depth-1
		bfs.next = bfs.next[:0]
		clear(bfs.counts)
		for _, u := range bfs.front {
			for _, e := range bfs.bonds[bfs.first[u.i]:bfs.first[u.i+1]] {
				base := u.base + e.shift
				if stamp[base+int(e.to)] == cur {
					continue
				}
				stamp[base+int(e.to)] = cur
				bfs.counts[e.sp]++
				if !last {
					bfs.next = append(bfs.next, denseNode{e.to, base})
				}
			}
		}
		dst = appendCounts(dst, bfs.counts, d)
		bfs.front, bfs.next = bfs.next, bfs.front
	}
	return dst
}

// sparseSequence is coordinationSequence with a hash set of visited nodes.
func (bfs *bondSearch) sparseSequence(dst []byte, i int) []byte {
	clear(bfs.seen)
	start := bfsNode{i: i}
	bfs.seen[start.key()] = struct{}{}
	bfs.sfront = append(bfs.sfront[:0], start)
	for d := range bfs.depth {
		bfs.snext = bfs.snext[:0]
		clear(bfs.counts)
		for _, u := range bfs.sfront {
			for _, e := range bfs.sedges[u.i] {
				v := bfsNode{e.J, [3]int{u.img[0] + e.Image[0], u.img[1] + e.Image[1], u.img[2] + e.Image[2]}}
				k := v.key()
				if _, done := bfs.seen[k]; done {
					continue
				}
				bfs.seen[k] = struct{}{}
				bfs.snext = append(bfs.snext, v)
				bfs.counts[bfs.speciesOf[v.i]]++
			}
		}
		dst = appendCounts(dst, bfs.counts, d)
		bfs.sfront, bfs.snext = bfs.snext, bfs.sfront
	}
	return dst
}

// appendCounts writes depth d's counts: "a.b", after a comma unless d = 0.
func appendCounts(dst []byte, counts []int, d int) []byte {
	if d > 0 {
		dst = append(dst, ',')
	}
	for b, x := range counts {
		if b > 0 {
			dst = append(dst, '.')
		}
		dst = strconv.AppendInt(dst, int64(x), 10)
	}
	return dst
}

// bfsNode is atom i in the cell shifted by img.
type bfsNode struct {
	i   int
	img [3]int
}

// key packs a node into 64 bits: 22 bits of site index and 14 bits per
// image component. A search of depth 3 never leaves images |n| < 8192,
// and cells have far fewer than 4 million sites.
func (n bfsNode) key() uint64 {
	const off = 1 << 13
	return uint64(n.i)<<42 | uint64(n.img[0]+off)<<28 | uint64(n.img[1]+off)<<14 | uint64(n.img[2]+off)
}

// speciesIndex numbers the elements of a structure by symbol.
type speciesIndex struct {
	elems []Element // by symbol
	of    []int     // site → index into elems
}

func newSpeciesIndex(s *Structure) speciesIndex {
	var sp speciesIndex
	for _, e := range s.Species {
		if !slices.Contains(sp.elems, e) {
			sp.elems = append(sp.elems, e)
		}
	}
	slices.SortFunc(sp.elems, func(a, b Element) int { return strings.Compare(a.Symbol(), b.Symbol()) })
	sp.of = make([]int, len(s.Species))
	for i, e := range s.Species {
		sp.of[i] = slices.Index(sp.elems, e)
	}
	return sp
}

func checkStructureShape(s *Structure) error {
	if s == nil {
		return fmt.Errorf("%w: nil structure", ErrBadStructure)
	}
	if s.Lattice.Volume() == 0 || len(s.Species) == 0 || len(s.Species) != len(s.Frac) {
		return fmt.Errorf("%w: %d species, %d coordinates, cell volume %g Å³", ErrBadStructure, len(s.Species), len(s.Frac), s.Lattice.Volume())
	}
	return nil
}

// speciesNeighborList holds, for every site and every species, the nearest
// atoms of that species (see find).
type speciesNeighborList struct {
	keep, nsp int
	nbrs      []nearCand // site i, species b: nbrs[(i·nsp+b)·keep:][:count]
	count     []int
	members   [][]int
	near      []nearCand
}

// of returns the neighbours of site i of species b, nearest first.
func (l *speciesNeighborList) of(i, b int) []nearCand {
	k := i*l.nsp + b
	return l.nbrs[k*l.keep : k*l.keep+l.count[k]]
}

// find lists, for every site and every species (by index in sp), the keep
// nearest atoms of that species (keep ≤ need), ordered by distance, ties by
// index, then image, periodic images and the site's own images included.
// frac are the sites' fractional coordinates in lattice l.
//
// Each species has its own search radius R_B, so a species with one atom
// in a large cell costs no more than a common one: from site i to each
// atom j of species B, the translations t with |frac_a(x_j + t − x_i)| ≤
// R_B / (plane spacing a) bound the sphere, and within that box only the
// rows of translations that can reach the sphere are visited. R_B starts
// where need atoms fill the sphere on average and grows by 1.3 until every
// site has at least need atoms within it; the keep nearest are kept, in
// order, as they are found.
func (l *speciesNeighborList) find(lat Lattice, frac []Vec3, sp speciesIndex, need, keep int) error {
	n := len(frac)
	l.keep, l.nsp = keep, len(sp.elems)
	l.nbrs = resize(l.nbrs, n*l.nsp*keep)
	l.count = resize(l.count, n*l.nsp)
	if cap(l.members) < l.nsp {
		l.members = make([][]int, l.nsp)
	}
	l.members = l.members[:l.nsp]
	for b := range l.members {
		l.members[b] = l.members[b][:0]
	}
	for i, b := range sp.of {
		l.members[b] = append(l.members[b], i)
	}
	spacing := lat.PlaneSpacings()
	va, vb, vc := lat.Vector(0), lat.Vector(1), lat.Vector(2)
	vc0, vc1, vc2 := vc[0], vc[1], vc[2]
	// Rows along c: for a point q, |q + z·c|² ≤ r² for z between the
	// roots of |c|²z² + 2(q·c)z + |q|² − r².
	cc := vc.Dot(vc)
	// Columns along b (then rows along c): the distance from q + y·b to
	// the line along c is |P(q) + y·P(b)|, P removing the c component.
	pb := vb.Sub(vc.Scale(vb.Dot(vc) / cc))
	pbb := pb.Dot(pb)
	for b, js := range l.members {
		radius := 1.15 * math.Cbrt(3*float64(need)*lat.Volume()/float64(len(js))/(4*math.Pi))
		for attempt := 0; ; attempt++ {
			if attempt == maxFingerprintCutoffGrowths {
				return fmt.Errorf("%w: fewer than %d atoms of %s within %.3g Å", ErrBadCell, need, sp.elems[b], radius)
			}
			var span Vec3
			box := 1.0
			for a := 0; a < 3; a++ {
				span[a] = radius / spacing[a]
				box *= 2*span[a] + 1
			}
			if box > maxNeighborBox {
				return fmt.Errorf("%w: about %.3g lattice translations within %.3g Å (cell too thin or sheared)", ErrBadCell, box, radius)
			}
			r2 := radius * radius
			complete := true
			if cap(l.near) < keep {
				l.near = make([]nearCand, 0, keep)
			}
			for i := 0; i < n; i++ {
				near := l.near[:0]
				within := 0
				for _, j := range js {
					d := frac[j].Sub(frac[i])
					var lo, hi [3]int
					for a := 0; a < 3; a++ {
						lo[a] = int(math.Ceil(-d[a] - span[a]))
						hi[a] = int(math.Floor(-d[a] + span[a]))
					}
					base := lat.Cartesian(d)
					for x := lo[0]; x <= hi[0]; x++ {
						px := base.Add(va.Scale(float64(x)))
						ylo, yhi := lo[1], hi[1]
						if yhi-ylo > shortRow {
							ylo, yhi = reach(px.Sub(vc.Scale(px.Dot(vc)/cc)), pb, pbb, r2, ylo, yhi)
						}
						for y := ylo; y <= yhi; y++ {
							// p = px + y·b + z·c, d² = |p|², in scalars
							// (the same operations as Vec3's Add, Scale
							// and Dot, which the compiler keeps in memory).
							fy := float64(y)
							py0, py1, py2 := px[0]+fy*vb[0], px[1]+fy*vb[1], px[2]+fy*vb[2]
							zlo, zhi := lo[2], hi[2]
							if zhi-zlo > shortRow {
								zlo, zhi = reach(Vec3{py0, py1, py2}, vc, cc, r2, zlo, zhi)
							}
							for z := zlo; z <= zhi; z++ {
								fz := float64(z)
								p0, p1, p2 := py0+fz*vc0, py1+fz*vc1, py2+fz*vc2
								d2 := p0*p0 + p1*p1 + p2*p2
								if d2 > r2 || (j == i && x == 0 && y == 0 && z == 0) {
									continue
								}
								within++
								dist := math.Sqrt(d2)
								if len(near) == keep && dist > near[keep-1].d {
									continue
								}
								near = insertNearest(near, nearCand{dist, packImage(x, y, z), int32(j)}, keep)
							}
						}
					}
				}
				k := i*l.nsp + b
				l.count[k] = copy(l.nbrs[k*keep:(k+1)*keep], near)
				l.near = near
				if within < need {
					complete = false
				}
			}
			if complete {
				break
			}
			radius *= 1.3
		}
	}
	return nil
}

// reach returns the integers t in [lo, hi] for which |q + t·v|² ≤ r2 may
// hold (vv = |v|²): those between the roots of vv·t² + 2(q·v)t + |q|² − r2,
// the interval widened by reachSlack so that rounding never drops a point
// the caller's exact test would keep.
func reach(q, v Vec3, vv, r2 float64, lo, hi int) (int, int) {
	if vv <= 0 {
		return lo, hi
	}
	qv := q.Dot(v)
	disc := qv*qv - vv*(q.Dot(q)-r2)
	if disc < -1e-9*(qv*qv+vv*r2) {
		return 1, 0 // the line misses the sphere
	}
	h := math.Sqrt(max(disc, 0))
	t0 := (-qv-h)/vv - reachSlack
	t1 := (-qv+h)/vv + reachSlack
	if t0 > float64(hi) || t1 < float64(lo) {
		return 1, 0
	}
	return max(lo, int(math.Ceil(t0))), min(hi, int(math.Floor(t1)))
}

// reachSlack (in lattice translations) covers the rounding of reach's
// roots: about 1e-8 relative where the line grazes the sphere and the
// discriminant loses half its digits, far less elsewhere.
const reachSlack = 1e-5

// shortRow is the length of a row of translations below which find
// tries them all rather than solving for the ones in the sphere.
const shortRow = 3

// nearCand is a candidate neighbour while find selects the nearest: its
// distance, index and packed image. Ordered by distance, then index, then
// image (packImage keeps the order), like Neighbor.less.
type nearCand struct {
	d   float64
	img uint64
	j   int32
}

func (a nearCand) less(b nearCand) bool {
	if a.d != b.d {
		return a.d < b.d
	}
	if a.j != b.j {
		return a.j < b.j
	}
	return a.img < b.img
}

// packImage packs an image into 63 bits, 21 per component (offset by
// 2²⁰), so that integer order is lexicographic order. Searches never reach
// 2²⁰ cells along an axis (maxNeighborBox).
func packImage(x, y, z int) uint64 {
	const off = 1 << 20
	return uint64(x+off)<<42 | uint64(y+off)<<21 | uint64(z+off)
}

func unpackImage(k uint64) [3]int {
	const off, mask = 1 << 20, 1<<21 - 1
	return [3]int{int(k>>42&mask) - off, int(k>>21&mask) - off, int(k&mask) - off}
}

// insertNearest inserts c into list (sorted, at most keep long, capacity
// at least keep), dropping the farthest when full.
func insertNearest(list []nearCand, c nearCand, keep int) []nearCand {
	n := len(list)
	if n == keep {
		if !c.less(list[n-1]) {
			return list
		}
		n--
	} else {
		list = list[:n+1]
	}
	for n > 0 && c.less(list[n-1]) {
		list[n] = list[n-1]
		n--
	}
	list[n] = c
	return list
}

// maxNeighborBox bounds the lattice translations tried per atom pair.
const maxNeighborBox = 1 << 18

// Dissimilarity compares two structures of the same reduced composition by
// their distance profiles: for each element A and neighbour species B, the
// distances from each A site to its first 8 B neighbours, divided by the
// length scale (V/N)^(1/3) and averaged over the A sites position by
// position. The result is the largest difference between the two
// structures' profiles, dimensionless (0.01 ≈ 1 % of the interatomic
// scale). It is invariant to site order, cell choice and uniform scaling
// (compare volumes per atom separately if that matters); structures of
// different reduced composition are +Inf apart.
func Dissimilarity(a, b *Structure) (float64, error) {
	pa, err := distanceProfile(a)
	if err != nil {
		return 0, fmt.Errorf("dissimilarity: %w", err)
	}
	pb, err := distanceProfile(b)
	if err != nil {
		return 0, fmt.Errorf("dissimilarity: %w", err)
	}
	if !a.Composition().SameReduced(b.Composition()) {
		return math.Inf(1), nil
	}
	worst := 0.0
	for key, va := range pa {
		vb := pb[key]
		for k := range va {
			worst = math.Max(worst, math.Abs(va[k]-vb[k]))
		}
	}
	return worst, nil
}

// Similar reports whether a and b have the same reduced composition and a
// Dissimilarity of at most tol (e.g. 0.02 for "the same structure up to
// small distortions"). Malformed structures are never similar.
func Similar(a, b *Structure, tol float64) bool {
	d, err := Dissimilarity(a, b)
	return err == nil && d <= tol
}

// distanceProfile maps "A-B" to the mean scaled distances from A sites to
// their first similarityNeighbors B neighbours.
func distanceProfile(s *Structure) (map[string][]float64, error) {
	if err := checkStructureShape(s); err != nil {
		return nil, err
	}
	sp := newSpeciesIndex(s)
	var nbrs speciesNeighborList
	if err := nbrs.find(s.Lattice, s.Frac, sp, similarityNeighbors, similarityNeighbors); err != nil {
		return nil, err
	}
	scale := math.Cbrt(s.VolumePerAtom())
	out := map[string][]float64{}
	count := map[string]int{}
	for i := range s.Species {
		for b, e := range sp.elems {
			key := s.Species[i].Symbol() + "-" + e.Symbol()
			v := out[key]
			if v == nil {
				v = make([]float64, similarityNeighbors)
				out[key] = v
			}
			for k := range v {
				v[k] += nbrs.of(i, b)[k].d / scale
			}
			count[key]++
		}
	}
	for key, v := range out {
		for k := range v {
			v[k] /= float64(count[key])
		}
	}
	return out, nil
}
