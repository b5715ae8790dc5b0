package hull

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func entry(id, formula string, e float64) Entry {
	return Entry{ID: id, Composition: crystal.MustParseFormula(formula), EnergyPerAtom: e}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

// decompString writes a decomposition as "Li2O:0.75 O2:0.25" (reduced
// formulas, fractions to six decimals, by decreasing fraction).
func decompString(ph []Phase) string {
	parts := make([]string, len(ph))
	for i, p := range ph {
		parts[i] = p.Composition.ReducedFormula() + ":" + strconv.FormatFloat(math.Round(p.Fraction*1e6)/1e6, 'f', -1, 64)
	}
	return strings.Join(parts, " ")
}

// liO is a Li–O diagram whose hull can be worked out by hand. Atomic
// fraction of O: Li 0, Li2O 1/3, Li2O2 1/2, LiO2 2/3, O 1.
//
//	Li2O   −2.0  vertex
//	Li2O2  −1.7  vertex: the Li2O–O tie line is at −2·(1/2)/(2/3) = −1.5 there
//	LiO2   −1.0  above the Li2O2–O tie line, −1.7·(1/3)/(1/2) = −1.1333…
//	Li2O   −1.9  a polymorph, 0.1 above
//	Li3O   +0.3  positive: above Li–Li2O, which is at −2·(1/4)/(1/3) = −1.5
func liO() []Entry {
	return []Entry{
		entry("li2o", "Li2O", -2.0),
		entry("li2o2", "Li2O2", -1.7),
		entry("lio2", "LiO2", -1.0),
		entry("li2o-b", "Li4O2", -1.9),
		entry("li3o", "Li3O", 0.3),
	}
}

func TestEntries(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		opts    []Option
		want    map[string]float64 // id → e_above_hull
		decomp  map[string]string  // id → decomposition
		stable  string             // ids, in entry order
	}{
		{
			name:    "Li-O by hand",
			entries: liO(),
			want: map[string]float64{
				"li2o": 0, "li2o2": 0, "lio2": 1.7/1.5 - 1.0, "li2o-b": 0.1, "li3o": 1.8,
				"ref-Li": 0, "ref-O": 0,
			},
			decomp: map[string]string{
				"lio2": "Li2O2:0.666667 O2:0.333333", "li2o-b": "Li2O:1", "li3o": "Li2O:0.75 Li:0.25",
				"li2o": "Li2O:1",
			},
			stable: "li2o li2o2 ref-Li ref-O",
		},
		{
			name: "an entry on a facet is on the hull but not stable",
			entries: []Entry{
				entry("li2o", "Li2O", -2.0),
				entry("li2o2", "Li2O2", -1.5), // exactly on the Li2O–O tie line
			},
			want:   map[string]float64{"li2o": 0, "li2o2": 0},
			decomp: map[string]string{"li2o2": "Li2O:0.75 O2:0.25"},
			stable: "li2o ref-Li ref-O",
		},
		{
			name: "equal polymorphs: the first given is stable",
			entries: []Entry{
				entry("b", "Fe2O3", -1.0),
				entry("a", "Fe4O6", -1.0),
				entry("c", "FeO", 0.5),
			},
			// FeO (x_O = 1/2) = 5/6 Fe2O3 (x_O = 3/5) + 1/6 Fe: hull −5/6.
			want:   map[string]float64{"a": 0, "b": 0, "c": 0.5 + 5.0/6},
			decomp: map[string]string{"a": "Fe2O3:1", "c": "Fe2O3:0.833333 Fe:0.166667"},
			stable: "b ref-O ref-Fe", // references follow the entries, by atomic number
		},
		{
			name: "elemental entries: the lowest at or below zero is the reference",
			entries: []Entry{
				entry("fe-bcc", "Fe", 0),
				entry("fe-fcc", "Fe4", 0.05),
				entry("o-high", "O2", 0.4),
			},
			want:   map[string]float64{"fe-bcc": 0, "fe-fcc": 0.05, "o-high": 0.4, "ref-O": 0},
			stable: "fe-bcc ref-O",
		},
		{
			name:    "an element with no compound",
			entries: []Entry{entry("lio", "Li2O", -2.0)},
			opts:    []Option{WithElements(crystal.MustElement("O"), crystal.MustElement("Li"), crystal.MustElement("Fe"))},
			want:    map[string]float64{"lio": 0, "ref-Fe": 0},
			stable:  "lio ref-Li ref-O ref-Fe",
		},
		{
			name: "ternary by hand",
			// LiFeO2 at −1.6 against Li2O (−2.0) + Fe2O3 (−1.7): LiFeO2 =
			// ½ Li2O + ½ Fe2O3 by formula units, 3/8 and 5/8 of the atoms,
			// hull −0.75 − 1.0625 = −1.8125.
			entries: []Entry{
				entry("li2o", "Li2O", -2.0),
				entry("fe2o3", "Fe2O3", -1.7),
				entry("lifeo2", "LiFeO2", -1.6),
			},
			want:   map[string]float64{"lifeo2": 1.8125 - 1.6},
			decomp: map[string]string{"lifeo2": "Fe2O3:0.625 Li2O:0.375"},
			stable: "li2o fe2o3 ref-Li ref-O ref-Fe",
		},
		{
			name:    "one element",
			entries: []Entry{entry("a", "Fe", 0.1), entry("b", "Fe2", -0.2), entry("c", "Fe", -0.1)},
			want:    map[string]float64{"a": 0.3, "b": 0, "c": 0.1},
			stable:  "b",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(tt.entries, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			for id, want := range tt.want {
				got, err := d.EAboveHull(id)
				if err != nil {
					t.Fatal(err)
				}
				if !near(got, want) {
					t.Errorf("%s: e_above_hull %.15g, want %.15g", id, got, want)
				}
			}
			for id, want := range tt.decomp {
				r, err := d.Result(id)
				if err != nil {
					t.Fatal(err)
				}
				if got := decompString(r.Decomposition); got != want {
					t.Errorf("%s: decomposition %q, want %q", id, got, want)
				}
			}
			var ids []string
			for _, e := range d.Stable() {
				ids = append(ids, e.ID)
			}
			if got := strings.Join(ids, " "); got != tt.stable {
				t.Errorf("stable %q, want %q", got, tt.stable)
			}
		})
	}
}

