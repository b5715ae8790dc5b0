package task

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// constraintStrings writes constraints as String does, for comparisons.
func constraintStrings(cs []Constraint) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

func TestParseGoal(t *testing.T) {
	tests := []struct {
		name        string
		goal        string
		constraints []string
		elements    ElementRules
		notes       []string
		issues      int
	}{
		{"ASCII comparisons", "Band gap >= 2.5 eV, Formation energy <= -1.0 eV/atom",
			[]string{"band_gap ≥ 2.5 eV", "formation_energy_per_atom ≤ -1 eV/atom"}, ElementRules{}, nil, 0},
		{"Unicode comparisons", "Band gap ≥ 2.5 eV, Formation energy ≤ −1.0 eV/atom",
			[]string{"band_gap ≥ 2.5 eV", "formation_energy_per_atom ≤ -1 eV/atom"}, ElementRules{}, nil, 0},
		{"strict comparisons", "band_gap > 3.0 eV; density < 4 g/cm3",
			[]string{"band_gap ≥ 3 eV", "density ≤ 4 g/cm³"}, ElementRules{}, nil, 0},
		{"ASCII hyphen range", "Band gap 0.7-2.0 eV",
			[]string{"band_gap 0.7–2 eV"}, ElementRules{}, nil, 0},
		{"spaced hyphen range", "Bulk modulus 100 - 300 GPa",
			[]string{"bulk_modulus 100–300 GPa"}, ElementRules{}, nil, 0},
		{"em dash range", "Shear modulus 25—150 GPa",
			[]string{"shear_modulus 25–150 GPa"}, ElementRules{}, nil, 0},
		{"between and", "Band gap between 0.7 and 2.0 eV",
			[]string{"band_gap 0.7–2 eV"}, ElementRules{}, nil, 0},
		{"between and, then and", "Band gap between 1 and 2 eV and density ≤ 3 g/cm³",
			[]string{"band_gap 1–2 eV", "density ≤ 3 g/cm³"}, ElementRules{}, nil, 0},
		{"from to", "Band gap from 1 to 2 eV",
			[]string{"band_gap 1–2 eV"}, ElementRules{}, nil, 0},
		{"units on both ends", "Bulk modulus 100 GPa – 300 GPa",
			[]string{"bulk_modulus 100–300 GPa"}, ElementRules{}, nil, 0},
		{"negative range, Unicode", "Formation energy −1.5 – −0.5 eV/atom",
			[]string{"formation_energy_per_atom -1.5–-0.5 eV/atom"}, ElementRules{}, nil, 0},
		{"negative range, ASCII", "Formation energy -2--1 eV/atom",
			[]string{"formation_energy_per_atom -2–-1 eV/atom"}, ElementRules{}, nil, 0},
		{"colon", "Band gap: 1.1–1.7 eV",
			[]string{"band_gap 1.1–1.7 eV"}, ElementRules{}, nil, 0},
		{"number first", "2.0 eV <= Band gap",
			[]string{"band_gap ≥ 2 eV"}, ElementRules{}, nil, 0},
		{"number first, upper", "5 >= density",
			[]string{"density ≤ 5 g/cm³"}, ElementRules{}, nil, 0},
		{"double-sided", "10 ≤ piezo_max_dielectric ≤ 8000",
			[]string{"piezo_max_dielectric 10–8000"}, ElementRules{}, nil, 0},
		{"double-sided reversed", "195 GPa >= shear_modulus >= 65 GPa",
			[]string{"shear_modulus 65–195 GPa"}, ElementRules{}, nil, 0},
		{"words", "Band gap at least 2 eV and density at most 3 g/cm3",
			[]string{"band_gap ≥ 2 eV", "density ≤ 3 g/cm³"}, ElementRules{}, nil, 0},
		{"above and below", "band gap above 3 eV; formation energy below 0 eV/atom",
			[]string{"band_gap ≥ 3 eV", "formation_energy_per_atom ≤ 0 eV/atom"}, ElementRules{}, nil, 0},
		{"above in the name", "Energy above hull below 0.05 eV/atom",
			[]string{"e_above_hull ≤ 0.05 eV/atom"}, ElementRules{}, nil, 0},
		{"milli units", "Energy above hull ≤ 100 meV/atom",
			[]string{"e_above_hull ≤ 0.1 eV/atom"}, ElementRules{}, nil, 0},
		{"MPa", "Bulk modulus ≥ 150000 MPa",
			[]string{"bulk_modulus ≥ 150 GPa"}, ElementRules{}, nil, 0},
		{"kg/m3", "Density ≤ 3500 kg/m3",
			[]string{"density ≤ 3.5 g/cm³"}, ElementRules{}, nil, 0},
		{"g/cm^3", "Density ≤ 5.0 g/cm^3",
			[]string{"density ≤ 5 g/cm³"}, ElementRules{}, nil, 0},
		{"no unit", "Band gap ≥ 2.5",
			[]string{"band_gap ≥ 2.5 eV"}, ElementRules{}, nil, 0},
		{"dimensionless", "Dielectric constant 3.7–95",
			[]string{"dielectric_constant 3.7–95"}, ElementRules{}, nil, 0},
		{"must contain slash", "Band gap ≥ 2.0 eV, Must contain Li/Na/K/Mg/Ca/Al",
			[]string{"band_gap ≥ 2 eV"}, ElementRules{MustContainOneOf: []string{"Li", "Na", "K", "Mg", "Ca", "Al"}}, nil, 0},
		{"must contain commas and or", "Band gap ≥ 2.0 eV, must contain Li, Na, K, Mg, Ca, or Al",
			[]string{"band_gap ≥ 2 eV"}, ElementRules{MustContainOneOf: []string{"Li", "Na", "K", "Mg", "Ca", "Al"}}, nil, 0},
		{"must contain one of", "Band gap ≥ 1 eV, must contain at least one of Li, Na",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{MustContainOneOf: []string{"Li", "Na"}}, nil, 0},
		{"must contain all", "Band gap ≥ 1 eV, must contain Li and O",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{MustContainAll: []string{"Li", "O"}}, nil, 0},
		{"must contain one element", "Band gap ≥ 1 eV; contains O",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{MustContainAll: []string{"O"}}, nil, 0},
		{"exclude list", "Band gap ≥ 1 eV; exclude Pb, Cd and Hg",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{Exclude: []string{"Pb", "Cd", "Hg"}}, nil, 0},
		{"without", "Band gap ≥ 1 eV, without Pb/Cd",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{Exclude: []string{"Pb", "Cd"}}, nil, 0},
		{"exclude after and", "Band gap ≥ 1 eV and exclude Pb",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{Exclude: []string{"Pb"}}, nil, 0},
		{"only", "Band gap ≥ 1 eV; only Li, Fe, P, O",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{AllowedOnly: []string{"Li", "Fe", "P", "O"}}, nil, 0},
		{"list only", "Band gap ≥ 1 eV, Li/Fe/P/O only",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{AllowedOnly: []string{"Li", "Fe", "P", "O"}}, nil, 0},
		{"earth-abundant and non-toxic", "Band gap 0.7–2.0 eV, Earth-abundant and non-toxic elements only",
			[]string{"band_gap 0.7–2 eV"}, ElementRules{EarthAbundant: true, NonToxic: true}, nil, 0},
		{"earth-abundant after and", "Band gap ≥ 1 eV and Earth-abundant and non-toxic elements only",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{EarthAbundant: true, NonToxic: true}, nil, 0},
		{"earth-abundant, non-toxic", "Band gap ≥ 1 eV, Earth abundant, non-toxic elements only",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{EarthAbundant: true, NonToxic: true}, nil, 0},
		{"earth-abundant alone", "Band gap ≥ 1 eV, earth-abundant elements only",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{EarthAbundant: true}, nil, 0},
		{"non-toxic alone", "Band gap ≥ 1 eV, nontoxic",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{NonToxic: true}, nil, 0},
		{"preference kept whole", "Band gap ≥ 1 eV; prefer layered structures, if possible",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{}, []string{"prefer layered structures, if possible"}, 0},
		{"ranking note", "piezo_max_dij ≥ 8 pC/N and 10 ≤ piezo_max_dielectric ≤ 8000; if ranking, use FoM d²/κ (higher is better)",
			[]string{"piezo_max_dij ≥ 8 pC/N", "piezo_max_dielectric 10–8000"}, ElementRules{}, []string{"if ranking, use FoM d²/κ (higher is better)"}, 0},
		{"clause not understood", "Band gap ≥ 1 eV, high thermal conductivity",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{}, []string{"high thermal conductivity"}, 1},
		{"rare or hazardous is not a list", "Band gap ≥ 1 eV, exclude rare or hazardous elements",
			[]string{"band_gap ≥ 1 eV"}, ElementRules{}, []string{"exclude rare or hazardous elements"}, 1},
		{"trailing period and blanks", " Band gap ≥ 1 eV ;  ; density ≤ 3 g/cm³. ",
			[]string{"band_gap ≥ 1 eV", "density ≤ 3 g/cm³"}, ElementRules{}, nil, 0},
	}
	for _, tt := range tests {
		got, err := ParseGoal(tt.goal)
		if err != nil {
			t.Errorf("%s: ParseGoal(%q): %v", tt.name, tt.goal, err)
			continue
		}
		if cs := constraintStrings(got.Constraints); !slices.Equal(cs, tt.constraints) {
			t.Errorf("%s: constraints %q, want %q", tt.name, cs, tt.constraints)
		}
		if !reflect.DeepEqual(got.Elements, tt.elements) {
			t.Errorf("%s: elements %+v, want %+v", tt.name, got.Elements, tt.elements)
		}
		if !slices.Equal(got.Notes, tt.notes) {
			t.Errorf("%s: notes %q, want %q", tt.name, got.Notes, tt.notes)
		}
		if len(got.Issues) != tt.issues {
			t.Errorf("%s: issues %q, want %d", tt.name, got.Issues, tt.issues)
		}
	}
}

