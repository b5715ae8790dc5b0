package match

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrBadStructure is returned for a structure the matcher cannot work on:
// nil, no sites, mismatched lists, coordinates that are not finite, or a
// lattice that does not reduce.
var ErrBadStructure = errors.New("match: bad structure")

// Reduced is a structure prepared for matching: its primitive cell (when
// Options ask for one), Niggli-reduced, sites wrapped into [0, 1) and
// grouped by element. It is immutable and may be matched against any
// number of others (an index keeps one per known structure).
type Reduced struct {
	lat     mat3 // Niggli-reduced rows, Å
	vol     float64
	species []crystal.Element // sorted by (count, Z), each run contiguous
	frac    []vec3
	// runs[i] is the half-open range of species runs[i].el in species/frac.
	runs    []run
	formula string
	// Cells is how many primitive cells the input cell held (1 when the
	// input was primitive or primitive reduction was off).
	cells int
}

type run struct {
	el         crystal.Element
	start, end int
}

// Formula is the reduced formula (pymatgen's, as crystal writes it).
func (r *Reduced) Formula() string { return r.formula }

// NumSites is the number of sites of the reduced (primitive) cell.
func (r *Reduced) NumSites() int { return len(r.species) }

// Volume is the volume of the reduced cell, Å³.
func (r *Reduced) Volume() float64 { return r.vol }

// Cells is how many reduced cells the input cell held.
func (r *Reduced) Cells() int { return r.cells }

// Structure returns the reduced cell as a crystal structure.
func (r *Reduced) Structure() (*crystal.Structure, error) {
	l, err := crystal.NewLattice(r.lat)
	if err != nil {
		return nil, err
	}
	frac := make([]crystal.Vec3, len(r.frac))
	for i, f := range r.frac {
		frac[i] = crystal.Vec3(f)
	}
	return crystal.NewStructure(l, r.species, frac)
}

// Reduce prepares a structure for matching: Niggli reduction, then (unless
// opt.NoPrimitive) the primitive cell found within opt.PrimitiveTol, again
// Niggli-reduced, in the order pymatgen's StructureMatcher takes. See the
// package doc.
func Reduce(s *crystal.Structure, opt Options) (*Reduced, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, err
	}
	if s == nil || len(s.Species) == 0 || len(s.Species) != len(s.Frac) {
		return nil, fmt.Errorf("%w: no sites or mismatched site lists", ErrBadStructure)
	}
	for i, f := range s.Frac {
		if !s.Species[i].Valid() {
			return nil, fmt.Errorf("%w: site %d has no element", ErrBadStructure, i)
		}
		for _, x := range f {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: site %d coordinate is %v", ErrBadStructure, i, x)
			}
		}
	}
	lat := s.Lattice.Matrix()
	if v := math.Abs(det(lat)); !(v > 1e-6) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("%w: cell volume %g Å³", ErrBadStructure, v)
	}
	frac := make([]vec3, len(s.Frac))
	for i, f := range s.Frac {
		frac[i] = vec3(f)
	}
	c, err := niggliCell(lat, frac)
	if err != nil {
		return nil, err
	}
	r := newReduced(c.lat, s.Species, c.frac, 1)
	if opt.NoPrimitive {
		return r, nil
	}
	// Each pass finds every pure translation at once; a second pass can
	// find more only when averaging the images moved atoms into register.
	for pass := 0; pass < 4; pass++ {
		p, n, err := primitive(r, opt.PrimitiveTol)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			break
		}
		p.cells = r.cells * n
		r = p
	}
	return r, nil
}

// cell is a lattice and fractional positions.
type cell struct {
	lat  mat3
	frac []vec3
}

// niggliCell Niggli-reduces the lattice and carries the sites into it,
// wrapped into [0, 1).
func niggliCell(lat mat3, frac []vec3) (cell, error) {
	red, t, ok := niggli(lat)
	if !ok {
		return cell{}, fmt.Errorf("%w: the lattice does not Niggli-reduce", ErrBadStructure)
	}
	// Rows of red are t·lat, so Cartesian x = f·lat = (f·t⁻¹)·red.
	tinv := toFloat(unimodularInverse(t))
	out := make([]vec3, len(frac))
	for i, f := range frac {
		g := rowTimes(f, tinv)
		for k := range g {
			g[k] = wrap01(g[k])
		}
		out[i] = g
	}
	return cell{red, out}, nil
}

