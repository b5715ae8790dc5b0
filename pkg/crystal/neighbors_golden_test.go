package crystal

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

type goldenNeighbors struct {
	Structures map[string]struct {
		NeighborDistances [][]float64 `json:"neighbor_distances"`
	} `json:"structures"`
}

// goldenStructures reads the 51 golden CIFs with their neighbour distances
// (pymatgen 2022.11.7's neighbour search, as the CGCNN reference uses it).
func goldenStructures(t testing.TB) (map[string]*Structure, goldenNeighbors) {
	t.Helper()
	var g goldenNeighbors
	data, err := os.ReadFile(testbed.DataPath(t, "golden", "cgcnn", "predictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	out := map[string]*Structure{}
	for name := range g.Structures {
		s, err := ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out, g
}

// TestNearestNeighborsGolden: the 12 nearest neighbours within 8 Å of every
// atom of the 51 golden structures, to 1e-6 Å.
func TestNearestNeighborsGolden(t *testing.T) {
	structs, g := goldenStructures(t)
	if len(structs) != 51 {
		t.Fatalf("%d golden structures, want 51", len(structs))
	}
	worst := 0.0
	for name, s := range structs {
		want := g.Structures[name].NeighborDistances
		nl, err := s.NearestNeighbors(12, 8)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(want) != s.NumSites() {
			t.Fatalf("%s: %d sites, golden has %d", name, s.NumSites(), len(want))
		}
		for i := range want {
			got := nl.Of(i)
			if len(got) != len(want[i]) {
				t.Fatalf("%s site %d: %d neighbours, want %d", name, i, len(got), len(want[i]))
			}
			for k, n := range got {
				d := math.Abs(n.Distance - want[i][k])
				worst = math.Max(worst, d)
				if d > 1e-6 {
					t.Errorf("%s site %d neighbour %d: %.9f Å, want %.9f", name, i, k, n.Distance, want[i][k])
				}
			}
		}
	}
	t.Logf("largest difference %.2g Å over 51 structures", worst)
}

// BenchmarkNeighborsGolden times the neighbour list of the 100-atom
// Materials Project structures of the golden set and of a 200-atom
// supercell: the CGCNN graph (12 nearest within 8 Å) and the full list
// within 8 Å.
func BenchmarkNeighborsGolden(b *testing.B) {
	structs, _ := goldenStructures(b)
	var names []string
	for name, s := range structs {
		if strings.HasPrefix(name, "mp-") && s.NumSites() >= 90 {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		b.Skip("no 100-atom structures")
	}
	super, err := structs["icsd-1000041.cif"].Supercell(5, 5, 1) // NaCl, 8 × 25 = 200 atoms
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name    string
		structs []*Structure
	}{{"mp-100atoms", nil}, {"supercell-200atoms", []*Structure{super}}}
	for _, n := range names {
		cases[0].structs = append(cases[0].structs, structs[n])
	}
	for _, c := range cases {
		var f NeighborFinder
		var nl NeighborList
		for _, mode := range []struct {
			name string
			k    int
		}{{"nearest12", 12}, {"all8A", 0}} {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, s := range c.structs {
						if err := f.Find(s, 8, mode.k, &nl); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.structs)), "ns/structure")
			})
		}
	}
}
