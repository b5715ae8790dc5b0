package match

import (
	"fmt"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Default tolerances, pymatgen's StructureMatcher defaults.
const (
	// DefaultLTol is the fractional tolerance on lattice vector lengths.
	DefaultLTol = 0.2
	// DefaultSTol is the site tolerance, in units of (V/n)^(1/3).
	DefaultSTol = 0.3
	// DefaultAngleTol is the tolerance on lattice angles, in degrees.
	DefaultAngleTol = 5.0
	// DefaultPrimitiveTol is the distance (Å) within which an atom's image
	// under a pure translation counts as an atom (pymatgen's
	// get_primitive_structure tolerance).
	DefaultPrimitiveTol = 0.25
)

// maxLatticePoints bounds the lattice vectors enumerated for the
// mappings; a Niggli-reduced cell needs far fewer unless its lengths
// differ by orders of magnitude.
const maxLatticePoints = 1 << 22

// forbidden is the assignment cost of a pair that may not be matched:
// finite, so the Hungarian method's arithmetic stays finite, and far above
// any squared distance in a cell.
const forbidden = 1e20

// Options are the matcher's tolerances; a zero field takes its default.
type Options struct {
	// LTol is the fractional length tolerance: a lattice vector of one
	// structure matches a vector of the other when their length ratio is
	// within (1/(1+LTol), 1+LTol). DefaultLTol when 0.
	LTol float64
	// STol bounds each site's displacement, in units of the mean free
	// length per atom (V/n)^(1/3). DefaultSTol when 0.
	STol float64
	// AngleTol is the tolerance on lattice angles (degrees).
	// DefaultAngleTol when 0.
	AngleTol float64
	// PrimitiveTol is the distance (Å) within which a pure translation
	// must carry each atom onto an atom of its element.
	// DefaultPrimitiveTol when 0.
	PrimitiveTol float64
	// NoPrimitive skips the reduction to primitive cells: a supercell then
	// never matches its primitive cell (pymatgen's primitive_cell=False).
	NoPrimitive bool
	// NoScale compares the cells at their own volumes instead of scaling
	// both to a common volume (pymatgen's scale=False).
	NoScale bool
}

func (o Options) withDefaults() Options {
	if o.LTol == 0 {
		o.LTol = DefaultLTol
	}
	if o.STol == 0 {
		o.STol = DefaultSTol
	}
	if o.AngleTol == 0 {
		o.AngleTol = DefaultAngleTol
	}
	if o.PrimitiveTol == 0 {
		o.PrimitiveTol = DefaultPrimitiveTol
	}
	return o
}

func (o Options) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"LTol", o.LTol}, {"STol", o.STol}, {"AngleTol", o.AngleTol}, {"PrimitiveTol", o.PrimitiveTol}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return fmt.Errorf("match: option %s = %v must be positive", f.name, f.v)
		}
	}
	if o.AngleTol >= 90 {
		return fmt.Errorf("match: option AngleTol = %v must be below 90°", o.AngleTol)
	}
	return nil
}

// Result is the outcome of comparing two reduced structures.
type Result struct {
	// Match is pymatgen's fit: some lattice mapping and site assignment
	// displaces every site by less than STol·(V/n)^(1/3).
	Match bool
	// Max is the least, over lattice mappings and translations, of the
	// largest normalised site displacement (what Match compares with
	// STol); +Inf when no mapping was found.
	Max float64
	// RMS is the least normalised root-mean-square displacement over the
	// same mappings (pymatgen's get_rms_dist); +Inf when none was found.
	RMS float64
	// Mappings is the number of lattice mappings tried.
	Mappings int
}

// Match reports whether a and b are the same crystal structure within the
// tolerances (pymatgen's StructureMatcher.fit(a, b) with the same
// options), and the normalised RMS displacement of the best mapping (+Inf
// when none exists). See the package doc for the steps.
func Match(a, b *crystal.Structure, opt Options) (ok bool, rms float64, err error) {
	ra, err := Reduce(a, opt)
	if err != nil {
		return false, 0, err
	}
	rb, err := Reduce(b, opt)
	if err != nil {
		return false, 0, err
	}
	r, err := MatchReduced(ra, rb, opt)
	if err != nil {
		return false, 0, err
	}
	return r.Match, r.RMS, nil
}

