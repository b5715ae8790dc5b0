package crystal

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// The pymatgen fixtures of the COD files (pymatgen's
// Structure.from_file(...).as_dict(), with oxidation states) are the
// structures ParseCIF builds from the COD files, in the same order.
func TestParsePymatgenJSONMatchesCODReading(t *testing.T) {
	for _, id := range []string{"1101051", "1507756"} {
		t.Run(id, func(t *testing.T) {
			fromJSON, err := ParsePymatgenJSON(readTestdata(t, "json", "cod-"+id+".pymatgen.json"))
			if err != nil {
				t.Fatal(err)
			}
			fromCIF := readCIFFile(t, testbed.DataPath(t, "golden", "cgcnn", "cifs", "cod-"+id+".cif"))
			gm, wm := fromCIF.Lattice.Matrix(), fromJSON.Lattice.Matrix()
			for i := range gm {
				for j := range gm[i] {
					if math.Abs(gm[i][j]-wm[i][j]) > 1e-12 {
						t.Errorf("matrix[%d][%d] = %.15g, want %.15g", i, j, gm[i][j], wm[i][j])
					}
				}
			}
			requireSameOrder(t, fromCIF, fromJSON, 1e-12)
		})
	}
}

func TestPymatgenJSONRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "json", "*.pymatgen.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParsePymatgenJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			out, err := MarshalPymatgenJSON(s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParsePymatgenJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			if back.Lattice.Matrix() != s.Lattice.Matrix() {
				t.Errorf("matrix %v, want %v", back.Lattice.Matrix(), s.Lattice.Matrix())
			}
			for i := range s.Species {
				if back.Species[i] != s.Species[i] || back.Frac[i] != s.Frac[i] {
					t.Errorf("site %d: %s %v, want %s %v", i, back.Species[i], back.Frac[i], s.Species[i], s.Frac[i])
				}
			}
			// The written dict has pymatgen's fields with consistent values.
			var d struct {
				Module  string `json:"@module"`
				Class   string `json:"@class"`
				Lattice struct {
					A, B, C, Alpha, Beta, Gamma, Volume float64
					PBC                                 []bool
				}
				Sites []struct {
					Species []struct {
						Element string
						Occu    float64
					}
					XYZ   Vec3
					Label string
				}
			}
			if err := json.Unmarshal(out, &d); err != nil {
				t.Fatal(err)
			}
			a, b, c, alpha, beta, gamma := s.Lattice.Parameters()
			if d.Module != "pymatgen.core.structure" || d.Class != "Structure" || len(d.Lattice.PBC) != 3 ||
				d.Lattice.A != a || d.Lattice.B != b || d.Lattice.C != c || d.Lattice.Alpha != alpha ||
				d.Lattice.Beta != beta || d.Lattice.Gamma != gamma || d.Lattice.Volume != s.Volume() {
				t.Errorf("header %+v", d)
			}
			for i, site := range d.Sites {
				if len(site.Species) != 1 || site.Species[0].Element != s.Species[i].Symbol() || site.Species[0].Occu != 1 ||
					site.XYZ != s.Cartesian(i) || site.Label != s.Species[i].Symbol() {
					t.Errorf("site %d: %+v", i, site)
				}
			}
		})
	}
}

func TestParsePymatgenJSONXYZOnly(t *testing.T) {
	in := `{"lattice": {"matrix": [[2,0,0],[0,3,0],[0,0,4]]},
	        "sites": [{"species": [{"element": "Fe", "occu": 1}], "xyz": [1, 1.5, 1]}]}`
	s, err := ParsePymatgenJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if s.Frac[0] != (Vec3{0.5, 0.5, 0.25}) || s.Species[0] != MustElement("Fe") {
		t.Errorf("site %s %v", s.Species[0], s.Frac[0])
	}
}

