package match

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func mustStructure(t testing.TB, lat [3][3]float64, species []string, frac []crystal.Vec3) *crystal.Structure {
	t.Helper()
	l, err := crystal.NewLattice(lat)
	if err != nil {
		t.Fatal(err)
	}
	els := make([]crystal.Element, len(species))
	for i, s := range species {
		els[i] = crystal.MustElement(s)
	}
	s, err := crystal.NewStructure(l, els, frac)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rockSalt is the conventional 8-atom cell of NaCl-type AX, edge a.
func rockSalt(t testing.TB, a float64, cat, an string) *crystal.Structure {
	fcc := []crystal.Vec3{{0, 0, 0}, {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}}
	var sp []string
	var fr []crystal.Vec3
	for _, f := range fcc {
		sp = append(sp, cat)
		fr = append(fr, f)
	}
	for _, f := range fcc {
		sp = append(sp, an)
		fr = append(fr, crystal.Vec3{f[0] + 0.5, f[1], f[2]})
	}
	return mustStructure(t, [3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, a}}, sp, fr)
}

func TestAssignIsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a assigner
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(6)
		cost := make([]float64, n*n)
		for i := range cost {
			cost[i] = math.Floor(rng.Float64() * 20) // ties are common
			if rng.IntN(8) == 0 {
				cost[i] = forbidden
			}
		}
		got := make([]int, n)
		a.solve(cost, n, got)
		total := 0.0
		for i, j := range got {
			total += cost[i*n+j]
		}
		// Brute force over all permutations.
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		best := math.Inf(1)
		var visit func(k int)
		visit = func(k int) {
			if k == n {
				s := 0.0
				for i, j := range perm {
					s += cost[i*n+j]
				}
				best = math.Min(best, s)
				return
			}
			for i := k; i < n; i++ {
				perm[k], perm[i] = perm[i], perm[k]
				visit(k + 1)
				perm[k], perm[i] = perm[i], perm[k]
			}
		}
		visit(0)
		seen := slices.Clone(got)
		slices.Sort(seen)
		for i, j := range seen {
			if i != j {
				t.Fatalf("trial %d: %v is not a permutation", trial, got)
			}
		}
		if total != best {
			t.Fatalf("trial %d (n=%d): total %v, optimum %v", trial, n, total, best)
		}
	}
}

