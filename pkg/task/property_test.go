package task

import (
	"errors"
	"regexp"
	"testing"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

func TestPropertyByName(t *testing.T) {
	tests := map[string]string{
		"band_gap":                  "band_gap",
		"Band gap":                  "band_gap",
		"BAND-GAP":                  "band_gap",
		"  band   gap ":             "band_gap",
		"Optical band gap":          "band_gap",
		"E_g":                       "band_gap",
		"Formation energy":          "formation_energy_per_atom",
		"formation energy per atom": "formation_energy_per_atom",
		"Bulk modulus":              "bulk_modulus",
		"K":                         "bulk_modulus",
		"Shear modulus":             "shear_modulus",
		"G":                         "shear_modulus",
		"Density":                   "density",
		"ρ":                         "density",
		"Energy above hull":         "e_above_hull",
		"E_hull":                    "e_above_hull",
		"Dielectric constant":       "dielectric_constant",
		"κ":                         "dielectric_constant",
		"piezo_max_dij":             "piezo_max_dij",
		"Piezoelectric coefficient": "piezo_max_dij",
		"piezo_max_dielectric":      "piezo_max_dielectric",
		"conductivity":              "conductivity",
		"Electrical conductivity":   "conductivity",
		"Poisson ratio":             "poisson_ratio",
		"Poisson's ratio":           "poisson_ratio",
		"Fermi energy":              "efermi",
		"metal probability":         "metal_probability",
		"volume per atom":           "volume_per_atom",
	}
	for name, want := range tests {
		p, err := PropertyByName(name)
		if err != nil || p.Name != want {
			t.Errorf("PropertyByName(%q) = %q, %v; want %q", name, p.Name, err, want)
		}
	}
	if _, err := PropertyByName("hardness"); !errors.Is(err, ErrUnknownProperty) {
		t.Errorf("PropertyByName(hardness): %v, want ErrUnknownProperty", err)
	}
}

// TestRegistryIsConsistent guards against two properties sharing a name
// (the alias map would silently keep one) and against support levels or
// units the rest of the package does not know.
func TestRegistryIsConsistent(t *testing.T) {
	owner := map[string]string{}
	canonicalUnits := map[string]bool{"": true}
	for _, u := range units {
		canonicalUnits[u.canonical] = true
	}
	for _, p := range Properties() {
		if p.Support.rank() == 0 && p.Support != SupportUnsupported {
			t.Errorf("%s: unknown support %q", p.Name, p.Support)
		}
		if !canonicalUnits[p.Unit] {
			t.Errorf("%s: unit %q has no spelling in the unit table", p.Name, p.Unit)
		}
		if !snakeCase.MatchString(p.Name) || p.Label == "" || p.Description == "" {
			t.Errorf("%s: incomplete entry", p.Name)
		}
		for _, n := range append([]string{p.Name, p.Label}, p.Aliases...) {
			k := normalizeName(n)
			if o, ok := owner[k]; ok && o != p.Name {
				t.Errorf("name %q belongs to both %s and %s", n, o, p.Name)
			}
			owner[k] = p.Name
		}
	}
	want := map[string]Support{
		"formation_energy_per_atom": SupportSurrogate, "band_gap": SupportSurrogate,
		"bulk_modulus": SupportSurrogate, "shear_modulus": SupportSurrogate,
		"poisson_ratio": SupportSurrogate, "efermi": SupportSurrogate, "metal_probability": SupportSurrogate,
		"density": SupportStructure, "volume_per_atom": SupportStructure,
		"e_above_hull": SupportHull, "dielectric_constant": SupportSurrogate, "dielectric_electronic": SupportReference,
		"piezo_max_eij": SupportSurrogate, "piezo_max_dij": SupportSurrogate, "piezo_max_dielectric": SupportSurrogate,
		"conductivity": SupportSurrogate, "seebeck_coefficient": SupportUnsupported,
	}
	for name, s := range want {
		p, err := PropertyByName(name)
		if err != nil || p.Support != s {
			t.Errorf("%s: support %q (%v), want %q", name, p.Support, err, s)
		}
	}
}

func TestToCanonical(t *testing.T) {
	tests := []struct {
		property, unit string
		v, want        float64
		err            bool
	}{
		{"band_gap", "eV", 2.5, 2.5, false},
		{"band_gap", "", 2.5, 2.5, false},
		{"band_gap", "meV", 250, 0.25, false},
		{"formation_energy_per_atom", "eV/atom", -1, -1, false},
		{"e_above_hull", "meV/atom", 100, 0.1, false},
		{"bulk_modulus", "GPa", 200, 200, false},
		{"bulk_modulus", "MPa", 1500, 1.5, false},
		{"density", "g/cm³", 5, 5, false},
		{"density", "g/cm3", 5, 5, false},
		{"density", "g cm^-3", 5, 5, false},
		{"density", "g/cm ³", 5, 5, false},
		{"density", "kg/m3", 3500, 3.5, false},
		{"volume_per_atom", "Å³/atom", 12, 12, false},
		{"piezo_max_dij", "pC/N", 8, 8, false},
		{"conductivity", "S/cm", 50, 50, false},
		{"conductivity", "S/m", 5000, 50, false},
		{"seebeck_coefficient", "μV/K", 200, 200, false},
		{"band_gap", "GPa", 2, 0, true},
		{"formation_energy_per_atom", "eV", -1, 0, true},
		{"dielectric_constant", "eV", 10, 0, true},
		{"bulk_modulus", "furlongs", 1, 0, true},
	}
	for _, tt := range tests {
		p, err := PropertyByName(tt.property)
		if err != nil {
			t.Fatal(err)
		}
		got, err := toCanonical(p, tt.v, tt.unit)
		if tt.err {
			if !errors.Is(err, ErrUnit) {
				t.Errorf("%s in %q: err %v, want ErrUnit", tt.property, tt.unit, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s %v %q: got %v, %v; want %v", tt.property, tt.v, tt.unit, got, err, tt.want)
		}
	}
}
