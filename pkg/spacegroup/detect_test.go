package spacegroup

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// fromParams builds lattice rows from a, b, c, α, β, γ (Å, degrees) in
// pymatgen's orientation.
func fromParams(a, b, c, al, be, ga float64) mat3 {
	r := math.Pi / 180
	al, be, ga = al*r, be*r, ga*r
	val := (math.Cos(al)*math.Cos(be) - math.Cos(ga)) / (math.Sin(al) * math.Sin(be))
	gs := math.Acos(math.Max(-1, math.Min(1, val)))
	return mat3{{a * math.Sin(be), 0, a * math.Cos(be)}, {-b * math.Sin(al) * math.Cos(gs), b * math.Sin(al) * math.Sin(gs), b * math.Cos(al)}, {0, 0, c}}
}

// latticeFor returns a cell of generic shape for the setting's crystal
// system (hexagonal axes for the trigonal groups in R settings too).
func latticeFor(s *Setting) mat3 {
	switch System(s.Number) {
	case "triclinic":
		return fromParams(5.1, 6.2, 7.3, 81, 86, 97)
	case "monoclinic":
		return fromParams(5.1, 6.2, 7.3, 90, 103, 90)
	case "orthorhombic":
		return fromParams(5.1, 6.2, 7.3, 90, 90, 90)
	case "tetragonal":
		return fromParams(5.1, 5.1, 7.3, 90, 90, 90)
	case "trigonal", "hexagonal":
		return fromParams(5.1, 5.1, 7.3, 90, 90, 120)
	}
	return fromParams(6.1, 6.1, 6.1, 90, 90, 90)
}

// expand builds a crystal from atoms at general positions (one per type)
// under the setting's operations.
func expand(s *Setting, rng *rand.Rand, ntypes int) ([]vec3, []int) {
	var pos []vec3
	var types []int
	lat := latticeFor(s)
	for typ := 1; typ <= ntypes; typ++ {
	retry:
		x := vec3{rng.Float64(), rng.Float64(), rng.Float64()}
		var orbit []vec3
		for _, o := range s.Ops() {
			y := o.Apply(x)
			for k := range y {
				y[k] = wrap01(y[k])
			}
			for _, p := range append(pos, orbit...) {
				if norm(vecMat(wrapDiff(sub(p, y)), lat)) < 0.3 {
					goto retry // too close to another atom: draw again
				}
			}
			orbit = append(orbit, y)
		}
		pos = append(pos, orbit...)
		for range orbit {
			types = append(types, typ)
		}
	}
	return pos, types
}

// unimodular matrices used to present crystals in other cells.
var changes = [][3][3]int{
	{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}},
	{{1, 1, 0}, {0, 1, 0}, {0, 0, 1}},
	{{1, 0, -1}, {0, -1, 0}, {1, 1, 0}},
}

// transformCell presents the crystal in the basis whose vectors are the
// columns of u (input coordinates), with the origin moved by shift.
func transformCell(lat mat3, pos []vec3, u [3][3]int, shift vec3) (mat3, []vec3) {
	uf := toFloat(u)
	uinv, _ := inverse(uf)
	newLat := matMul(transpose(uf), lat)
	out := make([]vec3, len(pos))
	for i, x := range pos {
		y := matVec(uinv, add(x, shift))
		for k := range y {
			y[k] = wrap01(y[k])
		}
		out[i] = y
	}
	return newLat, out
}

// TestDetectAllTypes builds, for each of the 230 types, a crystal of two
// general-position orbits in its default setting, presents it in several
// other cells and origins, and checks that Detect finds the type, that the
// operations map the input crystal onto itself, and that the standard cell
// it returns is invariant under the standard setting's operations.
func TestDetectAllTypes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 230; n++ {
		s, _ := ByNumber(n)
		pos, types := expand(s, rng, 2)
		for ci, u := range changes {
			if testing.Short() && ci > 1 {
				break
			}
			shift := vec3{rng.Float64(), rng.Float64(), rng.Float64()}
			lat, p := transformCell(latticeFor(s), pos, u, shift)
			frac := make([][3]float64, len(p))
			for i := range p {
				frac[i] = p[i]
			}
			ds, err := Detect(lat, frac, types, Options{})
			if err != nil {
				t.Errorf("%d %s, cell %d: %v", n, s.Short, ci, err)
				continue
			}
			if ds.Number != n || ds.Symbol != s.Short {
				t.Errorf("%d %s, cell %d: detected %d %s", n, s.Short, ci, ds.Number, ds.Symbol)
				continue
			}
			checkDataset(t, ds, lat, p, types, s)
			orbits := map[int]bool{}
			for i, e := range ds.Equivalent {
				orbits[e] = true
				if types[e] != types[i] || e > i {
					t.Errorf("%d: atom %d equivalent to %d", n, i, e)
				}
			}
			if len(orbits) != 2 {
				t.Errorf("%d %s, cell %d: %d orbits, want 2", n, s.Short, ci, len(orbits))
			}
		}
	}
}