func TestQuery(t *testing.T) {
	d, err := New(liO(), WithElements(crystal.MustElement("Li"), crystal.MustElement("O"), crystal.MustElement("Fe")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		formula    string
		energy     float64
		hull, eah  float64
		decomp     string
		errIs      error
		errContent string
	}{
		{formula: "Li2O", energy: -2.1, hull: -2.0, eah: -0.1, decomp: "Li2O:1"},
		{formula: "Li6O3", energy: -1.5, hull: -2.0, eah: 0.5, decomp: "Li2O:1"},
		// x_O = 0.4 between Li2O (1/3) and Li2O2 (1/2): 0.6 and 0.4 of the atoms.
		{formula: "Li3O2", energy: -1.9, hull: -0.6*2.0 - 0.4*1.7, eah: -1.9 + 0.6*2.0 + 0.4*1.7, decomp: "Li2O:0.6 Li2O2:0.4"},
		{formula: "O3", energy: 0.2, hull: 0, eah: 0.2, decomp: "O2:1"},
		{formula: "Fe3O4", energy: -0.5, hull: 0, eah: -0.5, decomp: "O2:0.571429 Fe:0.428571"},
		{formula: "Li", energy: 0, hull: 0, eah: 0, decomp: "Li:1"},
		{formula: "NaCl", energy: -1, errIs: ErrOutsideSystem, errContent: "Na"},
		{formula: "Li2O", energy: math.NaN(), errIs: ErrInvalidEntry},
	}
	for _, tt := range tests {
		t.Run(tt.formula, func(t *testing.T) {
			r, err := d.Query(crystal.MustParseFormula(tt.formula), tt.energy)
			if tt.errIs != nil {
				if !errors.Is(err, tt.errIs) || !strings.Contains(err.Error(), tt.errContent) {
					t.Fatalf("error %v, want %v mentioning %q", err, tt.errIs, tt.errContent)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !near(r.HullEnergy, tt.hull) || !near(r.EAboveHull, tt.eah) {
				t.Errorf("hull %.15g, e_above_hull %.15g; want %.15g, %.15g", r.HullEnergy, r.EAboveHull, tt.hull, tt.eah)
			}
			if got := decompString(r.Decomposition); got != tt.decomp {
				t.Errorf("decomposition %q, want %q", got, tt.decomp)
			}
		})
	}
	if _, err := d.Query(crystal.Composition{}, 0); !errors.Is(err, ErrInvalidEntry) {
		t.Errorf("empty composition: %v", err)
	}
}

func TestErrors(t *testing.T) {
	li := crystal.MustElement("Li")
	tests := []struct {
		name    string
		entries []Entry
		opts    []Option
		want    error
	}{
		{"no entries", nil, nil, ErrInvalidEntry},
		{"empty id", []Entry{entry("", "Li", 0)}, nil, ErrInvalidEntry},
		{"no elements", []Entry{{ID: "x"}}, nil, ErrInvalidEntry},
		{"NaN", []Entry{entry("x", "Li", math.NaN())}, nil, ErrInvalidEntry},
		{"infinite", []Entry{entry("x", "Li", math.Inf(-1))}, nil, ErrInvalidEntry},
		{"implausible energy", []Entry{entry("x", "Li2O", -2e6)}, nil, ErrInvalidEntry},
		{"conflicting ids", []Entry{entry("x", "Li2O", -1), entry("x", "Li2O", -2)}, nil, ErrDuplicateID},
		{"outside the given elements", []Entry{entry("x", "Li2O", -1)}, []Option{WithElements(li)}, ErrOutsideSystem},
		{"reference id taken", []Entry{entry("ref-O", "Li2O", -1)}, nil, ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.entries, tt.opts...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}

	d, err := New(append(liO(), liO()[0])) // an exact repeat counts once
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != len(liO())+2 {
		t.Errorf("%d entries, want %d", d.Len(), len(liO())+2)
	}
	if _, err := d.EAboveHull("nope"); !errors.Is(err, ErrUnknownID) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := d.IsStable("nope"); !errors.Is(err, ErrUnknownID) {
		t.Errorf("unknown id: %v", err)
	}
	if err := d.Add(entry("fe", "FeO", -1)); !errors.Is(err, ErrOutsideSystem) {
		t.Errorf("add outside the system: %v", err)
	}
	if err := d.Add(entry("li2o", "Li2O", -2.5)); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("add a used id: %v", err)
	}
	if err := d.Add(liO()[1]); err != nil {
		t.Errorf("add an exact repeat: %v", err)
	}
}

// TestDegenerateFacet: in Li–Fe–Mn–O the six equiatomic binaries at −1
// eV/atom make the hull flat over the octahedron they span, so the centre
// LiFeMnO has many optimal decompositions (LiO + FeMn, LiFe + MnO, …). The
// hull energy is unique; the decomposition is a valid one, the same every
// time.
func TestDegenerateFacet(t *testing.T) {
	entries := []Entry{
		entry("lio", "LiO", -1), entry("femn", "FeMn", -1),
		entry("life", "LiFe", -1), entry("mno", "MnO", -1),
		entry("limn", "LiMn", -1), entry("feo", "FeO", -1),
	}
	c := crystal.MustParseFormula("LiFeMnO")
	var first string
	for i := 0; i < 5; i++ {
		d, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		r, err := d.Query(c, -0.9)
		if err != nil {
			t.Fatal(err)
		}
		if !near(r.HullEnergy, -1) || !near(r.EAboveHull, 0.1) {
			t.Fatalf("hull %v, e_above_hull %v; want −1, 0.1", r.HullEnergy, r.EAboveHull)
		}
		checkDecomposition(t, d, c, r)
		got := decompString(r.Decomposition)
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("decomposition %q, then %q", first, got)
		}
	}
}

func TestFormationEnergies(t *testing.T) {
	// Total energies per atom: Li −1.9, O −4.9 (as O2), Li2O −4.9.
	totals := []Entry{
		entry("li", "Li", -1.9), entry("li-b", "Li", -1.8), entry("o2", "O2", -4.9),
		entry("li2o", "Li2O", -4.9),
	}
	got, err := FormationEnergies(totals, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0, 0.1, 0, -4.9 - (2*-1.9+-4.9)/3}
	for i := range want {
		if !near(got[i].EnergyPerAtom, want[i]) {
			t.Errorf("%s: %v, want %v", got[i].ID, got[i].EnergyPerAtom, want[i])
		}
	}
	// A given reference wins over the entries.
	got, err = FormationEnergies(totals[3:], map[crystal.Element]float64{
		crystal.MustElement("Li"): -2, crystal.MustElement("O"): -5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if w := -4.9 - (2*-2.0+-5.0)/3; !near(got[0].EnergyPerAtom, w) {
		t.Errorf("Li2O: %v, want %v", got[0].EnergyPerAtom, w)
	}
	if _, err := FormationEnergies(totals[3:], nil); !errors.Is(err, ErrMissingReference) {
		t.Errorf("no references: %v", err)
	}
}
