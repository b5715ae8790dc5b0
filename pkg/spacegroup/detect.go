package spacegroup

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

const (
	// DefaultSymPrec is the default position tolerance, in Å.
	DefaultSymPrec = 0.01
	// DefaultAngleTolerance is the default angle tolerance, in degrees.
	DefaultAngleTolerance = 5.0
	// MaxSymPrec and MaxAngleTolerance bound the tolerances: beyond them
	// every atom matches every other and no group means anything.
	MaxSymPrec        = 1.0
	MaxAngleTolerance = 45.0
	// maxAttempts and reduceRate: when no space group is found at a
	// tolerance, the search is repeated at tolerances reduced by this rate,
	// as spglib does (20 attempts at 0.95).
	maxAttempts = 20
	reduceRate  = 0.95
)

var (
	// ErrBadCell is returned for a cell detection cannot work on: no atoms,
	// mismatched lengths, non-finite numbers, a singular lattice.
	ErrBadCell = errors.New("bad cell")
	// ErrNotFound is returned when no space group is found at any of the
	// reduced tolerances (a structure whose operations, found within the
	// tolerance, do not form a group of a tabulated type).
	ErrNotFound = errors.New("space group not found")
)

// Options are the tolerances of Detect.
type Options struct {
	// SymPrec is the distance (Å) within which an atom's image counts as
	// an atom of the same type: DefaultSymPrec when 0; at most MaxSymPrec.
	SymPrec float64
	// AngleTolerance is how far (degrees) a lattice angle may change under
	// a lattice operation: DefaultAngleTolerance when 0. A negative value
	// uses SymPrec for angles too (spglib's angle_tolerance < 0); at most
	// MaxAngleTolerance.
	AngleTolerance float64
}

// Check reports tolerances Detect refuses: a position tolerance outside
// (0, MaxSymPrec] Å or an angle tolerance above MaxAngleTolerance; zero
// means the default.
func (o Options) Check() error {
	if o.SymPrec != 0 && !(o.SymPrec > 0 && o.SymPrec <= MaxSymPrec) {
		return fmt.Errorf("position tolerance %g Å: want above 0 and at most %g", o.SymPrec, MaxSymPrec)
	}
	if !(o.AngleTolerance <= MaxAngleTolerance) {
		return fmt.Errorf("angle tolerance %g°: want at most %g", o.AngleTolerance, MaxAngleTolerance)
	}
	return nil
}

// Operation is a symmetry operation x' = Rot·x + Trans of the input cell, in
// its fractional coordinates.
type Operation struct {
	Rot   [3][3]int
	Trans [3]float64
}

// Dataset is the result of Detect.
type Dataset struct {
	// Number is the ITA number, 1–230.
	Number int
	// Symbol is the short international symbol of the type ("P2_1/c",
	// "Fd-3m"), as spglib writes it.
	Symbol string
	// Setting is the standard setting the operations were matched to (see
	// ByNumber); HallNumber, Hall and Choice repeat its fields.
	Setting    *Setting
	HallNumber int
	Hall       string
	Choice     string
	// SymPrec and AngleTolerance are the tolerances at which the group was
	// found (smaller than asked when the search had to reduce them).
	SymPrec, AngleTolerance float64
	// Operations are the space-group operations of the input cell, in its
	// fractional coordinates (pure translations of a supercell included),
	// translations in [0, 1). For a supercell whose lattice lacks some of
	// the group's rotations (a 2×1×1 cell of a cubic crystal), only those
	// it has are listed; Number is still the crystal's group.
	Operations []Operation
	// Transformation and OriginShift carry input fractional coordinates x
	// to those of the standard conventional cell: x_s = Transformation·x +
	// OriginShift (spglib's transformation_matrix and origin_shift). The
	// standard cell vectors are (a_s b_s c_s) = (a b c)·Transformation⁻¹.
	Transformation [3][3]float64
	OriginShift    [3]float64
	// StdLattice (rows, Å) and StdFrac, StdTypes are the standard
	// conventional cell with every atom of it, in the orientation of the
	// input (not rotated to a standard orientation, not symmetrised).
	StdLattice [3][3]float64
	StdFrac    [][3]float64
	StdTypes   []int
	// PrimitiveLattice (rows, Å) is the reduced primitive cell.
	PrimitiveLattice [3][3]float64
	// Equivalent gives, for each input atom, the smallest index of an
	// input atom in its orbit under the group (spglib's equivalent_atoms).
	Equivalent []int
}