func TestParseGoalErrors(t *testing.T) {
	tests := []struct {
		name   string
		goal   string
		target error
		text   string
		kept   int // constraints understood despite the error
	}{
		{"unit of another property", "Band gap ≥ 2 GPa", ErrUnit, `"GPa" does not measure band_gap`, 0},
		{"eV for eV/atom", "Band gap ≥ 2 eV, Formation energy ≤ -1 eV", ErrUnit, `"eV" does not measure formation_energy_per_atom`, 1},
		{"unit on dimensionless", "Dielectric constant ≥ 8 eV", ErrUnit, "dimensionless", 0},
		{"unknown unit", "Bulk modulus ≥ 100 furlongs", ErrUnit, `unknown unit "furlongs"`, 0},
		{"unknown property", "Hardness ≥ 20 GPa, Band gap ≥ 1 eV", ErrUnknownProperty, `"Hardness"`, 1},
		{"error explains no constraint", "Hardness ≥ 20 GPa", ErrUnknownProperty, `"Hardness"`, 0},
		{"inverted range", "Band gap 3–1 eV", ErrBadConstraint, "lower bound 3 is above upper bound 1", 0},
		{"mixed directions", "5 ≤ Band gap ≥ 3", ErrBadConstraint, "opposite directions", 0},
		{"comma in number", "piezo_max_dielectric ≤ 8,000", ErrBadConstraint, "comma", 1},
		{"unknown element", "Band gap ≥ 1 eV, exclude Pb, Xx", crystal.ErrUnknownElement, "Xx", 1},
		{"two one-of rules", "Band gap ≥ 1 eV, must contain Li/Na; must contain K/Rb", ErrBadElementRule, "only one", 1},
		{"only preferences", "prefer oxides; rank by band gap", ErrNoConstraint, "no property constraint", 0},
		{"empty", "", ErrNoConstraint, "no property constraint", 0},
		{"only element rules", "Must contain Li/Na", ErrNoConstraint, "no property constraint", 0},
	}
	for _, tt := range tests {
		got, err := ParseGoal(tt.goal)
		if err == nil {
			t.Errorf("%s: ParseGoal(%q) = nil error", tt.name, tt.goal)
			continue
		}
		if !errors.Is(err, tt.target) || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: error %q, want %v containing %q", tt.name, err, tt.target, tt.text)
		}
		var ce *ClauseError
		if !errors.Is(tt.target, ErrNoConstraint) && !errors.As(err, &ce) {
			t.Errorf("%s: error %q is not a *ClauseError", tt.name, err)
		}
		if len(got.Constraints) != tt.kept {
			t.Errorf("%s: %d constraints understood, want %d", tt.name, len(got.Constraints), tt.kept)
		}
	}
}

// TestParseGoalNeverDropsText checks on assorted goals that every word of
// the goal ends up in a constraint, an element rule, a note or an error.
func TestParseGoalNeverDropsText(t *testing.T) {
	goals := []string{
		"Band gap ≥ 2.5 eV, stable in air, cheap",
		"tight κ band; Band gap 1–2 eV, something odd and another thing",
		"Band gap ≥ 1 eV, must contain Li/Na, low cost, exclude Pb, Cd",
	}
	for _, g := range goals {
		got, err := ParseGoal(g)
		if err != nil {
			t.Errorf("ParseGoal(%q): %v", g, err)
			continue
		}
		for _, word := range []string{"stable in air", "cheap", "tight κ band", "something odd and another thing", "low cost"} {
			if strings.Contains(g, word) && !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, word) }) {
				t.Errorf("ParseGoal(%q): %q is in no note (%q)", g, word, got.Notes)
			}
		}
		if len(got.Issues) == 0 {
			t.Errorf("ParseGoal(%q): no issue reported for the clauses kept as notes", g)
		}
	}
}
