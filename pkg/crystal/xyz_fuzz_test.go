package crystal

import (
	"bytes"
	"testing"
)

// FuzzParseXYZ feeds arbitrary bytes to the extended XYZ reader: it must
// never panic, must fail with one of its documented errors, and whatever it
// accepts must be a valid structure that WriteXYZ writes and ParseXYZ reads
// back with the same species, cell and positions (to the 16 decimals
// written). Seeds: the test XYZ files, broken variants of them, and the
// corpus under testdata/fuzz/FuzzParseXYZ.
func FuzzParseXYZ(f *testing.F) {
	seedCorpus(f, "xyz", "*", func(data []byte) [][]byte {
		return [][]byte{
			data[:len(data)/2],                                           // truncated
			bytes.ReplaceAll(data, []byte(`"`), nil),                     // quotes dropped
			bytes.ReplaceAll(data, []byte("]"), nil),                     // brackets left open
			bytes.ReplaceAll(data, []byte(":R:3"), []byte(":R:2")),       // columns miscounted
			bytes.ReplaceAll(data, []byte("0.0"), []byte("1e308")),       // overflow
			append(append([]byte(nil), data...), data...),                // two frames
			bytes.ReplaceAll(data, []byte("Lattice"), []byte("lattice")), // case
		}
	},
		"", "1", "1\n", "0\n\n", "1\nLattice=\"1 0 0 0 1 0 0 0 1\"\nH 0 0 0\n",
		"1\nLattice={1 0 0 0 1 0 0 0 1} Properties=Z:I:1:pos:R:3:species:S:1\n1 0 0 0 He\n",
		"1\nLattice=\"1 0 0 0 1 0 0 0 1\" Properties=species:S:1:pos:R:3:m:L:2\nH 0 0 0 T F\n",
		"1\n\"Lattice\" = \"1 0 0 0 1 0 0 0 1\" a=\"\\\"\" b={} c=[]\nH 0 0 0\n",
	)
	sentinels := []error{ErrBadXYZ, ErrNotPeriodic, ErrBadLattice, ErrBadStructure, ErrUnknownElement, ErrTooManySites}
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseXYZ(data); accepted(t, s, err, sentinels) {
			writeReadBack(t, s, data, "XYZ", WriteXYZ, ParseXYZ)
		}
	})
}
