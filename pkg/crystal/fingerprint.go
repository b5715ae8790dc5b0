package crystal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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
	desc, err := FingerprintDescriptor(s)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(desc))
	return s.Composition().ReducedFormula() + "-" + hex.EncodeToString(sum[:8]), nil
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
	if err := checkStructureShape(s); err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	// Wrapped coordinates keep the image offsets of the bond graph small.
	s = s.Wrapped()
	sp := newSpeciesIndex(s)
	nbrs, err := speciesNeighbors(s, sp, fingerprintRanks+1)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	n := len(s.Species)
	adj := make([]map[bondEdge]bool, n)
	for i := range adj {
		adj[i] = map[bondEdge]bool{}
	}
	shells := make([]string, n)
	for i := range n {
		cns := make([]string, len(sp.elems))
		for b, nbs := range nbrs[i] {
			cn := firstShellSize(nbs)
			cns[b] = strconv.Itoa(cn)
			for _, nb := range nbs[:cn] {
				adj[i][bondEdge{nb.Index, nb.Image}] = true
			}
		}
		shells[i] = strings.Join(cns, ",")
	}
	// Keep mutual bonds only: j is in a first shell of i and i in one of
	// j. A dilute species' nearest atom, many ångströms from most sites,
	// would otherwise become a hub bonded to every site.
	edges := make([][]bondEdge, n)
	for i, m := range adj {
		for e := range m {
			if adj[e.J][bondEdge{i, [3]int{-e.Image[0], -e.Image[1], -e.Image[2]}}] {
				edges[i] = append(edges[i], e)
			}
		}
	}
	sigs := make([]string, n)
	bfs := bondSearch{seen: make(map[uint64]struct{}, 1024)}
	for i := range n {
		sigs[i] = shells[i] + "/" + bfs.coordinationSequence(edges, sp, i, fingerprintDepth)
	}
	var out []string
	for a, e := range sp.elems {
		count := map[string]int{}
		total := 0
		for i := range n {
			if sp.of[i] == a {
				count[sigs[i]]++
				total++
			}
		}
		keys := make([]string, 0, len(count))
		for k := range count {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			g := gcd(count[k], total)
			frac := strconv.Itoa(count[k] / g)
			if total/g != 1 {
				frac += "/" + strconv.Itoa(total/g)
			}
			keys[i] = k + "×" + frac
		}
		out = append(out, e.Symbol()+"["+strings.Join(keys, " ")+"]")
	}
	return strings.Join(out, " "), nil
}

// bondEdge is a bond to atom J in the cell shifted by Image.
type bondEdge struct {
	J     int
	Image [3]int
}

// firstShellSize returns the number of atoms before the largest ratio of
// consecutive distances among the first fingerprintRanks (sorted) atoms;
// ties go to the smaller shell.
func firstShellSize(nbs []Neighbor) int {
	best, size := -1.0, len(nbs)
	for k := 0; k+1 < len(nbs) && k+1 < fingerprintRanks; k++ {
		r := nbs[k+1].Distance / math.Max(nbs[k].Distance, 1e-9)
		if r > best {
			best, size = r, k+1
		}
	}
	return size
}

// coordinationSequence counts, by breadth-first search of the periodic bond
// graph from site i, the atoms of each species at graph distance 1 … depth,
// written "a.b,c.d,…" (species in symbol order, depths separated by
// commas). The search state is kept in bfs between calls.
func (bfs *bondSearch) coordinationSequence(edges [][]bondEdge, sp speciesIndex, i, depth int) string {
	clear(bfs.seen)
	start := bfsNode{i: i}
	bfs.seen[start.key()] = struct{}{}
	bfs.front = append(bfs.front[:0], start)
	parts := make([]string, 0, depth)
	counts := make([]int, len(sp.elems))
	for range depth {
		bfs.next = bfs.next[:0]
		clear(counts)
		for _, u := range bfs.front {
			for _, e := range edges[u.i] {
				v := bfsNode{e.J, [3]int{u.img[0] + e.Image[0], u.img[1] + e.Image[1], u.img[2] + e.Image[2]}}
				k := v.key()
				if _, done := bfs.seen[k]; done {
					continue
				}
				bfs.seen[k] = struct{}{}
				bfs.next = append(bfs.next, v)
				counts[sp.of[v.i]]++
			}
		}
		c := make([]string, len(counts))
		for b, x := range counts {
			c[b] = strconv.Itoa(x)
		}
		parts = append(parts, strings.Join(c, "."))
		bfs.front, bfs.next = bfs.next, bfs.front
	}
	return strings.Join(parts, ",")
}

