// Package crystaltest holds test helpers for the packages that use
// pkg/crystal (pkg/crystal's own tests cannot import it).
package crystaltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Build builds formula in the named prototype of the crystal library and
// fails the test if either is unknown or the build fails.
func Build(t testing.TB, proto, formula string) *crystal.Structure {
	t.Helper()
	p, err := crystal.PrototypeByName(proto)
	if err != nil {
		t.Fatal(err)
	}
	b, err := crystal.Build(p, crystal.MustParseFormula(formula))
	if err != nil {
		t.Fatal(err)
	}
	return b.Structure
}

// RandomRotation is a uniformly distributed rotation (Shoemake, "Uniform
// random rotations", Graphics Gems III (1992)) as a unit quaternion.
func RandomRotation(rng *rand.Rand) [4]float64 {
	u1, u2, u3 := rng.Float64(), 2*math.Pi*rng.Float64(), 2*math.Pi*rng.Float64()
	a, b := math.Sqrt(1-u1), math.Sqrt(u1)
	return [4]float64{b * math.Cos(u3), a * math.Sin(u2), a * math.Cos(u2), b * math.Sin(u3)}
}

// Rotated returns s with its lattice (and so its atoms) rotated by the
// rotation of unit quaternion q; the fractional coordinates are kept.
func Rotated(t testing.TB, s *crystal.Structure, q [4]float64) *crystal.Structure {
	t.Helper()
	w, x, y, z := q[0], q[1], q[2], q[3]
	r := [3][3]float64{
		{1 - 2*(y*y+z*z), 2 * (x*y - w*z), 2 * (x*z + w*y)},
		{2 * (x*y + w*z), 1 - 2*(x*x+z*z), 2 * (y*z - w*x)},
		{2 * (x*z - w*y), 2 * (y*z + w*x), 1 - 2*(x*x+y*y)},
	}
	m := s.Lattice.Matrix()
	var rm [3][3]float64
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				rm[i][j] += r[j][k] * m[i][k]
			}
		}
	}
	l, err := crystal.NewLattice(rm)
	if err != nil {
		t.Fatal(err)
	}
	out := s.Copy()
	out.Lattice = l
	return out
}

// Translated returns s with every site moved by the fractional vector d,
// wrapped back into the cell when wrap is set.
func Translated(s *crystal.Structure, d crystal.Vec3, wrap bool) *crystal.Structure {
	out := s.Copy()
	for i := range out.Frac {
		out.Frac[i] = out.Frac[i].Add(d)
	}
	if wrap {
		return out.Wrapped()
	}
	return out
}

// Permuted returns s with its sites in the order perm.
func Permuted(s *crystal.Structure, perm []int) *crystal.Structure {
	out := s.Copy()
	for i, p := range perm {
		out.Species[i], out.Frac[i] = s.Species[p], s.Frac[p]
	}
	return out
}

// NaPrCl4 builds NaPrCl4 as a campaign makes it: a fluorite SrCl2 cell
// doubled along a, its two cations replaced by Na and Pr (an ordered
// mixture whose neighbours tie at CGCNN's cut).
func NaPrCl4(t testing.TB) *crystal.Structure {
	t.Helper()
	sc, err := Build(t, "fluorite", "SrCl2").Supercell(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var cations []int
	for i, e := range sc.Species {
		if e == crystal.MustElement("Sr") {
			cations = append(cations, i)
		}
	}
	s, err := crystal.SubstituteSites(sc, cations[:1], crystal.MustElement("Na"))
	if err == nil {
		s, err = crystal.SubstituteSites(s, cations[1:], crystal.MustElement("Pr"))
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}
