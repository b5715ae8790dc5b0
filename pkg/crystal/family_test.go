package crystal

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAnions(t *testing.T) {
	for _, tc := range []struct {
		formula string
		want    []string
	}{
		{"SrTiO3", []string{"O"}},
		{"KMgF3", []string{"F"}},
		{"BN", []string{"N"}},
		{"NaLiF2", []string{"F"}},
		{"SrTiO2F", []string{"O", "F"}},
		{"Cu", nil},
		{"CuZn", nil},
		{"Fe3O4", []string{"O"}},
	} {
		var got []string
		for _, e := range Anions(MustParseFormula(tc.formula)) {
			got = append(got, e.Symbol())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Anions(%s) = %v, want %v", tc.formula, got, tc.want)
		}
	}
}

// pnmaOps are the eight general positions of Pnma (No. 62, standard
// setting).
const pnmaOps = `loop_
_symmetry_equiv_pos_as_xyz
'x, y, z'
'-x+1/2, -y, z+1/2'
'-x, y+1/2, -z'
'x+1/2, -y+1/2, -z+1/2'
'-x, -y, -z'
'x+1/2, y, -z+1/2'
'x, -y+1/2, z'
'-x+1/2, y+1/2, z+1/2'
`

// caTiO3 is orthorhombic CaTiO3 (Pnma), the GdFeO3-type tilted
// perovskite: Sasaki, Prewitt, Bass & Schulze, Acta Cryst. C43, 1668
// (1987).
const caTiO3 = `data_CaTiO3
_cell_length_a 5.388
_cell_length_b 7.654
_cell_length_c 5.444
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
` + pnmaOps + `loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Ca1 Ca -0.0065 0.25 0.0349
Ti1 Ti 0 0 0.5
O1 O 0.0711 0.25 0.4843
O2 O 0.7111 0.0373 0.2889
`

// hexagonalBaNiO3 is the 2H hexagonal perovskite (P6₃/mmc), chains of
// face-sharing NiO6 octahedra (Lander, Acta Cryst. 4, 148 (1951): a =
// 5.629, c = 4.811 Å, O at 6h with x ≈ 0.148), written out in P1.
func hexagonalBaNiO3(t *testing.T) *Structure {
	t.Helper()
	l, err := LatticeFromParameters(5.629, 5.629, 4.811, 90, 90, 120)
	if err != nil {
		t.Fatal(err)
	}
	const x = 0.148
	ba, ni, o := MustElement("Ba"), MustElement("Ni"), MustElement("O")
	s, err := NewStructure(l,
		[]Element{ba, ba, ni, ni, o, o, o, o, o, o},
		[]Vec3{
			{1.0 / 3, 2.0 / 3, 0.75}, {2.0 / 3, 1.0 / 3, 0.25},
			{0, 0, 0}, {0, 0, 0.5},
			{x, 2 * x, 0.25}, {-2 * x, -x, 0.25}, {x, -x, 0.25},
			{-x, -2 * x, 0.75}, {2 * x, x, 0.75}, {-x, x, 0.75},
		})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func buildIn(t *testing.T, proto, formula string) *Structure {
	t.Helper()
	p, err := PrototypeByName(proto)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(p, MustParseFormula(formula))
	if err != nil {
		t.Fatal(err)
	}
	return b.Structure
}

func TestInFamilyPerovskite(t *testing.T) {
	cubic := buildIn(t, "perovskite", "SrTiO3")
	super, err := cubic.Supercell(2, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	tilted, err := ParseCIF([]byte(caTiO3))
	if err != nil {
		t.Fatal(err)
	}
	if tilted.NumSites() != 20 {
		t.Fatalf("CaTiO3 has %d sites, want 20", tilted.NumSites())
	}
	for _, tc := range []struct {
		name string
		s    *Structure
		want string // "" for a perovskite, else a part of the reason
	}{
		{"cubic SrTiO3", cubic, ""},
		{"cubic KMgF3", buildIn(t, "perovskite", "KMgF3"), ""},
		{"SrTiO3 supercell", super, ""},
		{"tilted CaTiO3", tilted, ""},
		{"face-sharing BaNiO3", hexagonalBaNiO3(t), "angle"},
		{"rock salt", buildIn(t, "rocksalt", "NaCl"), "is not ABX3"},
		{"layered LiCoO2", buildIn(t, "nafeo2", "LiCoO2"), "is not ABX3"},
		{"spinel", buildIn(t, "spinel", "MgAl2O4"), "is not ABX3"},
	} {
		err := InFamily(tc.s, FamilyPerovskite)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want a perovskite", tc.name, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s: a perovskite, want %q", tc.name, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestInFamilyDisplacedAnion: an octahedron pulled apart (one anion moved
// far from its B cation) is no longer a corner-sharing network.
func TestInFamilyDisplacedAnion(t *testing.T) {
	s := buildIn(t, "perovskite", "SrTiO3")
	for i, e := range s.Species {
		if e == MustElement("O") {
			s.Frac[i][0] += 0.22 // Ti–O from 0.5a to 0.72a and 0.28a: the 1.3 shell drops one
			break
		}
	}
	if err := InFamily(s, FamilyPerovskite); err == nil || !strings.Contains(err.Error(), "neighbours, not 6") {
		t.Errorf("distorted: %v", err)
	}
}

func TestInFamilyUnknown(t *testing.T) {
	s := buildIn(t, "perovskite", "SrTiO3")
	if err := InFamily(s, "pyrochlore"); !errors.Is(err, ErrUnknownFamily) {
		t.Errorf("InFamily(pyrochlore) = %v, want ErrUnknownFamily", err)
	}
}