// MatchReduced compares two reduced structures (see Match). Both should
// have been reduced with the same PrimitiveTol and NoPrimitive as opt.
func MatchReduced(a, b *Reduced, opt Options) (Result, error) {
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return Result{}, err
	}
	if a == nil || b == nil {
		return Result{}, fmt.Errorf("%w: nil reduced structure", ErrBadStructure)
	}
	none := Result{Max: math.Inf(1), RMS: math.Inf(1)}
	if !sameComposition(a, b) {
		return none, nil
	}
	la, lb := a.lat, b.lat
	if !opt.NoScale {
		// Both to the geometric mean volume, as pymatgen scales them.
		ratio := math.Pow(b.vol/a.vol, 1.0/6)
		for i := range la {
			la[i] = scale(ratio, la[i])
			lb[i] = scale(1/ratio, lb[i])
		}
	}
	m := matcher{a: a, b: b, opt: opt, la: la, lb: lb, best: none}
	if err := m.search(); err != nil {
		return Result{}, err
	}
	m.best.Match = m.best.Max < opt.STol
	return m.best, nil
}

// sameComposition reports whether a and b hold the same number of atoms of
// each element (pymatgen's species comparator: elements must be equal).
func sameComposition(a, b *Reduced) bool {
	if len(a.species) != len(b.species) || len(a.runs) != len(b.runs) {
		return false
	}
	for i := range a.runs {
		x, y := a.runs[i], b.runs[i]
		if x.el != y.el || x.end-x.start != y.end-y.start || x.start != y.start {
			return false
		}
	}
	return true
}

// matcher holds one comparison.
type matcher struct {
	a, b   *Reduced
	opt    Options
	la, lb mat3 // lattices after scaling
	best   Result

	// Buffers reused across mappings and translations.
	fa    []vec3 // a's sites in the mapped basis
	shift []vec3 // b's sites translated
	cost  []float64
	pairs []vec3 // shortest vector of each pair of one element
	vecs  []vec3
	idx   []int
	ok    []bool
	asg   assigner
}

// latticePoint is a vector of a's lattice with its integer coordinates.
type latticePoint struct {
	n   [3]int
	v   vec3
	len float64
}

// search enumerates the lattice mappings of a onto b and, for each, the
// translations and site assignments (see the package doc).
func (m *matcher) search() error {
	lengths := vec3{norm(m.lb[0]), norm(m.lb[1]), norm(m.lb[2])}
	pb := parameters(m.lb)
	ltol, atol := m.opt.LTol, m.opt.AngleTol
	rmax := math.Max(lengths[0], math.Max(lengths[1], lengths[2])) * (1 + ltol)
	var cands [3][]latticePoint
	sp := planeSpacings(m.la)
	var bound [3]int
	points := 1.0
	for k := range bound {
		bound[k] = int(math.Floor(rmax/sp[k])) + 1
		points *= float64(2*bound[k] + 1)
	}
	if points > maxLatticePoints {
		return fmt.Errorf("%w: cells too unlike in shape to map (%.3g lattice vectors to try)", ErrBadStructure, points)
	}
	for i := -bound[0]; i <= bound[0]; i++ {
		for j := -bound[1]; j <= bound[1]; j++ {
			for k := -bound[2]; k <= bound[2]; k++ {
				v := rowTimes(vec3{float64(i), float64(j), float64(k)}, m.la)
				l := norm(v)
				if l > rmax || l == 0 {
					continue
				}
				for axis := 0; axis < 3; axis++ {
					r := l / lengths[axis]
					if r < 1+ltol && r > 1/(1+ltol) {
						cands[axis] = append(cands[axis], latticePoint{[3]int{i, j, k}, v, l})
					}
				}
			}
		}
	}
	angle := func(p, q latticePoint) float64 {
		x := math.Max(-1, math.Min(1, dot(p.v, q.v)/(p.len*q.len)))
		return math.Acos(x) * 180 / math.Pi
	}
	for _, pa := range cands[0] {
		for _, pbv := range cands[1] {
			if math.Abs(angle(pa, pbv)-pb[5]) >= atol {
				continue
			}
			for _, pc := range cands[2] {
				if math.Abs(angle(pbv, pc)-pb[3]) >= atol || math.Abs(angle(pa, pc)-pb[4]) >= atol {
					continue
				}
				s := imat3{pa.n, pbv.n, pc.n}
				if d := idet(s); d != 1 && d != -1 {
					continue
				}
				m.best.Mappings++
				m.tryMapping(s)
				if m.best.Max < 1e-8 && m.best.RMS < 1e-8 {
					return nil // identical: nothing can do better
				}
			}
		}
	}
	return nil
}