func TestParsePymatgenJSONRejects(t *testing.T) {
	const lat = `"lattice": {"matrix": [[4,0,0],[0,4,0],[0,0,4]], "pbc": [true, true, true]}`
	site := func(species, abc string) string {
		return `{"species": ` + species + `, "abc": ` + abc + `}`
	}
	doc := func(sites ...string) string {
		return `{"@module": "pymatgen.core.structure", "@class": "Structure", ` + lat + `, "sites": [` + strings.Join(sites, ",") + `]}`
	}
	na := `[{"element": "Na", "occu": 1}]`
	tests := []struct {
		name     string
		in       string
		sentinel error
		mention  string
	}{
		{"not JSON", `{"lattice": `, ErrBadStructureJSON, "invalid JSON"},
		{"not an object", `[1, 2]`, ErrBadStructureJSON, "object"},
		{"molecule", `{"@class": "Molecule", "sites": []}`, ErrBadStructureJSON, "Molecule"},
		{"no lattice", `{"@class": "Structure", "sites": []}`, ErrBadStructureJSON, "lattice"},
		{"no matrix", `{"lattice": {"a": 4}, "sites": []}`, ErrBadStructureJSON, "lattice.matrix"},
		{"matrix 2 rows", `{"lattice": {"matrix": [[1,0,0],[0,1,0]]}, "sites": []}`, ErrBadStructureJSON, "3×3"},
		{"matrix row of 2", `{"lattice": {"matrix": [[1,0,0],[0,1],[0,0,1]]}, "sites": []}`, ErrBadStructureJSON, "lattice.matrix[1]"},
		{"matrix string", `{"lattice": {"matrix": [[1,0,0],[0,"1",0],[0,0,1]]}, "sites": []}`, ErrBadStructureJSON, "lattice.matrix[1][1]"},
		{"singular matrix", `{"lattice": {"matrix": [[1,0,0],[2,0,0],[0,0,1]]}, "sites": []}`, ErrBadLattice, "coplanar"},
		{"not periodic", `{"lattice": {"matrix": [[4,0,0],[0,4,0],[0,0,4]], "pbc": [true, true, false]}, "sites": []}`, ErrBadStructureJSON, "pbc"},
		{"no sites", `{` + lat + `}`, ErrBadStructureJSON, "sites"},
		{"empty sites", doc(), ErrBadStructure, "no sites"},
		{"no species", doc(`{"abc": [0,0,0]}`), ErrBadStructureJSON, "sites[0].species"},
		{"empty species", doc(site(`[]`, `[0,0,0]`)), ErrBadStructureJSON, "sites[0].species: empty"},
		{"dummy species", doc(site(na, `[0,0,0]`), site(`[{"element": "X0+", "occu": 1}]`, `[0.5,0.5,0.5]`)), ErrUnknownElement, "sites[1].species[0].element"},
		{"partial occupancy", doc(site(`[{"element": "Na", "occu": 0.5}]`, `[0,0,0]`)), ErrPartialOccupancy, "sites[0] (Na) has occupancy 0.5"},
		{"mixed site", doc(site(`[{"element": "Na", "occu": 0.5}, {"element": "K", "occu": 0.5}]`, `[0,0,0]`)), ErrPartialOccupancy, "2 species"},
		{"abc of 2", doc(site(na, `[0,0]`)), ErrBadStructureJSON, "sites[0].abc"},
		{"abc null", doc(site(na, `[0,null,0]`)), ErrBadStructureJSON, "sites[0].abc[1]"},
		{"no coordinates", doc(`{"species": ` + na + `}`), ErrBadStructureJSON, "sites[0].abc"},
		{"occu string", doc(site(`[{"element": "Na", "occu": "1"}]`, `[0,0,0]`)), ErrBadStructureJSON, "occu"},
		{"overflowing position", doc(site(na, `[1e308,0,0]`)), ErrBadStructure, "sites[0]"},
		{"huge cell", `{"lattice": {"matrix": [[1e200,0,0],[0,1e200,0],[0,0,1e200]]}, "sites": [` + site(na, `[0,0,0]`) + `]}`, ErrBadLattice, "overflows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParsePymatgenJSON([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error; parsed %d sites", s.NumSites())
			}
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q, want %v mentioning %q", err, tc.sentinel, tc.mention)
			}
		})
	}
}

