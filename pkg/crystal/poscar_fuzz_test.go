package crystal

import (
	"bytes"
	"math"
	"testing"
)

// FuzzParsePOSCAR feeds arbitrary bytes to the POSCAR reader: it must never
// panic, must fail with one of its documented errors, and whatever it
// accepts must be a valid structure that WritePOSCAR writes and ParsePOSCAR
// reads back with the same species and coordinates. Seeds: the test
// POSCARs, broken variants of them, and the corpus under
// testdata/fuzz/FuzzParsePOSCAR.
func FuzzParsePOSCAR(f *testing.F) {
	seedCorpus(f, "poscar", "*", func(data []byte) [][]byte {
		return [][]byte{
			data[:len(data)/2],                                                     // truncated
			bytes.Replace(data, []byte("\n"), nil, 3),                              // header lines merged
			bytes.ReplaceAll(data, []byte("Direct"), []byte("Cartesian")),          // mode switched
			bytes.Replace(data, []byte("1.0"), []byte("-1e-300"), 1),               // volume scaling of a huge cell
			bytes.ReplaceAll(data, []byte("0.0"), []byte("1e308")),                 // overflow
			append([]byte("Selective dynamics\n"), data...),                        // stray line
			bytes.ReplaceAll(data, []byte("T   T   T"), []byte("T T")),             // flags cut
			bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n")),                   // CRLF
			bytes.ReplaceAll(data, []byte("     4     4"), []byte("   4000 4000")), // too many sites
		}
	},
		"", "\n", "x\n1\n", "x\n1 1 1\n1 0 0\n0 1 0\n0 0 1\nH\n1\nD\n0 0 0\n",
		"x\n-1\n1 0 0\n0 1 0\n0 0 1\n1\nC\n0 0 0 H\n",
		"x\n1\n1 0 0\n0 1 0\n0 0 1\nH He\n1 1\nSel\nK\n0 0 0 T T T\n.5 .5 .5 F F F\n",
	)
	sentinels := []error{ErrBadPOSCAR, ErrNoSpecies, ErrBadLattice, ErrBadStructure, ErrUnknownElement, ErrTooManySites}
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParsePOSCAR(data); accepted(t, s, err, sentinels) {
			writeReadBack(t, s, data, "POSCAR", WritePOSCAR, ParsePOSCAR)
		}
	})
}

// checkReadStructure checks what every reader promises of a structure it
// returns: sites within the limit, a finite positive volume, known elements,
// finite Cartesian positions.
func checkReadStructure(t *testing.T, s *Structure) {
	t.Helper()
	if n := s.NumSites(); n == 0 || n > MaxReadSites || len(s.Frac) != n {
		t.Fatalf("%d sites, %d coordinates", n, len(s.Frac))
	}
	if v := s.Volume(); !(v >= minLatticeVolume) || math.IsInf(v, 0) {
		t.Fatalf("volume %v", v)
	}
	for i, e := range s.Species {
		if !e.Valid() {
			t.Fatalf("site %d: invalid element %d", i, int(e))
		}
		for _, x := range s.Cartesian(i) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("site %d: Cartesian position %v", i, s.Cartesian(i))
			}
		}
	}
}

// requireCloseRoundTrip checks that a structure written and read back has
// the same species in order, and lattice vectors and Cartesian positions
// within what the written decimals and rel (relative rounding) allow: 1e-9
// Å plus rel times the size of the numbers involved (a position's error
// grows with its fractional coordinates times the cell).
func requireCloseRoundTrip(t *testing.T, got, want *Structure, rel float64) {
	t.Helper()
	if got.NumSites() != want.NumSites() {
		t.Fatalf("%d sites, want %d", got.NumSites(), want.NumSites())
	}
	gm, wm := got.Lattice.Matrix(), want.Lattice.Matrix()
	cell := 0.0
	for i := range gm {
		for k := range gm[i] {
			cell = math.Max(cell, math.Abs(wm[i][k]))
			if math.Abs(gm[i][k]-wm[i][k]) > 1e-9+rel*math.Abs(wm[i][k]) {
				t.Fatalf("lattice vector %d = %v, want %v", i, gm[i], wm[i])
			}
		}
	}
	for i := range got.Species {
		if got.Species[i] != want.Species[i] {
			t.Fatalf("site %d: %s, want %s", i, got.Species[i], want.Species[i])
		}
		f := want.Frac[i]
		tol := 1e-9 + rel*cell*(3+math.Abs(f[0])+math.Abs(f[1])+math.Abs(f[2]))
		g, w := got.Cartesian(i), want.Cartesian(i)
		for k := range g {
			if math.Abs(g[k]-w[k]) > tol {
				t.Fatalf("site %d at %v Å, want %v (tolerance %.3g)", i, g, w, tol)
			}
		}
	}
}
