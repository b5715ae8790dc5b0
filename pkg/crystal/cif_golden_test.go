package crystal

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// readCIFFile parses a CIF file or fails the test.
func readCIFFile(t *testing.T, path string) *Structure {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseCIF(data)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return s
}

// requireSameLattice compares lattice parameters to tol (Å and degrees).
func requireSameLattice(t *testing.T, got, want Lattice, tol float64) {
	t.Helper()
	g := [6]float64{}
	w := [6]float64{}
	g[0], g[1], g[2], g[3], g[4], g[5] = got.Parameters()
	w[0], w[1], w[2], w[3], w[4], w[5] = want.Parameters()
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol {
			t.Errorf("lattice parameter %d = %.10g, want %.10g", i, g[i], w[i])
		}
	}
}

// requireSitesMatch checks a one-to-one matching of the sites of got and
// want: same element, fractional positions within tol on every axis under
// periodic boundary conditions. The order of sites is ignored.
func requireSitesMatch(t *testing.T, got, want *Structure, tol float64) {
	t.Helper()
	if got.NumSites() != want.NumSites() {
		t.Fatalf("%d sites, want %d", got.NumSites(), want.NumSites())
	}
	used := make([]bool, want.NumSites())
	for i, e := range got.Species {
		found := false
		for j, f := range want.Frac {
			if !used[j] && want.Species[j] == e && cifSamePosition(got.Frac[i], f, tol) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("site %d (%s at %v) has no partner", i, e, got.Frac[i])
		}
	}
}

// requireSameOrder checks that site i of got is site i of want.
func requireSameOrder(t *testing.T, got, want *Structure, tol float64) {
	t.Helper()
	if got.NumSites() != want.NumSites() {
		t.Fatalf("%d sites, want %d", got.NumSites(), want.NumSites())
	}
	for i := range got.Species {
		if got.Species[i] != want.Species[i] || !cifSamePosition(got.Frac[i], want.Frac[i], tol) {
			t.Errorf("site %d: %s %v, want %s %v", i, got.Species[i], got.Frac[i], want.Species[i], want.Frac[i])
		}
	}
}

// The COD files list the asymmetric unit and the symmetry operations; their
// icsd-* twins are the same structures expanded and written as P1 by
// pymatgen. Expansion must give the same cell, composition and sites, in
// pymatgen's order.
func TestCIFSymmetryExpansionMatchesP1Twins(t *testing.T) {
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	cods, err := filepath.Glob(filepath.Join(dir, "cod-*.cif"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cods) != 10 {
		t.Fatalf("found %d cod-*.cif files, want 10", len(cods))
	}
	for _, cod := range cods {
		name := filepath.Base(cod)
		t.Run(name, func(t *testing.T) {
			sym := readCIFFile(t, cod)
			p1 := readCIFFile(t, filepath.Join(dir, strings.Replace(name, "cod-", "icsd-", 1)))
			requireSameLattice(t, sym.Lattice, p1.Lattice, 1e-8)
			if !sym.Composition().Equal(p1.Composition(), 0) {
				t.Errorf("composition %v, want %v", sym.Composition().Formula(), p1.Composition().Formula())
			}
			requireSitesMatch(t, sym, p1, 1e-4)
			// pymatgen wrote the twins in the order its reader produces (to 1e-5:
			// reading "0.66667000" back snaps it to 2/3).
			requireSameOrder(t, sym, p1, 1e-5)
		})
	}
}

// Volume, density and atom count of every golden CIF agree with pymatgen's.
func TestCIFGoldenVolumesAndDensities(t *testing.T) {
	path := testbed.DataPath(t, "golden", "cgcnn", "predictions.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Structures map[string]struct {
			Formula string  `json:"formula"`
			NAtoms  int     `json:"natoms"`
			Density float64 `json:"density_g_cm3"`
			Volume  float64 `json:"volume_A3"`
		} `json:"structures"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Structures) != 51 {
		t.Fatalf("%d structures in predictions.json, want 51", len(golden.Structures))
	}
	dir := filepath.Join(filepath.Dir(path), "cifs")
	for name, want := range golden.Structures {
		t.Run(name, func(t *testing.T) {
			s := readCIFFile(t, filepath.Join(dir, name))
			if s.NumSites() != want.NAtoms {
				t.Errorf("natoms %d, want %d", s.NumSites(), want.NAtoms)
			}
			if got := s.Composition().ReducedFormula(); got != want.Formula {
				t.Errorf("formula %s, want %s", got, want.Formula)
			}
			if rel := math.Abs(s.Volume()/want.Volume - 1); rel > 1e-6 {
				t.Errorf("volume %.10g Å³, want %.10g (relative error %.2g)", s.Volume(), want.Volume, rel)
			}
			if rel := math.Abs(s.Density()/want.Density - 1); rel > 1e-6 {
				t.Errorf("density %.10g g/cm³, want %.10g (relative error %.2g)", s.Density(), want.Density, rel)
			}
		})
	}
}
