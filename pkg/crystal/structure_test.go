package crystal

import "testing"

// TestIdentical: a copy is identical and hashes alike; a moved site, a
// swapped species or a scaled cell is not identical.
func TestIdentical(t *testing.T) {
	s := builtStructure(t, "rocksalt", "NaCl")
	c := s.Copy()
	if !s.Identical(c) || s.ExactHash() != c.ExactHash() {
		t.Fatal("a copy is not identical or hashes differently")
	}
	moved := s.Copy()
	moved.Frac[0][0] += 1e-12
	swapped := s.Copy()
	swapped.Species[0], swapped.Species[len(swapped.Species)-1] = swapped.Species[len(swapped.Species)-1], swapped.Species[0]
	scaled, err := s.ScaledToVolume(1.01 * s.Volume())
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*Structure{"moved": moved, "swapped": swapped, "scaled": scaled} {
		if s.Identical(o) {
			t.Errorf("%s: identical", name)
		}
	}
}
