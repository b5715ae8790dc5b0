package crystal

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseXYZ feeds arbitrary bytes to the extended XYZ reader: it must
// never panic, must fail with one of its documented errors, and whatever it
// accepts must be a valid structure that WriteXYZ writes and ParseXYZ reads
// back with the same species, cell and positions (to the 16 decimals
// written). Seeds: the test XYZ files, broken variants of them, and the
// corpus under testdata/fuzz/FuzzParseXYZ.
func FuzzParseXYZ(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "xyz", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])                                           // truncated
		f.Add(bytes.ReplaceAll(data, []byte(`"`), nil))                     // quotes dropped
		f.Add(bytes.ReplaceAll(data, []byte("]"), nil))                     // brackets left open
		f.Add(bytes.ReplaceAll(data, []byte(":R:3"), []byte(":R:2")))       // columns miscounted
		f.Add(bytes.ReplaceAll(data, []byte("0.0"), []byte("1e308")))       // overflow
		f.Add(append(append([]byte(nil), data...), data...))                // two frames
		f.Add(bytes.ReplaceAll(data, []byte("Lattice"), []byte("lattice"))) // case
	}
	for _, s := range []string{
		"", "1", "1\n", "0\n\n", "1\nLattice=\"1 0 0 0 1 0 0 0 1\"\nH 0 0 0\n",
		"1\nLattice={1 0 0 0 1 0 0 0 1} Properties=Z:I:1:pos:R:3:species:S:1\n1 0 0 0 He\n",
		"1\nLattice=\"1 0 0 0 1 0 0 0 1\" Properties=species:S:1:pos:R:3:m:L:2\nH 0 0 0 T F\n",
		"1\n\"Lattice\" = \"1 0 0 0 1 0 0 0 1\" a=\"\\\"\" b={} c=[]\nH 0 0 0\n",
	} {
		f.Add([]byte(s))
	}
	sentinels := []error{ErrBadXYZ, ErrNotPeriodic, ErrBadLattice, ErrBadStructure, ErrUnknownElement, ErrTooManySites}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseXYZ(data)
		if err != nil {
			if s != nil {
				t.Fatalf("structure returned with error %v", err)
			}
			for _, sentinel := range sentinels {
				if errors.Is(err, sentinel) {
					return
				}
			}
			t.Fatalf("error %v wraps none of the documented sentinels", err)
		}
		checkReadStructure(t, s)
		var buf bytes.Buffer
		if err := WriteXYZ(&buf, s, string(data[:min(len(data), 80)])); err != nil {
			if errors.Is(err, ErrBadLattice) {
				return // a cell whose written vectors are coplanar, documented
			}
			t.Fatalf("WriteXYZ: %v", err)
		}
		back, err := ParseXYZ(buf.Bytes())
		if err != nil {
			t.Fatalf("reading the written XYZ: %v\n%s", err, buf.Bytes())
		}
		requireCloseRoundTrip(t, back, s, 1e-12)
	})
}