// checkDataset checks the operations against the input crystal and the
// standard cell against the standard setting.
func checkDataset(t *testing.T, ds *Dataset, lat mat3, pos []vec3, types []int, s *Setting) {
	t.Helper()
	in := newCell(lat, pos, types)
	if len(ds.Operations) != len(s.Ops()) {
		t.Errorf("%d: %d operations, want %d", s.Number, len(ds.Operations), len(s.Ops()))
	}
	for _, op := range sample(ds.Operations) {
		if _, ok := in.matchOp(toFloat(op.Rot), op.Trans, 1e-6); !ok {
			t.Errorf("%d: operation %v does not map the crystal onto itself", s.Number, op)
			return
		}
	}
	if len(ds.StdFrac) != len(pos) {
		t.Errorf("%d: standard cell has %d atoms, input %d (same cell volume)", s.Number, len(ds.StdFrac), len(pos))
	}
	std := make([]vec3, len(ds.StdFrac))
	for i := range std {
		std[i] = ds.StdFrac[i]
	}
	sc := newCell(ds.StdLattice, std, ds.StdTypes)
	for _, o := range sample(s.Ops()) {
		if _, ok := sc.matchOp(toFloat(o.Rot), o.T(), 1e-6); !ok {
			t.Errorf("%d: standard-setting operation %v does not map the standard cell onto itself", s.Number, o)
			return
		}
	}
	// x_s = T·x + o for every input atom lands on a standard-cell atom.
	for i, x := range pos {
		y := add(matVec(ds.Transformation, x), ds.OriginShift)
		if sc.find(y, types[i], 1e-6) < 0 {
			t.Errorf("%d: atom %d does not land on the standard cell", s.Number, i)
			return
		}
	}
	if d := det(ds.StdLattice); d <= 0 {
		t.Errorf("%d: standard cell is left-handed (det %g)", s.Number, d)
	}
}

// TestDetectNoise displaces the atoms of rutile by up to 0.02 Å: the group
// is found at symprec 0.05 Å and lost at 0.001 Å.
func TestDetectNoise(t *testing.T) {
	s, _ := ByNumber(136)
	lat := fromParams(4.59, 4.59, 2.96, 90, 90, 90)
	var pos []vec3
	var types []int
	for _, a := range []struct {
		x   vec3
		typ int
	}{{vec3{0, 0, 0}, 22}, {vec3{0.305, 0.305, 0}, 8}} {
		seen := newCell(lat, nil, nil)
		for _, o := range s.Ops() {
			y := o.Apply(a.x)
			for k := range y {
				y[k] = wrap01(y[k])
			}
			if seen.find(y, 0, 1e-6) >= 0 {
				continue
			}
			seen = newCell(lat, append(seen.pos, y), append(seen.types, 0))
			pos = append(pos, y)
			types = append(types, a.typ)
		}
	}
	if len(pos) != 6 {
		t.Fatalf("rutile has %d atoms", len(pos))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	frac := make([][3]float64, len(pos))
	for i, x := range pos {
		for k := range x {
			frac[i][k] = x[k] + (rng.Float64()-0.5)*0.02/4.59
		}
	}
	ds, err := Detect(lat, frac, types, Options{SymPrec: 0.05})
	if err != nil || ds.Number != 136 {
		t.Fatalf("symprec 0.05: %v, %v", ds, err)
	}
	ds, err = Detect(lat, frac, types, Options{SymPrec: 0.001})
	if err != nil || ds.Number == 136 {
		t.Fatalf("symprec 0.001: %v, %v; want a lower group", ds, err)
	}
}

func TestDetectErrors(t *testing.T) {
	lat := fromParams(4, 4, 4, 90, 90, 90)
	for _, c := range []struct {
		name  string
		lat   mat3
		frac  [][3]float64
		types []int
		opt   Options
	}{
		{"no atoms", lat, nil, nil, Options{}},
		{"length mismatch", lat, [][3]float64{{0, 0, 0}}, []int{1, 2}, Options{}},
		{"singular lattice", mat3{{1, 0, 0}, {2, 0, 0}, {0, 0, 1}}, [][3]float64{{0, 0, 0}}, []int{1}, Options{}},
		{"NaN position", lat, [][3]float64{{math.NaN(), 0, 0}}, []int{1}, Options{}},
		{"Inf lattice", mat3{{math.Inf(1), 0, 0}, {0, 1, 0}, {0, 0, 1}}, [][3]float64{{0, 0, 0}}, []int{1}, Options{}},
		{"negative symprec", lat, [][3]float64{{0, 0, 0}}, []int{1}, Options{SymPrec: -1}},
		{"symprec too large", lat, [][3]float64{{0, 0, 0}}, []int{1}, Options{SymPrec: 1.5}},
		{"NaN symprec", lat, [][3]float64{{0, 0, 0}}, []int{1}, Options{SymPrec: math.NaN()}},
		{"angle tolerance too large", lat, [][3]float64{{0, 0, 0}}, []int{1}, Options{AngleTolerance: 60}},
	} {
		if ds, err := Detect(c.lat, c.frac, c.types, c.opt); !errors.Is(err, ErrBadCell) {
			t.Errorf("%s: %v, %v; want ErrBadCell", c.name, ds, err)
		}
	}
}

func TestEntropy(t *testing.T) {
	for _, c := range []struct {
		numbers []int
		want    float64
	}{
		{nil, 0},
		{[]int{225, 225, 225}, 0},
		{[]int{225, 14}, math.Ln2},
		{[]int{1, 2, 3, 4}, math.Log(4)},
		{[]int{14, 14, 62, 0, 231}, -(2.0/3)*math.Log(2.0/3) - (1.0/3)*math.Log(1.0/3)},
	} {
		if got := Entropy(c.numbers); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Entropy(%v) = %g, want %g", c.numbers, got, c.want)
		}
	}
	// Counts: 2 × Fm-3m, 1 × P6_3mc, 1 × Pnma (and a structure without a
	// group, ignored): −(½ ln ½ + 2 · ¼ ln ¼) = 1.5 ln 2.
	counts := map[int]int{225: 2, 186: 1, 62: 1, 0: 3, 14: 0}
	if got, want := EntropyOfCounts(counts), 1.5*math.Ln2; math.Abs(got-want) > 1e-12 {
		t.Errorf("EntropyOfCounts(%v) = %g, want %g", counts, got, want)
	}
	if got := (Name{Number: 225, Symbol: "Fm-3m"}).String(); got != "Fm-3m (225)" {
		t.Errorf("Name.String = %q", got)
	}
}