// cell is a crystal in fractional coordinates: lattice rows in Å.
type cell struct {
	lat    mat3
	pos    []vec3
	types  []int
	byType map[int][]int
	grids  map[int]*grid // built on first use by find
	tol    float64       // tolerance the grids were built for
}

func newCell(lat mat3, pos []vec3, types []int) *cell {
	c := &cell{lat: lat, pos: pos, types: types, byType: map[int][]int{}}
	for i, t := range types {
		c.byType[t] = append(c.byType[t], i)
	}
	return c
}

// grid bins the atoms of one type by fractional coordinates so that every
// atom within tol of a point lies in the 3×3×3 bins around the point's
// bin: a Cartesian distance d changes fractional coordinate i by at most
// d/s_i, with s_i the spacing of the lattice planes of axis i, so bins of
// width ≥ tol/s_i suffice.
type grid struct {
	n    [3]int
	bins [][]int
}

func (c *cell) buildGrid(typ int, tol float64) *grid {
	atoms := c.byType[typ]
	inv, _ := inverse(c.lat)
	// Side per axis: at most what the tolerance allows, and about the cube
	// root of the atom count (more bins than atoms gains nothing).
	side := int(math.Ceil(math.Cbrt(float64(len(atoms)))))
	g := &grid{}
	for i := 0; i < 3; i++ {
		// Plane spacing of axis i: 1/|column i of lattice⁻¹|.
		s := 1 / norm(vec3{inv[0][i], inv[1][i], inv[2][i]})
		n := int(s / tol)
		g.n[i] = max(1, min(n, side))
	}
	g.bins = make([][]int, g.n[0]*g.n[1]*g.n[2])
	for _, j := range atoms {
		b := g.bin(c.pos[j])
		g.bins[b] = append(g.bins[b], j)
	}
	return g
}

func (g *grid) coord(x float64, i int) int {
	k := int(wrap01(x) * float64(g.n[i]))
	return min(max(k, 0), g.n[i]-1)
}

func (g *grid) bin(x vec3) int {
	return (g.coord(x[0], 0)*g.n[1]+g.coord(x[1], 1))*g.n[2] + g.coord(x[2], 2)
}

// find returns the lowest-numbered atom of type typ within tol (Å) of the
// fractional point x, or −1. Distances are measured with each fractional
// difference reduced to [−1/2, 1/2] (spglib's convention; exact for reduced
// cells).
func (c *cell) find(x vec3, typ int, tol float64) int {
	j, _ := c.search(x, typ, tol, false)
	return j
}

// nearest returns the atom of type typ nearest to x within tol, or −1.
func (c *cell) nearest(x vec3, typ int, tol float64) int {
	j, _ := c.search(x, typ, tol, true)
	return j
}

func (c *cell) search(x vec3, typ int, tol float64, nearest bool) (int, float64) {
	if c.grids == nil || c.tol != tol {
		c.grids, c.tol = map[int]*grid{}, tol
	}
	g := c.grids[typ]
	if g == nil {
		g = c.buildGrid(typ, tol)
		c.grids[typ] = g
	}
	best, bestD := -1, tol*tol
	var ranges [3][]int
	for i := 0; i < 3; i++ {
		k := g.coord(x[i], i)
		switch g.n[i] {
		case 1:
			ranges[i] = []int{0}
		case 2:
			ranges[i] = []int{0, 1}
		default:
			ranges[i] = []int{(k + g.n[i] - 1) % g.n[i], k, (k + 1) % g.n[i]}
		}
	}
	for _, i0 := range ranges[0] {
		for _, i1 := range ranges[1] {
			for _, i2 := range ranges[2] {
				for _, j := range g.bins[(i0*g.n[1]+i1)*g.n[2]+i2] {
					if !nearest && best >= 0 && j > best {
						continue
					}
					d := vecMat(wrapDiff(sub(c.pos[j], x)), c.lat)
					dd := dot(d, d)
					switch {
					case dd > tol*tol:
					case nearest && best >= 0 && (dd > bestD || dd == bestD && j > best):
					default:
						best, bestD = j, dd
					}
				}
			}
		}
	}
	return best, bestD
}

// leastType returns the first atom of the least numerous type.
func (c *cell) leastType() int {
	best := 0
	for i, t := range c.types {
		if len(c.byType[t]) < len(c.byType[c.types[best]]) {
			best = i
		}
	}
	return best
}