// The Niggli cell of a lattice does not depend on the basis it is given
// in: fcc, bcc, hexagonal and triclinic lattices under random unimodular
// changes of basis reduce to the same lengths and angles, and satisfy
// the Niggli conditions A ≤ B ≤ C and |2b·c| ≤ B, |2a·c| ≤ A, |2a·b| ≤ A.
func TestNiggliIsBasisIndependent(t *testing.T) {
	lattices := map[string]mat3{
		"fcc":       {{0, 2, 2}, {2, 0, 2}, {2, 2, 0}},
		"bcc":       {{-1.5, 1.5, 1.5}, {1.5, -1.5, 1.5}, {1.5, 1.5, -1.5}},
		"hexagonal": fromParameters([6]float64{3.2, 3.2, 5.2, 90, 90, 120}),
		"triclinic": fromParameters([6]float64{4.1, 5.3, 6.7, 77, 83, 101}),
	}
	want := map[string][6]float64{
		"fcc": {2 * math.Sqrt2, 2 * math.Sqrt2, 2 * math.Sqrt2, 60, 60, 60},
		"bcc": {1.5 * math.Sqrt(3), 1.5 * math.Sqrt(3), 1.5 * math.Sqrt(3), 109.47122063449069, 109.47122063449069, 109.47122063449069},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, lat := range lattices {
		ref, _, ok := niggli(lat)
		if !ok {
			t.Fatalf("%s: no reduction", name)
		}
		pref := parameters(ref)
		if w, ok := want[name]; ok {
			for k := range w {
				if math.Abs(pref[k]-w[k]) > 1e-9 {
					t.Errorf("%s: Niggli parameters %v, want %v", name, pref, w)
					break
				}
			}
		}
		for trial := 0; trial < 50; trial++ {
			u := identity
			for step := 0; step < 6; step++ {
				i, j := rng.IntN(3), rng.IntN(3)
				if i == j {
					continue
				}
				f := rng.IntN(5) - 2
				for k := 0; k < 3; k++ {
					u[i][k] += f * u[j][k]
				}
			}
			red, tr, ok := niggli(matMul(toFloat(u), lat))
			if !ok {
				t.Fatalf("%s: no reduction of %v", name, u)
			}
			if d := idet(tr); d != 1 && d != -1 {
				t.Fatalf("%s: change of basis %v has determinant %d", name, tr, d)
			}
			if det(red) <= 0 {
				t.Errorf("%s: reduced cell is not right-handed", name)
			}
			p := parameters(red)
			for k := range p {
				if math.Abs(p[k]-pref[k]) > 1e-6*math.Max(1, pref[k]) {
					t.Fatalf("%s via %v: parameters %v, want %v", name, u, p, pref)
				}
			}
			A, B, C := dot(red[0], red[0]), dot(red[1], red[1]), dot(red[2], red[2])
			e := 1e-6
			if A > B+e || B > C+e || math.Abs(2*dot(red[1], red[2])) > B+e ||
				math.Abs(2*dot(red[0], red[2])) > A+e || math.Abs(2*dot(red[0], red[1])) > A+e {
				t.Fatalf("%s: %v is not Niggli-reduced", name, p)
			}
		}
	}
}

func TestReducePrimitive(t *testing.T) {
	rs := rockSalt(t, 5.64, "Na", "Cl")
	sc, err := rs.Supercell(2, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	perovskite := mustStructure(t, [3][3]float64{{3.9, 0, 0}, {0, 3.9, 0}, {0, 0, 3.9}},
		[]string{"Sr", "Ti", "O", "O", "O"},
		[]crystal.Vec3{{0.5, 0.5, 0.5}, {0, 0, 0}, {0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}})
	psc, err := perovskite.Supercell(2, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Displacing one atom by 0.1 Å keeps the translations (within 0.25 Å);
	// by 0.4 Å it breaks them.
	shifted := func(s *crystal.Structure, i int, dx float64) *crystal.Structure {
		c := s.Copy()
		c.Frac[i][0] += dx / s.Lattice.Vector(0).Norm()
		return c
	}
	for _, tc := range []struct {
		name         string
		s            *crystal.Structure
		sites, cells int
	}{
		{"rock salt conventional", rs, 2, 4},
		{"rock salt 2×1×3 supercell", sc, 2, 24},
		{"perovskite", perovskite, 5, 1},
		{"perovskite 2×2×1", psc, 5, 4},
		{"perovskite 2×2×1, one atom 0.1 Å off", shifted(psc, 3, 0.1), 5, 4},
		{"perovskite 2×2×1, one atom 0.4 Å off", shifted(psc, 3, 0.4), 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Reduce(tc.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.NumSites() != tc.sites || r.Cells() != tc.cells {
				t.Errorf("%d sites in %d cells, want %d in %d", r.NumSites(), r.Cells(), tc.sites, tc.cells)
			}
			if math.Abs(r.Volume()*float64(r.Cells())-tc.s.Volume()) > 1e-6*tc.s.Volume() {
				t.Errorf("volume %g × %d cells, input %g", r.Volume(), r.Cells(), tc.s.Volume())
			}
			if got, want := r.Formula(), tc.s.Composition().ReducedFormula(); got != want {
				t.Errorf("formula %s, want %s", got, want)
			}
			back, err := r.Structure()
			if err != nil || back.NumSites() != tc.sites {
				t.Errorf("Structure: %v, %v", back, err)
			}
			raw, err := Reduce(tc.s, Options{NoPrimitive: true})
			if err != nil || raw.NumSites() != tc.s.NumSites() {
				t.Errorf("NoPrimitive: %d sites, %v", raw.NumSites(), err)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	nacl := rockSalt(t, 5.64, "Na", "Cl")
	kcl := rockSalt(t, 6.29, "K", "Cl")
	cscl := mustStructure(t, [3][3]float64{{3.35, 0, 0}, {0, 3.35, 0}, {0, 0, 3.35}},
		[]string{"Na", "Cl"}, []crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}})
	rotated, err := transform(nacl, "rot:1,2,3,37;shift:0.13,0.27,0.61;rev")
	if err != nil {
		t.Fatal(err)
	}
	dense, err := nacl.ScaledToVolume(0.5 * nacl.Volume())
	if err != nil {
		t.Fatal(err)
	}
	sheared, err := transform(nacl, "strain:0,0,0,0.15,0,0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		a, b  *crystal.Structure
		opt   Options
		match bool
	}{
		{"itself", nacl, nacl, Options{}, true},
		{"rotated, translated, reversed", nacl, rotated, Options{}, true},
		// Unscaled, the lengths differ by 2^(1/3) = 1.26 > 1 + LTol.
		{"twice as dense", nacl, dense, Options{}, true},
		{"twice as dense, unscaled", nacl, dense, Options{NoScale: true}, false},
		{"rock salt vs CsCl type", nacl, cscl, Options{}, false},
		{"different elements", nacl, kcl, Options{}, false},
		{"shear strain 15 %", nacl, sheared, Options{}, false},
		{"shear strain 15 %, angle tolerance 10°", nacl, sheared, Options{AngleTol: 10}, true},
		{"primitive vs conventional, no primitive reduction", nacl, mustPrimitive(t, nacl), Options{NoPrimitive: true}, false},
		{"primitive vs conventional", nacl, mustPrimitive(t, nacl), Options{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, rms, err := Match(tc.a, tc.b, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.match {
				t.Errorf("match %v (rms %.4g), want %v", ok, rms, tc.match)
			}
			if ok && !(rms >= 0 && rms < 1e-6) {
				t.Errorf("rms %g for an exact copy", rms)
			}
		})
	}
}

func mustPrimitive(t testing.TB, s *crystal.Structure) *crystal.Structure {
	r, err := Reduce(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Structure()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Displacing atoms raises the RMS displacement in proportion; beyond STol
// the structures no longer match.
func TestMatchDisplacement(t *testing.T) {
	nacl := mustPrimitive(t, rockSalt(t, 5.64, "Na", "Cl"))
	sc, err := nacl.Supercell(2, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	unit := math.Cbrt(sc.VolumePerAtom())
	prev := 0.0
	for _, amp := range []float64{0.02, 0.05, 0.1} {
		d, err := transform(sc, "noise:"+strconv.FormatFloat(amp, 'g', -1, 64))
		if err != nil {
			t.Fatal(err)
		}
		r, err := MatchReduced(mustReduce(t, sc, Options{NoPrimitive: true}), mustReduce(t, d, Options{NoPrimitive: true}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The noise moves each atom by at most amp·√3, at least amp·0.5.
		if !r.Match || r.RMS <= prev || r.Max > amp*math.Sqrt(3)/unit+1e-9 {
			t.Errorf("noise %g Å: %+v (unit %.3f Å)", amp, r, unit)
		}
		prev = r.RMS
	}
}

func mustReduce(t testing.TB, s *crystal.Structure, opt Options) *Reduced {
	r, err := Reduce(s, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestKey(t *testing.T) {
	nacl := rockSalt(t, 5.64, "Na", "Cl")
	k, err := KeyOf(nacl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if k != (Key{"NaCl", 2}) || k.String() != "NaCl/2" {
		t.Errorf("key %v (%s)", k, k)
	}
	sg, err := mustReduce(t, nacl, Options{}).SpaceGroup(0.01)
	if err != nil || sg != 225 {
		t.Errorf("space group %d, %v", sg, err)
	}
}

func TestErrors(t *testing.T) {
	nacl := rockSalt(t, 5.64, "Na", "Cl")
	bad := nacl.Copy()
	bad.Frac[0][0] = math.NaN()
	if _, _, err := Match(nacl, bad, Options{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("NaN coordinate: %v", err)
	}
	if _, _, err := Match(nil, nacl, Options{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("nil: %v", err)
	}
	if _, _, err := Match(nacl, &crystal.Structure{Lattice: nacl.Lattice}, Options{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("no sites: %v", err)
	}
	for _, opt := range []Options{{LTol: -1}, {STol: math.Inf(1)}, {AngleTol: 95}, {PrimitiveTol: math.NaN()}} {
		if _, _, err := Match(nacl, nacl, opt); err == nil {
			t.Errorf("options %+v accepted", opt)
		}
	}
	if _, err := MatchReduced(nil, nil, Options{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("nil reduced: %v", err)
	}
}
