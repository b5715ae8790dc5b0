package crystal

import (
	"math"
	"testing"
)

// FuzzParseStructure feeds arbitrary bytes to the format-sniffing reader,
// which reaches every parser (CIF, POSCAR, extended XYZ, pymatgen JSON and
// candidate answers): no panic, only documented errors, and valid
// structures when it succeeds.
func FuzzParseStructure(f *testing.F) {
	for _, dir := range []string{"json", "cif", "poscar", "xyz"} {
		seedCorpus(f, dir, "*", nil)
	}
	seedCorpus(f, "", "", nil,
		`{"formula": "Na", "lattice": [[1e200, 0, 0], [0, 1e200, 0], [0, 0, 1e200]], "species": ["Na"], "coords": [[0, 0, 0]]}`,
		`{"formula": "NaCl", "lattice": {"a": 4, "b": 4, "c": 4, "alpha": 90, "beta": 90, "gamma": 90}, "species": ["Na", "Cl"], "coords": [[0, 0, 0], [0.5, 0.5, 0.5]]}`,
		`{"@class": "Structure", "lattice": {"matrix": [[4, 0, 0], [0, 4, 0], [0, 0, 4]]}, "sites": [{"species": [{"element": "Na", "occu": 1}], "abc": [0, 0, 0]}]}`,
		`{"@class": "Structure", "lattice": {"matrix": [[4, 0, 0], [0, 4, 0], [0, 0, 4]]}, "sites": [{"species": [{"element": "Na", "occu": 1}], "abc": [1e308, 0, 0]}]}`,
		`{"species": null, "coords": null}`, `{"sites": {}}`, `{}`, `[]`, `null`,
	)
	sentinels := []error{ErrUnknownFormat, ErrBadCIF, ErrBadStructureJSON, ErrBadLattice, ErrBadStructure,
		ErrUnknownElement, ErrBadFormula, ErrFormulaMismatch, ErrPartialOccupancy, ErrNoSymmetryOperations, ErrTooManySites,
		ErrBadPOSCAR, ErrNoSpecies, ErrBadXYZ, ErrNotPeriodic}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStructure(data)
		if !accepted(t, s, err, sentinels) {
			return
		}
		if n := s.NumSites(); n == 0 || n > MaxReadSites || len(s.Frac) != n {
			t.Fatalf("%d sites, %d coordinates", n, len(s.Frac))
		}
		if v := s.Volume(); !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("volume %v", v)
		}
		for i, e := range s.Species {
			if !e.Valid() {
				t.Fatalf("site %d: invalid element %d", i, int(e))
			}
		}
		out, err := MarshalPymatgenJSON(s)
		if err != nil {
			t.Fatalf("MarshalPymatgenJSON: %v", err)
		}
		back, err := ParsePymatgenJSON(out)
		if err != nil || back.NumSites() != s.NumSites() {
			t.Fatalf("pymatgen JSON round trip: %v", err)
		}
	})
}