// matchOp checks whether (W, t) maps every atom onto an atom of its type
// within tol; it returns the translation refined to the mean displacement,
// or ok false.
func (c *cell) matchOp(w mat3, t vec3, tol float64) (refined vec3, ok bool) {
	var sum vec3
	for k, x := range c.pos {
		y := add(matVec(w, x), t)
		j := c.find(y, c.types[k], tol)
		if j < 0 {
			return t, false
		}
		sum = add(sum, wrapDiff(sub(c.pos[j], y)))
	}
	n := float64(len(c.pos))
	refined = add(t, vec3{sum[0] / n, sum[1] / n, sum[2] / n})
	return refined, true
}

// Detect finds the space group of a crystal: lattice rows a, b, c in Å,
// fractional positions and integer atom types (atomic numbers, or any
// labels). It follows spglib (see the package doc); when no group is found
// at the given tolerance, it tries again at tolerances reduced by 5 % up to
// 20 times, as spglib does.
func Detect(lattice [3][3]float64, frac [][3]float64, types []int, opt Options) (*Dataset, error) {
	if opt.SymPrec == 0 {
		opt.SymPrec = DefaultSymPrec
	}
	if opt.AngleTolerance == 0 {
		opt.AngleTolerance = DefaultAngleTolerance
	}
	if err := opt.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCell, err)
	}
	if len(frac) == 0 || len(frac) != len(types) {
		return nil, fmt.Errorf("%w: %d positions and %d types", ErrBadCell, len(frac), len(types))
	}
	for _, row := range lattice {
		for _, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: lattice has a non-finite entry", ErrBadCell)
			}
		}
	}
	if _, ok := inverse(lattice); !ok {
		return nil, fmt.Errorf("%w: singular lattice", ErrBadCell)
	}
	pos := make([]vec3, len(frac))
	for i, f := range frac {
		for k := range f {
			if math.IsNaN(f[k]) || math.IsInf(f[k], 0) {
				return nil, fmt.Errorf("%w: position %d is not finite", ErrBadCell, i)
			}
			pos[i][k] = wrap01(f[k])
		}
	}
	// Work in a Delaunay-reduced cell, where reducing each fractional
	// difference to [−1/2, 1/2] gives the nearest image; the results are
	// carried back to the input cell at the end.
	red, r, ok := delaunay(lattice)
	if !ok {
		return nil, fmt.Errorf("%w: the lattice cannot be reduced", ErrBadCell)
	}
	rf := toFloat(r)
	rinv, _ := inverse(rf)
	for i := range pos {
		pos[i] = matVec(rinv, pos[i])
		for k := range pos[i] {
			pos[i][k] = wrap01(pos[i][k])
		}
	}
	in := newCell(red, pos, types)
	tol, ang := opt.SymPrec, opt.AngleTolerance
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if ds := detectAt(in, tol, ang); ds != nil {
			ds.toInputBasis(r)
			return ds, nil
		}
		tol *= reduceRate
		if ang > 0 {
			ang *= reduceRate
		}
	}
	return nil, fmt.Errorf("%w at symprec %g Å (reduced down to %.3g Å)", ErrNotFound, opt.SymPrec, tol/reduceRate)
}

// toInputBasis carries the operations and the transformation from the
// reduced cell, whose vectors are the columns of r in the input basis, to
// the input cell: x_red = r⁻¹·x.
func (d *Dataset) toInputBasis(r [3][3]int) {
	rf := toFloat(r)
	rinv, _ := inverse(rf)
	for i, op := range d.Operations {
		w, _ := roundInt(matMul(matMul(rf, toFloat(op.Rot)), rinv), 1e-6)
		t := matVec(rf, op.Trans)
		for k := range t {
			t[k] = wrap01(t[k])
		}
		d.Operations[i] = Operation{Rot: w, Trans: t}
	}
	d.Transformation = matMul(d.Transformation, rinv)
}

// primOp is an operation of the reduced primitive cell.
type primOp struct {
	rot   [3][3]int
	trans vec3
}

