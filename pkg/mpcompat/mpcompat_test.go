package mpcompat

import (
	"math"
	"os"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

var (
	compatOnce sync.Once
	compat     *Compat
	compatErr  error
)

func testCompat(t *testing.T) *Compat {
	t.Helper()
	dir := os.Getenv("CRUCIBLE_DATA")
	if dir == "" {
		t.Skip("CRUCIBLE_DATA not set")
	}
	compatOnce.Do(func() { compat, compatErr = Load(dir) })
	if compatErr != nil {
		t.Fatal(compatErr)
	}
	return compat
}

// cubic builds a structure in a cubic cell of side a from symbols and
// fractional coordinates.
func cubic(t *testing.T, a float64, sites ...any) *crystal.Structure {
	t.Helper()
	l, err := crystal.NewLattice([3][3]float64{{a, 0, 0}, {0, a, 0}, {0, 0, a}})
	if err != nil {
		t.Fatal(err)
	}
	var sp []crystal.Element
	var fr []crystal.Vec3
	for i := 0; i < len(sites); i += 2 {
		sp = append(sp, crystal.MustElement(sites[i].(string)))
		fr = append(fr, sites[i+1].(crystal.Vec3))
	}
	s, err := crystal.NewStructure(l, sp, fr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCorrections(t *testing.T) {
	c := testCompat(t)
	rocksalt := func(a, b string, lat float64) *crystal.Structure {
		return cubic(t, lat, a, crystal.Vec3{0, 0, 0}, a, crystal.Vec3{0, 0.5, 0.5}, a, crystal.Vec3{0.5, 0, 0.5}, a, crystal.Vec3{0.5, 0.5, 0},
			b, crystal.Vec3{0.5, 0, 0}, b, crystal.Vec3{0, 0.5, 0}, b, crystal.Vec3{0, 0, 0.5}, b, crystal.Vec3{0.5, 0.5, 0.5})
	}
	cases := []struct {
		name           string
		st             *crystal.Structure
		mp2020, legacy float64 // total correction, eV per cell
		oxide, sulfide string
	}{
		// FeO (rock salt, GGA+U): oxide and Fe corrections.
		{"FeO", rocksalt("Fe", "O", 4.3), 4 * (-0.687 - 2.256), 4 * (-0.70229 - 2.733), "oxide", ""},
		// MgO: oxide only.
		{"MgO", rocksalt("Mg", "O", 4.2), 4 * -0.687, 4 * -0.70229, "oxide", ""},
		// NaCl: Cl⁻ in MP2020; nothing in the legacy scheme.
		{"NaCl", rocksalt("Na", "Cl", 5.6), 4 * -0.614, 0, "None", ""},
		// NiF2-like rock salt NiF (F most electronegative: GGA+U).
		{"NiF", rocksalt("Ni", "F", 4.0), 4 * (-0.462 - 2.541), 4 * -2.164, "None", ""},
		// ZnS (rock salt here): sulfide.
		{"ZnS", rocksalt("Zn", "S", 5.1), 4 * -0.503, 4 * -0.66346, "None", "sulfide"},
		// Li2O2-like: an O–O pair at 1.5 Å is a peroxide.
		{"Li2O2", cubic(t, 6, "Li", crystal.Vec3{0, 0, 0}, "Li", crystal.Vec3{0.5, 0.5, 0.5}, "O", crystal.Vec3{0.25, 0.25, 0.25}, "O", crystal.Vec3{0.25, 0.25, 0.5}),
			2 * -0.465, 2 * -0.46622, "peroxide", ""},
		// An S–S pair at 2.1 Å, Fe farther: a polysulfide (MP2020 corrects
		// it as a sulfide, the legacy scheme not at all).
		{"FeS2", cubic(t, 6, "Fe", crystal.Vec3{0, 0, 0}, "S", crystal.Vec3{0.4, 0.4, 0.4}, "S", crystal.Vec3{0.4, 0.4, 0.75}),
			2 * -0.503, 0, "None", "polysulfide"},
		// NaOH-like: an O–H pair at 0.97 Å is a hydroxide, corrected as an
		// oxide by both schemes; H⁺ is not an anion.
		{"NaOH", cubic(t, 5, "Na", crystal.Vec3{0, 0, 0}, "O", crystal.Vec3{0.5, 0.5, 0.5}, "H", crystal.Vec3{0.5, 0.5, 0.694}),
			-0.687, -0.70229, "hydroxide", ""},
		// Elements are not corrected.
		{"Fe", cubic(t, 2.87, "Fe", crystal.Vec3{0, 0, 0}, "Fe", crystal.Vec3{0.5, 0.5, 0.5}), 0, 0, "None", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := OxideType(tc.st, 1.05); got != tc.oxide {
				t.Errorf("oxide type %q, want %q", got, tc.oxide)
			}
			if got := SulfideType(tc.st); got != tc.sulfide {
				t.Errorf("sulfide type %q, want %q", got, tc.sulfide)
			}
			for _, s := range []Scheme{MP2020, Legacy} {
				adj, err := c.Corrections(s, tc.st)
				if err != nil {
					t.Fatal(err)
				}
				sum := 0.0
				for _, a := range adj {
					sum += a.Energy()
				}
				want := tc.mp2020
				if s == Legacy {
					want = tc.legacy
				}
				if math.Abs(sum-want) > 1e-9 {
					t.Errorf("%v: corrections %v sum to %.5f eV, want %.5f", s, adj, sum, want)
				}
			}
		})
	}
}

func TestFormationEnergyOfReferences(t *testing.T) {
	c := testCompat(t)
	// An element at its reference energy has zero formation energy; a
	// binary at the sum of its references has its corrections per atom.
	fe := cubic(t, 2.87, "Fe", crystal.Vec3{0, 0, 0}, "Fe", crystal.Vec3{0.5, 0.5, 0.5})
	mu, ok := c.Reference(MP2020, crystal.MustElement("Fe"))
	if !ok {
		t.Fatal("no Fe reference")
	}
	ef, _, err := c.FormationEnergyPerAtom(MP2020, fe, 2*mu)
	if err != nil || math.Abs(ef) > 1e-12 {
		t.Errorf("Fe at its reference: %v eV/atom, %v", ef, err)
	}
	nacl := cubic(t, 5.6, "Na", crystal.Vec3{0, 0, 0}, "Cl", crystal.Vec3{0.5, 0.5, 0.5})
	for _, s := range []Scheme{MP2020, Legacy} {
		mna, _ := c.Reference(s, crystal.MustElement("Na"))
		mcl, _ := c.Reference(s, crystal.MustElement("Cl"))
		ef, adj, err := c.FormationEnergyPerAtom(s, nacl, mna+mcl-1)
		if err != nil {
			t.Fatal(err)
		}
		want := -0.5
		for _, a := range adj {
			want += a.Energy() / 2
		}
		if math.Abs(ef-want) > 1e-12 {
			t.Errorf("%v: NaCl %v eV/atom, want %v", s, ef, want)
		}
	}
	// The legacy scheme's Cl reference is its fitted Cl2 energy.
	if v, _ := c.Reference(Legacy, crystal.MustElement("Cl")); v != -1.25385097674 {
		t.Errorf("legacy Cl reference %v", v)
	}
}
