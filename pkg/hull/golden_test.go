package hull

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// goldenFile is golden/hull/phase_diagrams.json: pymatgen 2022.11.7
// PhaseDiagram results on Materials Project formation energies.
type goldenFile struct {
	Systems []goldenSystem `json:"systems"`
}

type goldenSystem struct {
	Elements []string `json:"elements"`
	Entries  []struct {
		ID      string  `json:"id"`
		Formula string  `json:"formula"`
		EForm   float64 `json:"e_form_per_atom"`
	} `json:"entries"`
	Stable  []string `json:"stable"`
	Results map[string]struct {
		EAboveHull    float64            `json:"e_above_hull"`
		Decomposition map[string]float64 `json:"decomposition"`
	} `json:"results"`
	Queries []struct {
		Formula       string             `json:"formula"`
		EForm         float64            `json:"e_form_per_atom"`
		HullEnergy    float64            `json:"hull_energy_per_atom"`
		EAboveHull    float64            `json:"e_above_hull"`
		Decomposition map[string]float64 `json:"decomposition"`
	} `json:"queries"`
}

func loadGolden(t testing.TB) goldenFile {
	t.Helper()
	b, err := os.ReadFile(testbed.DataPath(t, "golden", "hull", "phase_diagrams.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g goldenFile
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Systems) == 0 {
		t.Fatal("golden file has no systems")
	}
	return g
}

func (s goldenSystem) name() string { return strings.Join(s.Elements, "-") }

func (s goldenSystem) entries(t testing.TB) []Entry {
	t.Helper()
	out := make([]Entry, len(s.Entries))
	for i, e := range s.Entries {
		c, err := crystal.ParseFormula(e.Formula)
		if err != nil {
			t.Fatalf("%s: %v", s.name(), err)
		}
		out[i] = Entry{ID: e.ID, Composition: c, EnergyPerAtom: e.EForm}
	}
	return out
}

// goldenTol is the agreement asked of energies (eV/atom) and fractions.
const goldenTol = 1e-6

// reducedKey names a composition by its reduced formula, so that stable
// sets and decompositions compare by composition, not by which of several
// equal entries was chosen (golden/README.md).
func reducedKey(t testing.TB, formula string) string {
	t.Helper()
	c, err := crystal.ParseFormula(formula)
	if err != nil {
		t.Fatalf("golden formula %q: %v", formula, err)
	}
	return c.ReducedFormula()
}

// goldenDecomposition turns {"Li2O|mpef-1": 0.6, ...} into reduced formula →
// fraction.
func goldenDecomposition(t testing.TB, m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		formula, _, _ := strings.Cut(k, "|")
		out[reducedKey(t, formula)] += v
	}
	return out
}

func ourDecomposition(ph []Phase) map[string]float64 {
	out := map[string]float64{}
	for _, p := range ph {
		out[p.Composition.ReducedFormula()] += p.Fraction
	}
	return out
}

func sameDecomposition(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || math.Abs(v-w) > goldenTol {
			return false
		}
	}
	return true
}

func TestGolden(t *testing.T) {
	g := loadGolden(t)
	for _, sys := range g.Systems {
		t.Run(sys.name(), func(t *testing.T) {
			d, err := New(sys.entries(t))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(d.Elements()), len(sys.Elements); got != want {
				t.Fatalf("%d elements, want %d", got, want)
			}
			if d.Len() != len(sys.Entries) {
				t.Errorf("diagram has %d entries, golden %d (a reference was added)", d.Len(), len(sys.Entries))
			}

			byID := map[string]string{}
			for _, e := range sys.Entries {
				byID[e.ID] = e.Formula
			}
			var want, got []string
			for _, id := range sys.Stable {
				want = append(want, reducedKey(t, byID[id]))
			}
			for _, e := range d.Stable() {
				got = append(got, e.Composition.ReducedFormula())
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("stable compositions\n got %v\nwant %v", got, want)
			}

			results, err := d.Results()
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for _, r := range results {
				ref, ok := sys.Results[r.ID]
				if !ok {
					t.Errorf("%s: no golden result", r.ID)
					continue
				}
				diff := math.Abs(r.EAboveHull - ref.EAboveHull)
				worst = math.Max(worst, diff)
				if diff > goldenTol {
					t.Errorf("%s (%s): e_above_hull %.9f, pymatgen %.9f", r.ID, r.Composition, r.EAboveHull, ref.EAboveHull)
				}
				hullRef := r.EnergyPerAtom - ref.EAboveHull
				if math.Abs(r.HullEnergy-hullRef) > goldenTol && r.EAboveHull > 0 {
					t.Errorf("%s: hull energy %.9f, pymatgen %.9f", r.ID, r.HullEnergy, hullRef)
				}
				if w, o := goldenDecomposition(t, ref.Decomposition), ourDecomposition(r.Decomposition); !sameDecomposition(w, o) {
					t.Errorf("%s (%s): decomposition %v, pymatgen %v", r.ID, r.Composition, o, w)
				}
				if e, err := d.EAboveHull(r.ID); err != nil || e != r.EAboveHull {
					t.Errorf("%s: EAboveHull %v, %v; Results %v", r.ID, e, err, r.EAboveHull)
				}
			}

			for i, q := range sys.Queries {
				c, err := crystal.ParseFormula(q.Formula)
				if err != nil {
					t.Fatal(err)
				}
				r, err := d.Query(c, q.EForm)
				if err != nil {
					t.Fatalf("query %d %s: %v", i, q.Formula, err)
				}
				for _, pair := range [][2]float64{{r.EAboveHull, q.EAboveHull}, {r.HullEnergy, q.HullEnergy}} {
					diff := math.Abs(pair[0] - pair[1])
					worst = math.Max(worst, diff)
					if diff > goldenTol {
						t.Errorf("query %d %s: %.9f, pymatgen %.9f", i, q.Formula, pair[0], pair[1])
					}
				}
				if w, o := goldenDecomposition(t, q.Decomposition), ourDecomposition(r.Decomposition); !sameDecomposition(w, o) {
					t.Errorf("query %d %s: decomposition %v, pymatgen %v", i, q.Formula, o, w)
				}
			}
			t.Logf("%d entries, %d queries, %d stable; largest difference from pymatgen %.1e eV/atom",
				len(sys.Entries), len(sys.Queries), len(sys.Stable), worst)
		})
	}
}