// detectAt runs one search at fixed tolerances; nil when it fails.
func detectAt(in *cell, tol, ang float64) *Dataset {
	trans := pureTranslations(in, tol)
	n := len(trans)
	if n == 0 || len(in.pos)%n != 0 {
		return nil
	}
	// The primitive basis in input coordinates (columns), then reduced.
	mp, ok := primitiveBasis(in, trans)
	if !ok {
		return nil
	}
	primLat := matMul(transpose(mp), in.lat)
	redLat, r, ok := delaunay(primLat)
	if !ok {
		return nil
	}
	m := matMul(mp, toFloat(r)) // reduced primitive basis in input coordinates
	minv, ok := inverse(m)
	if !ok {
		return nil
	}
	prim, ok := primitiveCell(in, minv, redLat, n, tol)
	if !ok {
		return nil
	}
	rots := latticeRotations(redLat, tol, ang)
	if len(rots) == 0 {
		return nil
	}
	ops, ok := crystalOps(prim, rots, tol)
	if !ok || !isGroup(ops) {
		return nil
	}
	sys := crystalSystem(ops)
	for _, basis := range conventionalBases(ops, redLat, sys) {
		for _, s := range candidates(ops) {
			p, ok := matchSetting(ops, basis, s, redLat, tol)
			if !ok {
				continue
			}
			ds := buildDataset(in, prim, trans, ops, m, minv, redLat, basis, p, s, tol, ang)
			if !consistent(in, ds, tol) {
				return nil
			}
			return ds
		}
	}
	return nil
}

// consistent checks the result against the input atoms: every operation
// must map every atom within 3·tol of an atom of its type (each atom is
// within tol of its merged primitive position, which the operation maps
// within tol, with a translation refined by averaging). Atoms closer to
// each other than the tolerance can make the primitive cell and the
// operations inconsistent; the search then goes on at a smaller tolerance.
func consistent(in *cell, ds *Dataset, tol float64) bool {
	if len(ds.Operations) == 0 {
		return false
	}
	for _, op := range ds.Operations {
		if _, ok := in.matchOp(toFloat(op.Rot), op.Trans, 3*tol); !ok {
			return false
		}
	}
	return true
}

// pureTranslations returns the translations (input fractional
// coordinates, in [0, 1)) that map the crystal onto itself: candidates
// carry the first atom of the least numerous type onto each atom of its
// type. The zero translation comes first.
func pureTranslations(c *cell, tol float64) []vec3 {
	i0 := c.leastType()
	ident := mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	var out []vec3
	for _, j := range c.byType[c.types[i0]] {
		t := sub(c.pos[j], c.pos[i0])
		if refined, ok := c.matchOp(ident, t, tol); ok {
			if j == i0 {
				refined = vec3{}
			}
			for k := range refined {
				refined[k] = wrap01(refined[k])
			}
			out = append(out, refined)
		}
	}
	return out
}

// primitiveBasis returns three vectors (columns, input fractional
// coordinates) spanning the lattice of the pure translations: each
// translation is snapped to a multiple of 1/n (n translations form a group
// of order n, so n·t is a lattice vector), and the shortest three of the
// translations and cell vectors with determinant 1/n are chosen.
func primitiveBasis(c *cell, trans []vec3) (mat3, bool) {
	n := len(trans)
	if n == 1 {
		return mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, true
	}
	var cands []vec3
	for _, t := range trans[1:] {
		for k := range t {
			t[k] = math.Round(t[k]*float64(n)) / float64(n)
			if t[k] > 0.5 {
				t[k]--
			}
		}
		cands = append(cands, t)
	}
	cands = append(cands, vec3{1, 0, 0}, vec3{0, 1, 0}, vec3{0, 0, 1})
	length := func(v vec3) float64 { return norm(vecMat(v, c.lat)) }
	sort.SliceStable(cands, func(i, j int) bool { return length(cands[i]) < length(cands[j]) })
	want := 1 / float64(n)
	for i := 0; i < len(cands); i++ {
		for j := i + 1; j < len(cands); j++ {
			for k := j + 1; k < len(cands); k++ {
				b := transpose(mat3{cands[i], cands[j], cands[k]})
				d := det(b)
				if math.Abs(math.Abs(d)-want) < 1e-6 {
					if d < 0 {
						for r := 0; r < 3; r++ {
							b[r][2] = -b[r][2]
						}
					}
					return b, true
				}
			}
		}
	}
	return mat3{}, false
}

// primitiveCell maps the input atoms into the reduced primitive cell
// (coordinates x_p = minv·x), merging the n images of each atom into their
// mean position.
func primitiveCell(in *cell, minv mat3, redLat mat3, n int, tol float64) (*cell, bool) {
	var (
		pos   []vec3
		types []int
		count []int
	)
	for i, x := range in.pos {
		y := matVec(minv, x)
		for k := range y {
			y[k] = wrap01(y[k])
		}
		found := -1
		for j, p := range pos {
			if types[j] != in.types[i] {
				continue
			}
			d := vecMat(wrapDiff(sub(y, p)), redLat)
			if dot(d, d) <= tol*tol {
				found = j
				break
			}
		}
		if found < 0 {
			pos = append(pos, y)
			types = append(types, in.types[i])
			count = append(count, 1)
			continue
		}
		// Running mean of the images, each unwrapped next to the first.
		c := float64(count[found])
		d := wrapDiff(sub(y, pos[found]))
		for k := range d {
			pos[found][k] += d[k] / (c + 1)
		}
		count[found]++
	}
	for _, c := range count {
		if c != n {
			return nil, false
		}
	}
	for i := range pos {
		for k := range pos[i] {
			pos[i][k] = wrap01(pos[i][k])
		}
	}
	return newCell(redLat, pos, types), true
}

