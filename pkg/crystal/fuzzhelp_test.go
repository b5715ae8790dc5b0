package crystal

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// seedCorpus adds to f's corpus every file of testdata/dir matching glob
// (none for an empty glob) with the variants of it that variants makes
// (nil: none), then extra.
func seedCorpus(f *testing.F, dir, glob string, variants func(data []byte) [][]byte, extra ...string) {
	var files []string
	if glob != "" {
		var err error
		if files, err = filepath.Glob(filepath.Join("testdata", dir, glob)); err != nil {
			f.Fatal(err)
		}
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if variants != nil {
			for _, v := range variants(data) {
				f.Add(v)
			}
		}
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// accepted checks a reader's answer to fuzzed input: an error comes
// without a structure and wraps one of the documented sentinels. It
// reports whether the reader accepted the input.
func accepted(t *testing.T, s *Structure, err error, sentinels []error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	if s != nil {
		t.Fatalf("structure returned with error %v", err)
	}
	for _, sentinel := range sentinels {
		if errors.Is(err, sentinel) {
			return false
		}
	}
	t.Fatalf("error %v wraps none of the documented sentinels", err)
	return false
}

// writeReadBack writes an accepted structure s (checkReadStructure) with
// write, the first 80 bytes of data as its comment, and reads it back
// with parse: the same species, cell and positions (requireCloseRoundTrip,
// rel 1e-12). A cell whose written vectors are coplanar is refused as
// ErrBadLattice, as documented.
func writeReadBack(t *testing.T, s *Structure, data []byte, format string, write func(io.Writer, *Structure, string) error, parse func([]byte) (*Structure, error)) {
	t.Helper()
	checkReadStructure(t, s)
	var buf bytes.Buffer
	if err := write(&buf, s, string(data[:min(len(data), 80)])); err != nil {
		if errors.Is(err, ErrBadLattice) {
			return
		}
		t.Fatalf("write %s: %v", format, err)
	}
	back, err := parse(buf.Bytes())
	if err != nil {
		t.Fatalf("reading the written %s: %v\n%s", format, err, buf.Bytes())
	}
	requireCloseRoundTrip(t, back, s, 1e-12)
}