// newReduced groups the sites by element, the least numerous first (ties
// by atomic number), keeping their order within each element.
func newReduced(lat mat3, species []crystal.Element, frac []vec3, cells int) *Reduced {
	count := map[crystal.Element]int{}
	for _, e := range species {
		count[e]++
	}
	idx := make([]int, len(species))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := species[i], species[j]
		if c := cmp.Compare(count[a], count[b]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	r := &Reduced{lat: lat, vol: math.Abs(det(lat)), cells: cells,
		species: make([]crystal.Element, len(idx)), frac: make([]vec3, len(idx))}
	for k, i := range idx {
		r.species[k] = species[i]
		r.frac[k] = frac[i]
		if k == 0 || species[i] != r.species[k-1] {
			r.runs = append(r.runs, run{el: species[i], start: k})
		}
		r.runs[len(r.runs)-1].end = k + 1
	}
	items := make([]crystal.ElementAmount, len(r.runs))
	for i, ru := range r.runs {
		items[i] = crystal.ElementAmount{Element: ru.el, Amount: float64(ru.end - ru.start)}
	}
	comp, err := crystal.NewComposition(items...)
	if err == nil {
		r.formula = comp.ReducedFormula()
	}
	return r
}

// primitive looks for the pure translations of a reduced cell: vectors
// that carry every atom onto an atom of its element within tol (Å) along
// each cell vector (a box, as pymatgen's get_primitive_structure measures
// it). The translations of a crystal with g formula units per cell (g the
// greatest common divisor of the element counts) are multiples of 1/g,
// so each candidate (carrying the first atom of the least numerous
// element onto another of its element) is refined to the mean
// displacement of all atoms, snapped to that grid, and kept when it maps
// every atom within tol. With n translations (the identity included) the
// translations and the cell vectors generate a lattice n times finer,
// whose basis is the Hermite normal form of their integer coordinates in
// units of 1/g; the atoms are carried into it and the n images of each
// merged at their mean position. It returns the reduced primitive cell
// and n; n = 1 (and the input) when there is no translation, or when the
// translations found do not form a group or the images do not fall into
// groups of n (a tolerance comparable to the distances between atoms).
func primitive(r *Reduced, tol float64) (*Reduced, int, error) {
	g := 0
	for _, ru := range r.runs {
		g = crystal.GCD(g, ru.end-ru.start)
	}
	if g == 1 {
		return r, 1, nil
	}
	ftol := boxTol(r.lat, tol)
	first := r.runs[0]
	p0 := r.frac[first.start]
	seen := map[[3]int]bool{{}: true}
	gens := [][3]int{{g, 0, 0}, {0, g, 0}, {0, 0, g}}
	n := 1
	for j := first.start + 1; j < first.end; j++ {
		t, ok := r.refine(wrapHalf(sub(r.frac[j], p0)), scale(2, ftol))
		if !ok {
			continue
		}
		var k [3]int
		var snapped vec3
		for a := range t {
			x := math.Round(t[a] * float64(g))
			x -= float64(g) * math.Floor(x/float64(g)) // into [0, g)
			k[a] = int(x)
			snapped[a] = x / float64(g)
		}
		if seen[k] || !r.isTranslation(snapped, ftol) {
			continue
		}
		seen[k] = true
		gens = append(gens, k)
		n++
	}
	if n == 1 {
		return r, 1, nil
	}
	// The lattice the translations generate must have exactly n points per
	// cell: a set that is not closed under addition is not a group.
	basis := hermiteBasis(gens)
	if d := abs(idet(basis)); d*n != g*g*g {
		return r, 1, nil
	}
	var q mat3 // rows: primitive vectors in the old fractional basis
	for i := range basis {
		for k := range basis[i] {
			q[i][k] = float64(basis[i][k]) / float64(g)
		}
	}
	if det(q) < 0 {
		q[2] = scale(-1, q[2])
	}
	plat := matMul(q, r.lat)
	qinv, ok := inverse(q)
	if !ok {
		return r, 1, nil
	}
	frac := make([]vec3, len(r.frac))
	for i, f := range r.frac {
		frac[i] = rowTimes(f, qinv)
	}
	c, err := niggliCell(plat, frac)
	if err != nil {
		return nil, 0, err
	}
	species, merged, ok := mergeImages(c, r.species, n, tol)
	if !ok {
		return r, 1, nil
	}
	return newReduced(c.lat, species, merged, r.cells), n, nil
}

// refine returns t plus the mean displacement between each atom moved by t
// and its nearest atom of the same element; ok is false when some atom has
// none within ftol (fractional, per axis).
func (r *Reduced) refine(t, ftol vec3) (vec3, bool) {
	var sum vec3
	for _, ru := range r.runs {
		for i := ru.start; i < ru.end; i++ {
			x := add(r.frac[i], t)
			best, bestD := vec3{}, math.Inf(1)
			for j := ru.start; j < ru.end; j++ {
				d := wrapHalf(sub(r.frac[j], x))
				if !inBox(d, ftol) {
					continue
				}
				if _, d2 := shortestImage(d, r.lat); d2 < bestD {
					best, bestD = d, d2
				}
			}
			if math.IsInf(bestD, 1) {
				return vec3{}, false
			}
			sum = add(sum, best)
		}
	}
	return add(t, scale(1/float64(len(r.frac)), sum)), true
}

// isTranslation reports whether x ↦ x + t maps every atom within ftol
// (fractional, per axis) of an atom of its element.
func (r *Reduced) isTranslation(t, ftol vec3) bool {
	for _, ru := range r.runs {
		for i := ru.start; i < ru.end; i++ {
			x := add(r.frac[i], t)
			found := false
			for j := ru.start; j < ru.end; j++ {
				if inBox(sub(r.frac[j], x), ftol) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// mergeImages groups the atoms of a cell n times too small for them, which
// therefore holds n images of each, by element and distance (within tol):
// each group must hold exactly n atoms, and becomes one at their mean
// position.
func mergeImages(c cell, species []crystal.Element, n int, tol float64) ([]crystal.Element, []vec3, bool) {
	ftol := boxTol(c.lat, tol)
	used := make([]bool, len(species))
	var outS []crystal.Element
	var outF []vec3
	for i := range species {
		if used[i] {
			continue
		}
		used[i] = true
		sum := vec3{}
		count := 1
		for j := i + 1; j < len(species); j++ {
			if used[j] || species[j] != species[i] {
				continue
			}
			// The image of atom j nearest to atom i.
			if d := wrapHalf(sub(c.frac[j], c.frac[i])); inBox(d, ftol) {
				sum = add(sum, d)
				used[j] = true
				count++
			}
		}
		if count != n {
			return nil, nil, false
		}
		p := add(c.frac[i], scale(1/float64(n), sum))
		for k := range p {
			p[k] = wrap01(p[k])
		}
		outS = append(outS, species[i])
		outF = append(outF, p)
	}
	return outS, outF, true
}

// hermiteBasis returns a basis (rows) of the lattice of integer vectors
// the rows of gens generate, by integer row reduction (Euclid's algorithm
// column by column): the Hermite normal form, up to signs. gens must span
// three dimensions.
func hermiteBasis(gens [][3]int) imat3 {
	rows := slices.Clone(gens)
	var out imat3
	for col := 0; col < 3; col++ {
		for {
			// The row with the smallest non-zero entry in col leads.
			lead := -1
			for i := col; i < len(rows); i++ {
				if rows[i][col] != 0 && (lead < 0 || abs(rows[i][col]) < abs(rows[lead][col])) {
					lead = i
				}
			}
			if lead < 0 {
				break
			}
			rows[col], rows[lead] = rows[lead], rows[col]
			done := true
			for i := col + 1; i < len(rows); i++ {
				if q := rows[i][col] / rows[col][col]; q != 0 {
					for k := 0; k < 3; k++ {
						rows[i][k] -= q * rows[col][k]
					}
				}
				if rows[i][col] != 0 {
					done = false
				}
			}
			if done {
				break
			}
		}
		out[col] = rows[col]
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// boxTol is the fractional tolerance per axis of a distance tol (Å) along
// each lattice vector.
func boxTol(lat mat3, tol float64) vec3 {
	return vec3{tol / norm(lat[0]), tol / norm(lat[1]), tol / norm(lat[2])}
}

// inBox reports whether the fractional difference d, reduced to its
// nearest image, is within ftol in every coordinate.
func inBox(d, ftol vec3) bool {
	d = wrapHalf(d)
	return math.Abs(d[0]) <= ftol[0] && math.Abs(d[1]) <= ftol[1] && math.Abs(d[2]) <= ftol[2]
}