// delaunay reduces a lattice (rows) by Selling's algorithm (the Delaunay
// reduction of ITA §3.1.2.3): with b4 = −(b1+b2+b3), while some pair has a
// positive scalar product, b_i ↦ −b_i and b_i is added to the other two.
// The reduced basis is the shortest three non-coplanar vectors among the
// four and their pairwise sums, right-handed. r holds the reduced vectors'
// integer coordinates in the input basis (columns): reduced = rᵀ·lattice.
func delaunay(lat mat3) (mat3, [3][3]int, bool) {
	b := [4]vec3{lat[0], lat[1], lat[2], {}}
	c := [4][3]int{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {-1, -1, -1}}
	b[3] = vec3{-(b[0][0] + b[1][0] + b[2][0]), -(b[0][1] + b[1][1] + b[2][1]), -(b[0][2] + b[1][2] + b[2][2])}
	scale := 0.0
	for _, v := range b {
		scale = math.Max(scale, dot(v, v))
	}
	eps := 1e-10 * scale
	for iter := 0; iter < 1000; iter++ {
		changed := false
		for i := 0; i < 4 && !changed; i++ {
			for j := i + 1; j < 4 && !changed; j++ {
				if dot(b[i], b[j]) > eps {
					for k := 0; k < 4; k++ {
						if k != i && k != j {
							b[k] = add(b[k], b[i])
							for q := range c[k] {
								c[k][q] += c[i][q]
							}
						}
					}
					b[i] = vec3{-b[i][0], -b[i][1], -b[i][2]}
					for q := range c[i] {
						c[i][q] = -c[i][q]
					}
					changed = true
				}
			}
		}
		if !changed {
			break
		}
		if iter == 999 {
			return mat3{}, [3][3]int{}, false
		}
	}
	type cand struct {
		v vec3
		c [3]int
	}
	cs := []cand{{b[0], c[0]}, {b[1], c[1]}, {b[2], c[2]}, {b[3], c[3]}}
	for _, p := range [][2]int{{0, 1}, {1, 2}, {2, 0}} {
		var ci [3]int
		for q := range ci {
			ci[q] = c[p[0]][q] + c[p[1]][q]
		}
		cs = append(cs, cand{add(b[p[0]], b[p[1]]), ci})
	}
	sort.SliceStable(cs, func(i, j int) bool { return dot(cs[i].v, cs[i].v) < dot(cs[j].v, cs[j].v) })
	vol := math.Abs(det(lat))
	for i := 0; i < len(cs); i++ {
		for j := i + 1; j < len(cs); j++ {
			for k := j + 1; k < len(cs); k++ {
				red := mat3{cs[i].v, cs[j].v, cs[k].v}
				if math.Abs(math.Abs(det(red))-vol) > 1e-6*vol {
					continue
				}
				var r [3][3]int
				for q := 0; q < 3; q++ {
					r[q][0], r[q][1], r[q][2] = cs[i].c[q], cs[j].c[q], cs[k].c[q]
				}
				if det(red) < 0 {
					for q := 0; q < 3; q++ {
						red[q] = vec3{-red[q][0], -red[q][1], -red[q][2]}
						r[q][0], r[q][1], r[q][2] = -r[q][0], -r[q][1], -r[q][2]
					}
				}
				return red, r, true
			}
		}
	}
	return mat3{}, [3][3]int{}, false
}

