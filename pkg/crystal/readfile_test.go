package crystal

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFileDetectsFormat(t *testing.T) {
	tests := []struct {
		path    string
		format  Format
		formula string
		nsites  int
	}{
		{"testdata/cif/rutile_symop.cif", FormatCIF, "TiO2", 6},
		{"testdata/cif/syntax_tour.cif", FormatCIF, "CoCO2", 4},
		{"testdata/cif/pymatgen_writer_reference.cif", FormatCIF, "LiFePO4", 7},
		{"testdata/json/rutile_symop.pymatgen.json", FormatPymatgenJSON, "TiO2", 6},
		{"testdata/json/cod-1101051.pymatgen.json", FormatPymatgenJSON, "ZnS", 4},
		{"testdata/json/candidate_parameters.json", FormatCandidateJSON, "NaCl", 8},
		{"testdata/json/candidate_matrix.json", FormatCandidateJSON, "TiO2", 6},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			data, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if f := DetectFormat(data); f != tc.format {
				t.Errorf("format %v, want %v", f, tc.format)
			}
			s, err := ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			if s.Composition().ReducedFormula() != tc.formula || s.NumSites() != tc.nsites {
				t.Errorf("read %s with %d sites, want %s with %d", s.Composition().ReducedFormula(), s.NumSites(), tc.formula, tc.nsites)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
	}{
		{"\ufeff  data_x\n", FormatCIF},
		{"# comment\n_cell_length_a 4\n", FormatCIF},
		{"_cell.length_a 4\n", FormatCIF},
		{"DATA_upper\n", FormatCIF},
		{`{"@class": "Structure"}`, FormatPymatgenJSON},
		{`{"lattice": {"matrix": []}, "sites": []}`, FormatPymatgenJSON},
		{` {"species": [], "coords": []}`, FormatCandidateJSON},
		{`{"species": []}`, FormatUnknown},
		{`{"broken": `, FormatUnknown},
		{`[{"species": [], "coords": []}]`, FormatUnknown},
		{"Si\n1.0\n5.4 0 0\n", FormatUnknown}, // POSCAR
		{"", FormatUnknown},
	}
	for _, tc := range tests {
		if got := DetectFormat([]byte(tc.in)); got != tc.want {
			t.Errorf("DetectFormat(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		path     string
		sentinel error
	}{
		{write("notes.txt", "Si\n1.0\n5.4 0 0\n"), ErrUnknownFormat},
		{write("POSCAR", "Si\n1.0\n5.4 0 0\n0 5.4 0\n0 0 5.4\nSi\n2\nDirect\n0 0 0\n"), ErrBadPOSCAR},
		{write("molecule.xyz", "1\nwater, nearly\nO 0 0 0\n"), ErrNotPeriodic},
		{write("bad.cif", "data_x\n_cell_length_a 'open\n"), ErrBadCIF},
		{write("partial.json", `{"@class": "Structure", "lattice": {"matrix": [[4,0,0],[0,4,0],[0,0,4]]}, "sites": [{"species": [{"element": "Na", "occu": 0.5}], "abc": [0,0,0]}]}`), ErrPartialOccupancy},
		{write("mismatch.json", `{"formula": "Fe2O3", "lattice": [[4,0,0],[0,4,0],[0,0,4]], "species": ["Fe", "O"], "coords": [[0,0,0],[0.5,0.5,0.5]]}`), ErrFormulaMismatch},
		{filepath.Join(dir, "missing.cif"), os.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			_, err := ReadFile(tc.path)
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v, want %v", err, tc.sentinel)
			}
			if err != nil && !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}
