package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// fixtureFiles writes test inputs into one temporary folder and records
// their paths by name.
type fixtureFiles struct {
	t     *testing.T
	dir   string
	paths map[string]string
}

func newFixtureFiles(t *testing.T) *fixtureFiles {
	return &fixtureFiles{t: t, dir: t.TempDir(), paths: map[string]string{}}
}

func (f *fixtureFiles) write(name string, data []byte) {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	f.paths[name] = p
}

// cif writes s as a P1 CIF.
func (f *fixtureFiles) cif(name string, s *crystal.Structure) {
	f.t.Helper()
	var buf bytes.Buffer
	if err := crystal.WriteCIF(&buf, s); err != nil {
		f.t.Fatal(err)
	}
	f.write(name, buf.Bytes())
}

// pymatgenJSON writes s as pymatgen's Structure.as_dict() JSON.
func (f *fixtureFiles) pymatgenJSON(name string, s *crystal.Structure) {
	f.t.Helper()
	js, err := crystal.MarshalPymatgenJSON(s)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write(name, js)
}

// missing records, under name, the path of a file that does not exist.
func (f *fixtureFiles) missing(name, file string) {
	f.paths[name] = filepath.Join(f.dir, file)
}