func TestParseCandidateJSONFixtures(t *testing.T) {
	tests := []struct {
		file      string
		formula   string
		nsites    int
		rationale string
		rule      string
	}{
		{"candidate_parameters.json", "NaCl", 8, "rock salt with a slightly expanded cell", "ionic radius similarity"},
		{"candidate_matrix.json", "TiO2", 6, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			c, s, err := ParseCandidateJSON(readTestdata(t, "json", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Composition().ReducedFormula() != tc.formula || s.NumSites() != tc.nsites ||
				c.Rationale != tc.rationale || c.Rule != tc.rule {
				t.Errorf("got %s with %d sites, rationale %q, rule %q", s.Composition().ReducedFormula(), s.NumSites(), c.Rationale, c.Rule)
			}
		})
	}
	// The matrix form keeps the matrix; the parameter form uses pymatgen's
	// orientation.
	_, s, err := ParseCandidateJSON(readTestdata(t, "json", "candidate_matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	if m := s.Lattice.Matrix(); m != [3][3]float64{{4.5937, 0, 0}, {0, 4.5937, 0}, {0, 0, 2.9587}} {
		t.Errorf("matrix %v", m)
	}
}

func TestCandidateRoundTrip(t *testing.T) {
	s, err := ParseCIF(readTestdata(t, "cif", "pymatgen_writer_reference.cif"))
	if err != nil {
		t.Fatal(err)
	}
	c := CandidateFromStructure(s)
	c.Rationale, c.Rule = "olivine-like", "same-group substitution"
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	c2, back, err := ParseCandidateJSON(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if c2.Formula != "LiFePO4" || c2.Rationale != c.Rationale || c2.Rule != c.Rule {
		t.Errorf("candidate %+v", c2)
	}
	// Parameters rebuild the same cell in pymatgen's orientation, and the
	// fractional coordinates are carried exactly.
	requireSameLattice(t, back.Lattice, s.Lattice, 1e-10)
	m, bm := s.Lattice.Matrix(), back.Lattice.Matrix()
	for i := range m {
		for j := range m[i] {
			if math.Abs(m[i][j]-bm[i][j]) > 1e-10 {
				t.Errorf("matrix[%d][%d] = %v, want %v", i, j, bm[i][j], m[i][j])
			}
		}
	}
	for i := range s.Species {
		if back.Species[i] != s.Species[i] || back.Frac[i] != s.Frac[i] {
			t.Errorf("site %d: %s %v, want %s %v", i, back.Species[i], back.Frac[i], s.Species[i], s.Frac[i])
		}
	}
	// The matrix form round-trips too.
	mat := s.Lattice.Matrix()
	c.Lattice = CandidateLattice{Matrix: &mat}
	if data, err = json.Marshal(c); err != nil {
		t.Fatal(err)
	}
	if _, back, err = ParseCandidateJSON(data); err != nil || back.Lattice.Matrix() != mat {
		t.Errorf("matrix round trip: %v", err)
	}
	if _, err := json.Marshal(Candidate{}); err == nil {
		t.Error("marshalling a candidate without a lattice succeeded")
	}
}

func TestParseCandidateJSONRejects(t *testing.T) {
	const params = `{"a": 4, "b": 4, "c": 4, "alpha": 90, "beta": 90, "gamma": 90}`
	cand := func(formula, lattice, species, coords string) string {
		return `{"formula": ` + formula + `, "lattice": ` + lattice + `, "species": ` + species + `, "coords": ` + coords + `}`
	}
	tests := []struct {
		name     string
		in       string
		sentinel error
		mention  string
	}{
		{"not JSON", `{"formula": "NaCl",`, ErrBadStructureJSON, "invalid JSON"},
		{"a list", `[]`, ErrBadStructureJSON, "candidate"},
		{"missing coords", `{"formula": "Na", "lattice": ` + params + `, "species": ["Na"]}`, ErrBadStructureJSON, "coords: missing"},
		{"missing formula", `{"lattice": ` + params + `, "species": ["Na"], "coords": [[0,0,0]]}`, ErrBadStructureJSON, "formula: missing"},
		{"empty formula", cand(`" "`, params, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "formula"},
		{"formula not a string", cand(`42`, params, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "formula"},
		{"length mismatch", cand(`"NaCl"`, params, `["Na", "Cl"]`, `[[0,0,0]]`), ErrBadStructureJSON, "2 species but 1 coordinates"},
		{"coordinate of 2", cand(`"NaCl"`, params, `["Na", "Cl"]`, `[[0,0,0],[0.5,0.5]]`), ErrBadStructureJSON, "coords[1]: want 3 numbers, got 2"},
		{"coordinate of 4", cand(`"Na"`, params, `["Na"]`, `[[0,0,0,1]]`), ErrBadStructureJSON, "coords[0]"},
		{"coordinate string", cand(`"Na"`, params, `["Na"]`, `[[0,"0.5",0]]`), ErrBadStructureJSON, "coords[0][1]"},
		{"coordinate null", cand(`"Na"`, params, `["Na"]`, `[[0,null,0]]`), ErrBadStructureJSON, "coords[0][1]"},
		{"coordinate not an array", cand(`"Na"`, params, `["Na"]`, `[0.5]`), ErrBadStructureJSON, "coords[0]"},
		{"coords not an array", cand(`"Na"`, params, `["Na"]`, `"0 0 0"`), ErrBadStructureJSON, "coords"},
		{"unknown element", cand(`"NaXx"`, params, `["Na", "Xx"]`, `[[0,0,0],[0.5,0.5,0.5]]`), ErrUnknownElement, `species[1]`},
		{"species not strings", cand(`"Na"`, params, `[11]`, `[[0,0,0]]`), ErrBadStructureJSON, "species[0]"},
		{"formula mismatch", cand(`"NaCl2"`, params, `["Na", "Cl"]`, `[[0,0,0],[0.5,0.5,0.5]]`), ErrFormulaMismatch, `"NaCl2" is NaCl2 but the species give NaCl`},
		{"formula unparsable", cand(`"Na(Cl"`, params, `["Na", "Cl"]`, `[[0,0,0],[0.5,0.5,0.5]]`), ErrBadFormula, "formula"},
		{"lattice missing gamma", cand(`"Na"`, `{"a": 4, "b": 4, "c": 4, "alpha": 90, "beta": 90}`, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "lattice.gamma: missing"},
		{"lattice parameter string", cand(`"Na"`, `{"a": "4", "b": 4, "c": 4, "alpha": 90, "beta": 90, "gamma": 90}`, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "lattice.a"},
		{"lattice of 2 rows", cand(`"Na"`, `[[4,0,0],[0,4,0]]`, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "lattice"},
		{"lattice a number", cand(`"Na"`, `4`, `["Na"]`, `[[0,0,0]]`), ErrBadStructureJSON, "lattice"},
		{"negative length", cand(`"Na"`, `{"a": -4, "b": 4, "c": 4, "alpha": 90, "beta": 90, "gamma": 90}`, `["Na"]`, `[[0,0,0]]`), ErrBadLattice, "lattice"},
		{"singular matrix", cand(`"Na"`, `[[4,0,0],[4,0,0],[0,0,4]]`, `["Na"]`, `[[0,0,0]]`), ErrBadLattice, "lattice"},
		{"no sites", cand(`"Na"`, params, `[]`, `[]`), ErrBadStructureJSON, "no sites"},
		{"overflowing position", cand(`"Na"`, params, `["Na"]`, `[[0,0,1e308]]`), ErrBadStructure, "coords[0]"},
		{"huge cell", cand(`"Na"`, `{"a": 1e200, "b": 1e200, "c": 1e200, "alpha": 90, "beta": 90, "gamma": 90}`, `["Na"]`, `[[0,0,0]]`), ErrBadLattice, "overflows"},
		{"rationale not a string", `{"formula": "Na", "lattice": ` + params + `, "species": ["Na"], "coords": [[0,0,0]], "rationale": 3}`, ErrBadStructureJSON, "rationale"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s, err := ParseCandidateJSON([]byte(tc.in))
			if err == nil {
				t.Fatalf("no error; parsed %d sites", s.NumSites())
			}
			if s != nil {
				t.Error("structure returned with an error")
			}
			if !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("error %q, want %v mentioning %q", err, tc.sentinel, tc.mention)
			}
		})
	}
	// A candidate with the right shape is returned with its structure error,
	// so its rationale can be recorded.
	c, _, err := ParseCandidateJSON([]byte(`{"formula": "NaCl2", "lattice": ` + params +
		`, "species": ["Na", "Cl"], "coords": [[0,0,0],[0.5,0.5,0.5]], "rationale": "why"}`))
	if !errors.Is(err, ErrFormulaMismatch) || c == nil || c.Rationale != "why" {
		t.Errorf("candidate %+v, error %v", c, err)
	}
}