// tryMapping compares b with a expressed in the basis s·la (rows of s are
// the integer coordinates of the new vectors in a's basis), which is close
// to b's basis: lengths within LTol, angles within AngleTol.
func (m *matcher) tryMapping(s imat3) {
	a, b := m.a, m.b
	n := len(a.species)
	l := matMul(toFloat(s), m.la)
	// Coordinates in the new basis: f·s⁻¹ (s is unimodular).
	sinv := toFloat(unimodularInverse(s))
	m.fa = resize(m.fa, n)
	for i, f := range a.frac {
		g := rowTimes(f, sinv)
		for k := range g {
			g[k] = wrap01(g[k])
		}
		m.fa[i] = g
	}
	// Distances are measured on the lattice whose parameters are the mean
	// of both (pymatgen's average lattice).
	pl, pb := parameters(l), parameters(m.lb)
	var pavg [6]float64
	for k := range pavg {
		pavg[k] = (pl[k] + pb[k]) / 2
	}
	avg := fromParameters(pavg)
	vavg := math.Abs(det(avg))
	if !(vavg > 0) {
		return
	}
	unit := math.Cbrt(vavg / float64(n)) // (V/n)^(1/3)
	// Pre-filter tolerance per fractional axis: 2·STol·unit across each
	// family of lattice planes (pymatgen's frac_tol).
	sp := planeSpacings(avg)
	var ftol vec3
	for k := range ftol {
		ftol[k] = 2 * m.opt.STol * unit / sp[k]
	}
	// Shortest images are found in a reduced basis of the average lattice.
	red, t, ok := niggli(avg)
	if !ok {
		return
	}
	tinv := toFloat(unimodularInverse(t))
	rsp := planeSpacings(red)
	var rtol vec3
	for k := range rtol {
		rtol[k] = 2 * m.opt.STol * unit / rsp[k]
	}
	anchor := b.runs[0].start
	m.shift = resize(m.shift, n)
	for s1 := a.runs[0].start; s1 < a.runs[0].end; s1++ {
		tr := sub(m.fa[s1], b.frac[anchor])
		for i, f := range b.frac {
			m.shift[i] = add(f, tr)
		}
		if !m.covered(ftol) {
			continue
		}
		m.assign(red, tinv, rtol, unit)
	}
}

// covered reports whether every translated site of b has a site of a of
// its element within ftol in each fractional coordinate (pymatgen's
// is_coord_subset_pbc), a cheap test before the assignment.
func (m *matcher) covered(ftol vec3) bool {
	for _, ru := range m.b.runs {
		for i := ru.start; i < ru.end; i++ {
			found := false
			for j := ru.start; j < ru.end; j++ {
				d := wrapHalf(sub(m.shift[i], m.fa[j]))
				if math.Abs(d[0]) <= ftol[0] && math.Abs(d[1]) <= ftol[1] && math.Abs(d[2]) <= ftol[2] {
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

// assign pairs the translated sites of b with the sites of a, element by
// element, minimising the sum of squared shortest distances on the
// average lattice (pairs further apart than rtol in some coordinate of its
// reduced basis are not allowed); then removes the mean displacement (the
// translation that minimises the sum of squares for this pairing) and
// records the largest and RMS displacement in units of (V/n)^(1/3).
func (m *matcher) assign(red, tinv mat3, rtol vec3, unit float64) {
	n := len(m.a.species)
	m.vecs = resize(m.vecs, n)
	var mean vec3
	for _, ru := range m.b.runs {
		k := ru.end - ru.start
		m.cost = resize(m.cost, k*k)
		m.idx = resize(m.idx, k)
		m.ok = resize(m.ok, k*k)
		m.pairs = resize(m.pairs, k*k)
		vecs := m.pairs
		for i := 0; i < k; i++ {
			fb := rowTimes(m.shift[ru.start+i], tinv)
			for j := 0; j < k; j++ {
				fa := rowTimes(m.fa[ru.start+j], tinv)
				d := wrapHalf(sub(fa, fb))
				c := i*k + j
				if math.Abs(d[0]) > rtol[0] || math.Abs(d[1]) > rtol[1] || math.Abs(d[2]) > rtol[2] {
					m.cost[c], m.ok[c] = forbidden, false
					continue
				}
				v, d2 := shortestImage(d, red)
				m.cost[c], m.ok[c], vecs[c] = d2, true, v
			}
		}
		m.asg.solve(m.cost, k, m.idx)
		for i, j := range m.idx {
			if !m.ok[i*k+j] {
				return // some site has no partner within reach
			}
			v := vecs[i*k+j]
			m.vecs[ru.start+i] = v
			mean = add(mean, v)
		}
	}
	mean = scale(1/float64(n), mean)
	worst, sum := 0.0, 0.0
	for _, v := range m.vecs {
		d2 := dot(sub(v, mean), sub(v, mean))
		worst = math.Max(worst, d2)
		sum += d2
	}
	worst = math.Sqrt(worst) / unit
	rms := math.Sqrt(sum/float64(n)) / unit
	if worst < m.best.Max {
		m.best.Max = worst
	}
	if rms < m.best.RMS {
		m.best.RMS = rms
	}
}