// sample returns at most 16 evenly spaced elements of xs (every element
// checked would make the test of the F-centred cubic groups slow).
func sample[T any](xs []T) []T {
	if len(xs) <= 16 {
		return xs
	}
	var out []T
	for i := 0; i < 16; i++ {
		out = append(out, xs[i*len(xs)/16])
	}
	return out
}

// TestDetectSupercell finds rutile's group in a 2×1×1 supercell, whose
// lattice keeps only the operations without a four-fold rotation: 8 of
// them, each with the two pure translations.
func TestDetectSupercell(t *testing.T) {
	s, _ := ByNumber(136)
	lat := fromParams(4.59, 4.59, 2.96, 90, 90, 90)
	var frac [][3]float64
	var types []int
	for _, a := range []struct {
		x   vec3
		typ int
	}{{vec3{0, 0, 0}, 22}, {vec3{0.305, 0.305, 0}, 8}} {
		seen := newCell(lat, nil, nil)
		for _, o := range s.Ops() {
			y := o.Apply(a.x)
			for k := range y {
				y[k] = wrap01(y[k])
			}
			if seen.find(y, 0, 1e-6) >= 0 {
				continue
			}
			seen = newCell(lat, append(seen.pos, y), append(seen.types, 0))
			for _, dx := range []float64{0, 1} {
				frac = append(frac, [3]float64{(y[0] + dx) / 2, y[1], y[2]})
				types = append(types, a.typ)
			}
		}
	}
	super := lat
	super[0] = vec3{2 * lat[0][0], 2 * lat[0][1], 2 * lat[0][2]}
	ds, err := Detect(super, frac, types, Options{})
	if err != nil || ds.Number != 136 {
		t.Fatalf("%v, %v", ds, err)
	}
	if len(ds.Operations) != 16 {
		t.Errorf("%d operations, want 16", len(ds.Operations))
	}
	pos := make([]vec3, len(frac))
	for i := range frac {
		pos[i] = frac[i]
	}
	c := newCell(super, pos, types)
	for _, op := range ds.Operations {
		if _, ok := c.matchOp(toFloat(op.Rot), op.Trans, 1e-6); !ok {
			t.Errorf("operation %v does not map the supercell onto itself", op)
		}
	}
	if len(ds.StdFrac) != 6 {
		t.Errorf("standard cell has %d atoms, want 6", len(ds.StdFrac))
	}
}