// bondSearch holds the buffers of the breadth-first searches.
type bondSearch struct {
	seen        map[uint64]struct{}
	front, next []bfsNode
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

// speciesNeighbors returns, for every site and every species (by index in
// sp), the atoms of that species sorted by distance (ties by index, then
// image), periodic images and the site's own images included: at least
// need of them, and every atom of the species within the distance of the
// last one listed. Each species has its own search radius R_B, so a
// species with one atom in a large cell costs no more than a common one:
// from site i to each atom j of species B, the translations t with
// |frac_a(x_j + t − x_i)| ≤ R_B / (plane spacing a) are tried, the box
// that bounds the sphere. R_B starts where need atoms fill the sphere on
// average and grows until every site has need.
func speciesNeighbors(s *Structure, sp speciesIndex, need int) ([][][]Neighbor, error) {
	n := len(s.Species)
	members := make([][]int, len(sp.elems))
	for i, b := range sp.of {
		members[b] = append(members[b], i)
	}
	out := make([][][]Neighbor, n)
	for i := range out {
		out[i] = make([][]Neighbor, len(sp.elems))
	}
	spacing := s.Lattice.PlaneSpacings()
	va, vb, vc := s.Lattice.Vector(0), s.Lattice.Vector(1), s.Lattice.Vector(2)
	for b, js := range members {
		radius := 1.15 * math.Cbrt(3*float64(need)*s.Volume()/float64(len(js))/(4*math.Pi))
		for attempt := 0; ; attempt++ {
			if attempt == maxFingerprintCutoffGrowths {
				return nil, fmt.Errorf("%w: fewer than %d atoms of %s within %.3g Å", ErrBadCell, need, sp.elems[b], radius)
			}
			var span Vec3
			box := 1.0
			for a := 0; a < 3; a++ {
				span[a] = radius / spacing[a]
				box *= 2*span[a] + 1
			}
			if box > maxNeighborBox {
				return nil, fmt.Errorf("%w: about %.3g lattice translations within %.3g Å (cell too thin or sheared)", ErrBadCell, box, radius)
			}
			r2 := radius * radius
			complete := true
			for i := 0; i < n; i++ {
				list := out[i][b][:0]
				for _, j := range js {
					d := s.Frac[j].Sub(s.Frac[i])
					var lo, hi [3]int
					for a := 0; a < 3; a++ {
						lo[a] = int(math.Ceil(-d[a] - span[a]))
						hi[a] = int(math.Floor(-d[a] + span[a]))
					}
					base := s.Lattice.Cartesian(d)
					for x := lo[0]; x <= hi[0]; x++ {
						px := base.Add(va.Scale(float64(x)))
						for y := lo[1]; y <= hi[1]; y++ {
							py := px.Add(vb.Scale(float64(y)))
							for z := lo[2]; z <= hi[2]; z++ {
								p := py.Add(vc.Scale(float64(z)))
								d2 := p.Dot(p)
								if d2 > r2 || (j == i && x == 0 && y == 0 && z == 0) {
									continue
								}
								list = append(list, Neighbor{Index: j, Distance: math.Sqrt(d2), Image: [3]int{x, y, z}})
							}
						}
					}
				}
				out[i][b] = list
				if len(list) < need {
					complete = false
				}
			}
			if complete {
				break
			}
			radius *= 1.3
		}
		for i := range out {
			slices.SortFunc(out[i][b], compareNeighbors)
		}
	}
	return out, nil
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
	nbrs, err := speciesNeighbors(s, sp, similarityNeighbors)
	if err != nil {
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
				v[k] += nbrs[i][b][k].Distance / scale
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
