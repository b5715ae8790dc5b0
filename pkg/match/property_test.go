package match

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// randomStructure makes a triclinic cell of 2–8 atoms of up to three
// elements, no two atoms closer than 1.5 Å.
func randomStructure(rng *rand.Rand) (*crystal.Structure, error) {
	for {
		p := [6]float64{3 + 4*rng.Float64(), 3 + 4*rng.Float64(), 3 + 4*rng.Float64(),
			70 + 40*rng.Float64(), 70 + 40*rng.Float64(), 70 + 40*rng.Float64()}
		l, err := crystal.LatticeFromParameters(p[0], p[1], p[2], p[3], p[4], p[5])
		if err != nil {
			continue // angles that close no cell
		}
		n := 2 + rng.IntN(7)
		els := []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl"), crystal.MustElement("O")}
		var species []crystal.Element
		var frac []crystal.Vec3
		for len(frac) < n {
			f := crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()}
			ok := true
			for _, g := range frac {
				if _, d2 := shortestImage(vec3(f.Sub(g)), l.Matrix()); d2 < 1.5*1.5 {
					ok = false
					break
				}
			}
			if ok {
				species = append(species, els[rng.IntN(3)])
				frac = append(frac, f)
			}
		}
		return crystal.NewStructure(l, species, frac)
	}
}

// A structure matches itself turned, moved, with its sites reversed,
// repeated as a supercell and sheared into another basis, with a
// displacement of zero; a copy with one atom moved by half the site
// tolerance still matches, with a positive displacement.
func TestMatchInvariances(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 60; trial++ {
		s, err := randomStructure(rng)
		if err != nil {
			t.Fatal(err)
		}
		spec := fmt.Sprintf("rot:%g,%g,%g,%g;shift:%g,%g,%g;rev;sc:%d,%d,1",
			rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64(), 360*rng.Float64(),
			rng.Float64(), rng.Float64(), rng.Float64(), 1+rng.IntN(2), 1+rng.IntN(2))
		moved, err := transform(s, spec)
		if err != nil {
			t.Fatal(err)
		}
		// Another basis of the same lattice: c ↦ c + a − 2b.
		m := moved.Lattice.Matrix()
		for k := range m[2] {
			m[2][k] += m[0][k] - 2*m[1][k]
		}
		l, err := crystal.NewLattice(m)
		if err != nil {
			t.Fatal(err)
		}
		inv, _ := inverse(m)
		sheared := moved.Copy()
		sheared.Lattice = l
		for i := range sheared.Frac {
			sheared.Frac[i] = crystal.Vec3(rowTimes(vec3(moved.Cartesian(i)), inv))
		}
		ok, rms, err := Match(s, sheared, Options{})
		if err != nil {
			t.Fatalf("trial %d (%s): %v", trial, spec, err)
		}
		if !ok || rms > 1e-6 {
			t.Fatalf("trial %d (%d atoms, %s): match %v, rms %g", trial, s.NumSites(), spec, ok, rms)
		}
		// One atom moved by 0.15·(V/n)^(1/3) along x.
		d := s.Copy()
		shift := 0.15 * math.Cbrt(s.VolumePerAtom())
		c := s.Cartesian(0).Add(crystal.Vec3{shift, 0, 0})
		d.Frac[0] = s.Lattice.Fractional(c)
		ok, rms, err = Match(s, d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !ok || !(rms > 0.01) {
			t.Errorf("trial %d: one atom moved: match %v, rms %g", trial, ok, rms)
		}
	}
}
