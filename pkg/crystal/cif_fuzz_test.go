package crystal

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// FuzzParseCIF feeds arbitrary bytes to the CIF reader: it must never panic,
// must fail with one of its documented errors, and whatever it accepts must
// be a valid structure that WriteCIF writes and ParseCIF reads back with the
// same sites. Seeds: the test CIFs, broken variants of them, and the corpus
// under testdata/fuzz/FuzzParseCIF.
func FuzzParseCIF(f *testing.F) {
	seedCorpus(f, "cif", "*.cif", func(data []byte) [][]byte {
		return [][]byte{
			data[:len(data)/2],                                  // truncated
			bytes.ReplaceAll(data, []byte("'"), nil),            // unbalanced quoting
			bytes.ReplaceAll(data, []byte("\n;"), []byte("\n")), // text fields opened, never closed
			bytes.ReplaceAll(data, []byte("loop_"), nil),        // loops flattened into items
			bytes.ReplaceAll(data, []byte("1/2"), []byte("1/0")),
		}
	},
		"", "data_", "data_x\nloop_\n", ";\n", "'", "data_x\n_a ;\n;\n",
		cifWithCell(atomLoopHeader+"Na1 0 0 0\n"),
		cifWithCell("loop_\n_symmetry_equiv_pos_as_xyz\n'-x,-y,-z'\n'x,y,z'\n"+atomLoopHeader+"Na1 0.5 0.5 0.5\nCl1 0 0 0.5\n"),
	)
	sentinels := []error{ErrBadCIF, ErrBadLattice, ErrBadStructure, ErrUnknownElement,
		ErrPartialOccupancy, ErrNoSymmetryOperations, ErrTooManySites}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCIF(data)
		if !accepted(t, s, err, sentinels) {
			return
		}
		if n := s.NumSites(); n == 0 || n > MaxReadSites || len(s.Frac) != n {
			t.Fatalf("%d sites, %d coordinates", n, len(s.Frac))
		}
		if v := s.Volume(); !(v > 0) || math.IsInf(v, 0) {
			t.Fatalf("volume %v", v)
		}
		for i, f := range s.Frac {
			for _, x := range f {
				if !(x >= 0 && x < 1) {
					t.Fatalf("site %d at %v: not wrapped into [0, 1)", i, f)
				}
			}
		}
		var buf bytes.Buffer
		if err := WriteCIF(&buf, s); err != nil {
			if errors.Is(err, ErrBadLattice) {
				return // a cell 16 decimals cannot describe, documented
			}
			t.Fatalf("WriteCIF: %v", err)
		}
		back, err := ParseCIF(buf.Bytes())
		if err != nil {
			t.Fatalf("reading the written CIF: %v\n%s", err, buf.Bytes())
		}
		if back.NumSites() != s.NumSites() || !back.Composition().Equal(s.Composition(), 0) {
			t.Fatalf("written and read back: %d sites (%s), want %d (%s)",
				back.NumSites(), back.Composition().Formula(), s.NumSites(), s.Composition().Formula())
		}
	})
}
