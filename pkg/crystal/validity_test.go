package crystal

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

func validityStructure(t testing.TB, a float64, species []string, frac []Vec3) *Structure {
	t.Helper()
	l, err := LatticeFromParameters(a, a, a, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	els := make([]Element, len(species))
	for i, s := range species {
		els[i] = MustElement(s)
	}
	s, err := NewStructure(l, els, frac)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func builtStructure(t testing.TB, prototype, formula string) *Structure {
	t.Helper()
	p, err := PrototypeByName(prototype)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(p, MustParseFormula(formula))
	if err != nil {
		t.Fatal(err)
	}
	return b.Structure
}

func au4si3(t testing.TB) *Structure {
	return validityStructure(t, 6, []string{"Au", "Au", "Au", "Au", "Si", "Si", "Si"},
		[]Vec3{{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}, {0.25, 0.25, 0.25}, {0.75, 0.75, 0.25}, {0.75, 0.25, 0.75}})
}

func TestValidate(t *testing.T) {
	nacl := builtStructure(t, "rocksalt", "NaCl")
	big, err := nacl.Supercell(6, 6, 6)
	if err != nil {
		t.Fatal(err)
	}
	exploded, err := nacl.ScaledToVolume(nacl.Volume() * 10)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		s         *Structure
		opt       ValidityOptions
		codes     []ReasonCode
		minDist   float64 // expected minimum distance, 0 to skip
		numChecks int
	}{
		{name: "NaCl rock salt", s: nacl, opt: ValidityOptions{ExpectedFormula: "NaCl"}, minDist: 2.83, numChecks: 5},
		{name: "stated cell formula", s: nacl, opt: ValidityOptions{ExpectedFormula: "Na4Cl4"}, numChecks: 5},
		{name: "stated wrong formula", s: nacl, opt: ValidityOptions{ExpectedFormula: "NaCl2"},
			codes: []ReasonCode{ReasonFormulaMismatch}, numChecks: 5},
		{name: "unparsable formula", s: nacl, opt: ValidityOptions{ExpectedFormula: "NaCl)"},
			codes: []ReasonCode{ReasonFormulaMismatch}, numChecks: 5},
		{name: "two atoms 0.3 Å apart",
			s:     validityStructure(t, 5, []string{"Na", "Cl"}, []Vec3{{0, 0, 0}, {0.06, 0, 0}}),
			codes: []ReasonCode{ReasonOverlap}, minDist: 0.3, numChecks: 4},
		{name: "overlap across the cell boundary",
			s:     validityStructure(t, 5, []string{"Na", "Cl"}, []Vec3{{0.01, 0.5, 0.5}, {0.97, 0.5, 0.5}}),
			codes: []ReasonCode{ReasonOverlap}, minDist: 0.2, numChecks: 4},
		// One atom in a 0.4 Å cube: 0.4 Å from its own images, and far
		// too dense. Every failure is reported, not just the first.
		{name: "one atom against its image",
			s:     validityStructure(t, 0.4, []string{"Fe"}, []Vec3{{0, 0, 0}}),
			codes: []ReasonCode{ReasonOverlap, ReasonVolumePerAtom}, minDist: 0.4, numChecks: 4},
		{name: "one atom bcc-like cell", s: validityStructure(t, 2.87, []string{"Fe"}, []Vec3{{0, 0, 0}}),
			minDist: 2.87, numChecks: 4},
		{name: "432 atoms", s: big, codes: []ReasonCode{ReasonTooManyAtoms}, numChecks: 4},
		{name: "432 atoms, limit off", s: big, opt: ValidityOptions{MaxAtoms: -1}, numChecks: 4},
		{name: "432 atoms, limit 500", s: big, opt: ValidityOptions{MaxAtoms: 500}, numChecks: 4},
		{name: "exploded cell", s: exploded, codes: []ReasonCode{ReasonVolumePerAtom}, numChecks: 4},
		{name: "exploded cell, bound off", s: exploded, opt: ValidityOptions{MaxVolumePerAtom: -1}, numChecks: 4},
		{name: "overlap allowed", s: validityStructure(t, 5, []string{"Na", "Cl"}, []Vec3{{0, 0, 0}, {0.06, 0, 0}}),
			opt: ValidityOptions{MinDistance: 0.2}, numChecks: 4},
		{name: "NaCl2 not neutral", s: validityStructure(t, 5, []string{"Na", "Cl", "Cl"}, []Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0, 0}}),
			codes: []ReasonCode{ReasonChargeNeutrality}, numChecks: 4},
		{name: "NaCl2 neutrality off", s: validityStructure(t, 5, []string{"Na", "Cl", "Cl"}, []Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0, 0}}),
			opt: ValidityOptions{SkipChargeNeutrality: true}, numChecks: 3},
		// A gold silicide is metal-rich, not ionic; the ionic test alone
		// balances it only as Au³⁺Si⁴⁻, against the Pauling test.
		{name: "Au4Si3 metal-rich", s: au4si3(t), numChecks: 4},
		{name: "Au4Si3 ionic only", s: au4si3(t), opt: ValidityOptions{IonicOnly: true},
			codes: []ReasonCode{ReasonElectronegativity}, numChecks: 4},
		{name: "Fe3O4", s: builtFe3O4(t), numChecks: 4},
		{name: "Fe3O4 ionic only, one state per element", s: builtFe3O4(t), opt: ValidityOptions{IonicOnly: true},
			codes: []ReasonCode{ReasonChargeNeutrality}, numChecks: 4},
		{name: "Fe3O4 ionic only, mixed valence", s: builtFe3O4(t), opt: ValidityOptions{IonicOnly: true, Oxidation: OxidationOptions{MixedValence: true}}, numChecks: 4},
		{name: "NaH2 electron count", s: validityStructure(t, 5, []string{"Na", "H", "H"}, []Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0, 0}}),
			codes: []ReasonCode{ReasonElectronCount}, numChecks: 4},
		{name: "everything wrong at once",
			s:     validityStructure(t, 0.5, []string{"Na", "Cl", "Cl"}, []Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}, {0.5, 0, 0}}),
			opt:   ValidityOptions{ExpectedFormula: "KBr", MaxAtoms: 2},
			codes: []ReasonCode{ReasonOverlap, ReasonTooManyAtoms, ReasonVolumePerAtom, ReasonFormulaMismatch, ReasonChargeNeutrality}, numChecks: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Validate(tc.s, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Checks) != tc.numChecks {
				t.Errorf("%d checks, want %d", len(r.Checks), tc.numChecks)
			}
			if got := r.Codes(); !slices.Equal(got, tc.codes) {
				t.Errorf("codes %v, want %v; reasons %q", got, tc.codes, r.Reasons())
			}
			if r.Valid() != (len(tc.codes) == 0) {
				t.Errorf("Valid() = %v with codes %v", r.Valid(), tc.codes)
			}
			if len(r.Reasons()) != len(tc.codes) {
				t.Errorf("%d reasons for %d codes", len(r.Reasons()), len(tc.codes))
			}
			for i, reason := range r.Reasons() {
				if !strings.HasPrefix(reason, string(tc.codes[i])+": ") || len(reason) < len(tc.codes[i])+10 {
					t.Errorf("reason %q does not start with its code and explain", reason)
				}
			}
			err = r.Err()
			if (err == nil) != r.Valid() {
				t.Errorf("Err() = %v for Valid() = %v", err, r.Valid())
			}
			for _, code := range tc.codes {
				if !errors.Is(err, reasonSentinels[code]) {
					t.Errorf("Err() = %v is not %v", err, reasonSentinels[code])
				}
				var ve *ValidityError
				if !errors.As(err, &ve) {
					t.Errorf("Err() holds no *ValidityError")
				}
			}
			if tc.minDist > 0 && math.Abs(r.MinDistance-tc.minDist) > 1e-9*tc.minDist+1e-9 {
				t.Errorf("min distance %v, want %v", r.MinDistance, tc.minDist)
			}
			for _, c := range r.Checks {
				if c.Passed == (c.Code != "") {
					t.Errorf("check %s: passed %v with code %q", c.Name, c.Passed, c.Code)
				}
				if c.Detail == "" {
					t.Errorf("check %s has no detail", c.Name)
				}
			}
		})
	}
}