// latticeRotations returns the integer matrices W (acting on fractional
// coordinates, columns the images of the cell vectors) that keep the
// metric of a reduced lattice within the tolerances: each image vector's
// length within tol of the original's and each angle within ang degrees
// (spglib's test). Candidate columns are the 26 vectors with entries in
// {−1, 0, 1}, which hold every lattice symmetry of a Delaunay-reduced
// cell. More than 48 hits means the angle tolerance is too loose: it is
// reduced and the search repeated, as spglib does.
func latticeRotations(lat mat3, tol, ang float64) [][3][3]int {
	g := matMul(lat, transpose(lat))
	var neigh [][3]int
	for x := -1; x <= 1; x++ {
		for y := -1; y <= 1; y++ {
			for z := -1; z <= 1; z++ {
				if x != 0 || y != 0 || z != 0 {
					neigh = append(neigh, [3]int{x, y, z})
				}
			}
		}
	}
	lenOf := func(v [3]int) float64 {
		f := vec3{float64(v[0]), float64(v[1]), float64(v[2])}
		return math.Sqrt(dot(f, matVec(g, f)))
	}
	var cols [3][][3]int
	for i := 0; i < 3; i++ {
		li := math.Sqrt(g[i][i])
		for _, v := range neigh {
			if math.Abs(lenOf(v)-li) <= tol {
				cols[i] = append(cols[i], v)
			}
		}
	}
	angle := func(m mat3, i, j int) float64 {
		return math.Acos(math.Max(-1, math.Min(1, m[i][j]/math.Sqrt(m[i][i]*m[j][j])))) * 180 / math.Pi
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var out [][3][3]int
		tooMany := false
		for _, c0 := range cols[0] {
			for _, c1 := range cols[1] {
				for _, c2 := range cols[2] {
					w := [3][3]int{{c0[0], c1[0], c2[0]}, {c0[1], c1[1], c2[1]}, {c0[2], c1[2], c2[2]}}
					if d := det3(w); d != 1 && d != -1 {
						continue
					}
					wf := toFloat(w)
					g2 := matMul(matMul(transpose(wf), g), wf)
					good := true
					for _, p := range [3][2]int{{0, 1}, {0, 2}, {1, 2}} {
						i, j := p[0], p[1]
						if ang > 0 {
							if math.Abs(angle(g, i, j)-angle(g2, i, j)) > ang {
								good = false
								break
							}
							continue
						}
						// spglib's test without an angle tolerance: the
						// displacement the angle change makes, sin(Δθ)·l,
						// within tol.
						li, lj := math.Sqrt(g[i][i]), math.Sqrt(g[j][j])
						l2i, l2j := math.Sqrt(g2[i][i]), math.Sqrt(g2[j][j])
						c1, c2 := g[i][j]/li/lj, g2[i][j]/l2i/l2j
						x := c1*c2 + math.Sqrt(math.Max(0, 1-c1*c1))*math.Sqrt(math.Max(0, 1-c2*c2))
						sin2 := 1 - x*x
						if sin2 > 1e-8 && sin2*(li+l2i)*(lj+l2j)/4 > tol*tol {
							good = false
							break
						}
					}
					if !good {
						continue
					}
					if len(out) == 48 {
						tooMany = true
						break
					}
					out = append(out, w)
				}
				if tooMany {
					break
				}
			}
			if tooMany {
				break
			}
		}
		if !tooMany || ang <= 0 {
			return out
		}
		ang *= reduceRate
	}
	return nil
}

// crystalOps finds, for each lattice rotation, the translation that maps
// the crystal onto itself, refined to the mean displacement of all atoms.
// A rotation with two different translations (possible in a primitive cell
// only when the tolerance is too loose) makes the whole set ambiguous:
// crystalOps then returns ok false, and the search goes on at a smaller
// tolerance, as spglib does when the point symmetry of the primitive cell
// is "broken".
func crystalOps(c *cell, rots [][3][3]int, tol float64) ([]primOp, bool) {
	i0 := c.leastType()
	var ops []primOp
	for _, w := range rots {
		wf := toFloat(w)
		origin := matVec(wf, c.pos[i0])
		found := false
		for _, j := range c.byType[c.types[i0]] {
			t := sub(c.pos[j], origin)
			if refined, ok := c.matchOp(wf, t, tol); ok {
				if found {
					return nil, false
				}
				for k := range refined {
					refined[k] = wrap01(refined[k])
				}
				ops = append(ops, primOp{rot: w, trans: refined})
				found = true
			}
		}
	}
	return ops, true
}

// isGroup reports whether the rotations of ops are closed under
// composition and contain the identity.
func isGroup(ops []primOp) bool {
	set := map[[3][3]int]bool{}
	for _, o := range ops {
		set[o.rot] = true
	}
	if !set[Identity.Rot] {
		return false
	}
	for _, a := range ops {
		for _, b := range ops {
			if !set[imatMul(a.rot, b.rot)] {
				return false
			}
		}
	}
	return true
}
