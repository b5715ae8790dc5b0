package surrogate

import (
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// centrosymmetricSpaceGroup reports whether space group number sg (1–230)
// contains the inversion: the groups of the 11 Laue classes (International
// Tables for Crystallography A, Table 3.1.3.1).
func centrosymmetricSpaceGroup(sg int) bool {
	for _, r := range [][2]int{{2, 2}, {10, 15}, {47, 74}, {83, 88}, {123, 142}, {147, 148},
		{162, 167}, {175, 176}, {191, 194}, {200, 206}, {221, 230}} {
		if sg >= r[0] && sg <= r[1] {
			return true
		}
	}
	return false
}

func TestCentrosymmetricPrototypes(t *testing.T) {
	cubic := func(a float64, species []string, frac []crystal.Vec3) *crystal.Structure {
		l, err := crystal.LatticeFromParameters(a, a, a, 90, 90, 90)
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
	rocksalt := cubic(5.64, []string{"Na", "Na", "Na", "Na", "Cl", "Cl", "Cl", "Cl"}, []crystal.Vec3{
		{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5},
		{0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}, {0.5, 0.5, 0.5}})
	zincblende := cubic(5.41, []string{"Zn", "Zn", "Zn", "Zn", "S", "S", "S", "S"}, []crystal.Vec3{
		{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5},
		{0.25, 0.25, 0.25}, {0.75, 0.75, 0.25}, {0.75, 0.25, 0.75}, {0.25, 0.75, 0.75}})
	// Perovskite with the centre off the origin, and the same with Ti
	// displaced along z (the polar tetragonal distortion of BaTiO3).
	perovskite := cubic(4.0, []string{"Ba", "Ti", "O", "O", "O"}, []crystal.Vec3{
		{0.1, 0.2, 0.3}, {0.6, 0.7, 0.8}, {0.6, 0.7, 0.3}, {0.6, 0.2, 0.8}, {0.1, 0.7, 0.8}})
	polar := perovskite.Copy()
	polar.Frac[1][2] += 0.02
	for _, c := range []struct {
		name string
		s    *crystal.Structure
		tol  float64
		want bool
	}{
		{"NaCl", rocksalt, InversionTolerance, true},
		{"ZnS", zincblende, InversionTolerance, false},
		{"BaTiO3 cubic", perovskite, InversionTolerance, true},
		{"BaTiO3 Ti off-centre 0.08 Å", polar, InversionTolerance, false},
		{"BaTiO3 Ti off-centre 0.08 Å, tolerance 0.2 Å", polar, 0.2, true},
	} {
		if got := Centrosymmetric(c.s, c.tol); got != c.want {
			t.Errorf("%s: Centrosymmetric = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCentrosymmetricMatchesSpaceGroups checks the inversion test on the
// Materials Project structures of the dielectric set, whose space groups
// are given, and on the piezoelectric set, which has no centrosymmetric
// structure.
func TestCentrosymmetricMatchesSpaceGroups(t *testing.T) {
	dir := testbed.DataDir(t)
	for _, prop := range []string{"dielectric_constant", "piezo_max_eij"} {
		ds, err := LoadDataset(prop, dir)
		if err != nil {
			t.Fatal(err)
		}
		sg := spaceGroups(t, dir, ds)
		centro, missed := 0, 0
		for i, s := range ds.Samples {
			want := centrosymmetricSpaceGroup(sg[i])
			if want {
				centro++
			}
			switch got := Centrosymmetric(s.Structure, InversionTolerance); {
			case got && !want:
				t.Errorf("%s %s %s (space group %d, acentric) called centrosymmetric", prop, s.ID, s.Formula, sg[i])
			case !got && want:
				missed++
				t.Logf("%s %s %s (space group %d): no inversion centre within %g Å", prop, s.ID, s.Formula, sg[i], InversionTolerance)
			}
		}
		// MP's spglib tolerance is looser than ours; a few distorted
		// centrosymmetric cells are missed (1 of 797 at 0.05 Å).
		if missed > 2 {
			t.Errorf("%s: %d of %d centrosymmetric structures missed", prop, missed, centro)
		}
		t.Logf("%s: %d structures, %d centrosymmetric by space group, %d of them missed", prop, len(ds.Samples), centro, missed)
	}
}