// builtFe3O4 is magnetite's composition in the spinel cell: MgAl2O4 with
// Mg and Al replaced by Fe.
func builtFe3O4(t testing.TB) *Structure {
	t.Helper()
	s := builtStructure(t, "spinel", "MgAl2O4")
	s, err := Substitute(s, MustElement("Mg"), MustElement("Fe"))
	if err != nil {
		t.Fatal(err)
	}
	s, err = Substitute(s, MustElement("Al"), MustElement("Fe"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidateReportFacts(t *testing.T) {
	s := builtStructure(t, "perovskite", "SrTiO3")
	r, err := Validate(s, ValidityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Formula != "SrTiO3" || r.ReducedFormula != "SrTiO3" || r.ChemicalSystem != "O-Sr-Ti" || r.NumAtoms != 5 {
		t.Errorf("facts %q %q %q %d", r.Formula, r.ReducedFormula, r.ChemicalSystem, r.NumAtoms)
	}
	if r.Volume != s.Volume() || r.Density != s.Density() || r.VolumePerAtom != s.VolumePerAtom() {
		t.Errorf("volume %v density %v", r.Volume, r.Density)
	}
	ox := r.OxidationStates()
	if ox["Sr"] != 2 || ox["Ti"] != 4 || ox["O"] != -2 || r.Class() != ClassIonic {
		t.Errorf("oxidation states %v", ox)
	}
	// Ti–O is a/2 = 2.005 Å, the shortest distance.
	if math.Abs(r.MinDistance-s.Lattice.Vector(0).Norm()/2) > 1e-9 {
		t.Errorf("min distance %v", r.MinDistance)
	}
	if a, b := s.Species[r.MinDistancePair[0]], s.Species[r.MinDistancePair[1]]; !(a.Symbol()+b.Symbol() == "TiO" || a.Symbol()+b.Symbol() == "OTi") {
		t.Errorf("closest pair %s–%s", a, b)
	}
	if r.MinDistanceElements != [2]Element{s.Species[r.MinDistancePair[0]], s.Species[r.MinDistancePair[1]]} {
		t.Errorf("closest elements %v for sites %v", r.MinDistanceElements, r.MinDistancePair)
	}
	skipped, _ := Validate(s, ValidityOptions{SkipChargeNeutrality: true})
	if skipped.Oxidation != nil || skipped.Chemistry != nil || skipped.OxidationStates() != nil || skipped.Class() != "" {
		t.Error("oxidation analysis present although skipped")
	}
}

func TestValidateBadInput(t *testing.T) {
	if _, err := Validate(nil, ValidityOptions{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("nil: %v", err)
	}
	if _, err := Validate(&Structure{}, ValidityOptions{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("empty: %v", err)
	}
	s := builtStructure(t, "rocksalt", "NaCl")
	s.Frac = s.Frac[:1]
	if _, err := Validate(s, ValidityOptions{}); !errors.Is(err, ErrBadStructure) {
		t.Errorf("mismatched lists: %v", err)
	}
}

// A cell too sheared for the neighbour search is reported, not a crash.
func TestValidateDegenerateCell(t *testing.T) {
	l, err := NewLattice([3][3]float64{{1000, 0, 0}, {0, 1000, 0}, {0, 0, 1e-3}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStructure(l, []Element{MustElement("Fe")}, []Vec3{{0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Validate(s, ValidityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Valid() || !slices.Contains(r.Codes(), ReasonBadCell) {
		t.Errorf("codes %v", r.Codes())
	}
	if !math.IsNaN(r.MinDistance) {
		t.Errorf("min distance %v", r.MinDistance)
	}
}

// validityBruteMinDistance loops over enough images to be obviously right.
func validityBruteMinDistance(s *Structure) float64 {
	best := math.Inf(1)
	for i := range s.Species {
		for j := range s.Species {
			for x := -3; x <= 3; x++ {
				for y := -3; y <= 3; y++ {
					for z := -3; z <= 3; z++ {
						if i == j && x == 0 && y == 0 && z == 0 {
							continue
						}
						d := s.Lattice.Cartesian(s.Frac[j].Add(Vec3{float64(x), float64(y), float64(z)}).Sub(s.Frac[i])).Norm()
						best = math.Min(best, d)
					}
				}
			}
		}
	}
	return best
}

func TestMinimumDistanceMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 100; trial++ {
		n := 1 + rng.IntN(12)
		a, b, c := 3+rng.Float64()*6, 3+rng.Float64()*6, 3+rng.Float64()*6
		l, err := LatticeFromParameters(a, b, c, 60+rng.Float64()*60, 60+rng.Float64()*60, 60+rng.Float64()*60)
		if err != nil {
			continue // an impossible angle triple
		}
		species := make([]Element, n)
		frac := make([]Vec3, n)
		for i := range species {
			species[i] = MustElement("Si")
			frac[i] = Vec3{rng.Float64(), rng.Float64(), rng.Float64()}
		}
		s, err := NewStructure(l, species, frac)
		if err != nil {
			t.Fatal(err)
		}
		got, pair, err := MinimumDistance(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := validityBruteMinDistance(s); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: %v, brute force %v", trial, got, want)
		}
		if pair[0] < 0 || pair[0] >= n || pair[1] < 0 || pair[1] >= n {
			t.Fatalf("pair %v", pair)
		}
	}
}

// Against the reference data: the minimum distance equals the shortest
// pymatgen neighbour distance of the golden CGCNN structures, and the
// report's facts match pymatgen's.
func TestValidateGoldenStructures(t *testing.T) {
	dir := testbed.DataPath(t, "golden", "cgcnn")
	raw, err := os.ReadFile(filepath.Join(dir, "predictions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Structures map[string]struct {
			Formula   string      `json:"formula"`
			NumAtoms  int         `json:"natoms"`
			Density   float64     `json:"density_g_cm3"`
			Volume    float64     `json:"volume_A3"`
			Neighbors [][]float64 `json:"neighbor_distances"`
		} `json:"structures"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	if len(golden.Structures) == 0 {
		t.Fatal("no golden structures")
	}
	for name, g := range golden.Structures {
		s, err := ReadFile(filepath.Join(dir, "cifs", name+".cif"))
		if err != nil {
			s, err = ReadFile(filepath.Join(dir, "cifs", name))
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		r, err := Validate(s, ValidityOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := math.Inf(1)
		for _, nb := range g.Neighbors {
			if len(nb) > 0 {
				want = math.Min(want, nb[0])
			}
		}
		if math.Abs(r.MinDistance-want) > 1e-6 {
			t.Errorf("%s: min distance %v, pymatgen %v", name, r.MinDistance, want)
		}
		if r.NumAtoms != g.NumAtoms || math.Abs(r.Volume-g.Volume) > 1e-6*g.Volume || math.Abs(r.Density-g.Density) > 1e-6*g.Density {
			t.Errorf("%s: %d atoms, %v Å³, %v g/cm³; pymatgen %d, %v, %v", name, r.NumAtoms, r.Volume, r.Density, g.NumAtoms, g.Volume, g.Density)
		}
		// Experimental and Materials Project structures are geometrically
		// sane (some hand-made proto-* ones are not: the spinel-like Mg2AlO4
		// has O atoms 0.28 Å apart).
		if strings.HasPrefix(name, "proto-") {
			continue
		}
		for _, c := range r.Failed() {
			if c.Code == ReasonOverlap || c.Code == ReasonVolumePerAtom || c.Code == ReasonBadCell {
				t.Errorf("%s: %s", name, c.Detail)
			}
		}
	}
}

// BenchmarkValidate100Atoms: every check on a 100-atom cell (a 5×2×2
// supercell of the cubic perovskite SrTiO3).
func BenchmarkValidate100Atoms(b *testing.B) {
	s := builtStructure(b, "perovskite", "SrTiO3")
	s, err := s.Supercell(5, 2, 2)
	if err != nil {
		b.Fatal(err)
	}
	if s.NumSites() != 100 {
		b.Fatalf("%d sites", s.NumSites())
	}
	for b.Loop() {
		r, err := Validate(s, ValidityOptions{})
		if err != nil || !r.Valid() {
			b.Fatal(err, r.Reasons())
		}
	}
}

// Random cells, some degenerate, some with atoms on top of each other and
// elements without oxidation states: every entry point answers, none
// panics.
func TestChemistryOnRandomStructures(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 42))
	for trial := 0; trial < 150; trial++ {
		n := 1 + rng.IntN(8)
		a := 0.3 + rng.Float64()*8
		l, err := LatticeFromParameters(a, a*(0.2+rng.Float64()*2), a*(0.2+rng.Float64()*2), 30+rng.Float64()*120, 30+rng.Float64()*120, 30+rng.Float64()*120)
		if err != nil {
			continue
		}
		species := make([]Element, n)
		frac := make([]Vec3, n)
		for i := range species {
			species[i] = Element(1 + rng.IntN(MaxZ))
			frac[i] = Vec3{rng.Float64() * 3, rng.Float64() - 2, rng.Float64()}
			if i > 0 && rng.IntN(6) == 0 {
				frac[i] = frac[i-1] // a duplicated site
			}
		}
		s, err := NewStructure(l, species, frac)
		if err != nil {
			continue
		}
		opt := ValidityOptions{}
		if trial%2 == 1 {
			opt = ValidityOptions{IonicOnly: true, Oxidation: OxidationOptions{States: AllStates, MixedValence: true}}
		}
		r, err := Validate(s, opt)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		if r.Valid() != (r.Err() == nil) {
			t.Fatalf("trial %d: Valid %v, Err %v", trial, r.Valid(), r.Err())
		}
		if _, err := Fingerprint(s); err != nil && !errors.Is(err, ErrBadCell) {
			t.Errorf("trial %d: fingerprint: %v", trial, err)
		}
		_, _ = BuildAll(s.Composition())
		if _, err := SubstituteSites(s, []int{0}, MustElement("O")); err != nil {
			t.Errorf("trial %d: substitute: %v", trial, err)
		}
	}
}
