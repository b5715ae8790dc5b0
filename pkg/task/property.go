package task

import (
	"errors"
	"fmt"
	"strings"
)

// Support says what in Crucible can provide a property's value.
type Support string

// The support levels, from the most to the least available.
const (
	// SupportStructure: computed exactly from the candidate's structure.
	SupportStructure Support = "structure"
	// SupportHull: the energy above the convex hull of the reference
	// phases, computed exactly from the predicted formation energy.
	SupportHull Support = "hull"
	// SupportSurrogate: predicted for any structure by a surrogate (a
	// CGCNN checkpoint, Crucible's own trained models, or a plug-in model
	// server).
	SupportSurrogate Support = "surrogate"
	// SupportReference: known only for compounds in the reference tables
	// (exact lookup); Crucible has no surrogate for it, so a novel
	// candidate has no value.
	SupportReference Support = "reference"
	// SupportUnsupported: nothing in Crucible provides it. A constraint on
	// it is reported and counts as unmet; a value is never made up.
	SupportUnsupported Support = "unsupported"
)

// rank orders support levels from unsupported (0) to exact (4).
func (s Support) rank() int {
	switch s {
	case SupportStructure:
		return 4
	case SupportHull:
		return 3
	case SupportSurrogate:
		return 2
	case SupportReference:
		return 1
	}
	return 0
}

// Available reports whether every valid candidate gets a value: structure,
// hull and surrogate properties are; reference-only and unsupported ones
// are not.
func (s Support) Available() bool { return s.rank() >= 2 }

// Property is one physical property a task can constrain.
type Property struct {
	// Name is the canonical snake_case name used in constraints, in the
	// evaluator's property maps and on the wire.
	Name string `json:"name"`
	// Label is the name in words ("Band gap").
	Label string `json:"label"`
	// Unit is the unit values are expressed in; "" for dimensionless.
	Unit string `json:"unit,omitempty"`
	// Description says what the value is and where Crucible gets it.
	Description string `json:"description"`
	// Aliases are the other names goals use for it ("Formation energy",
	// "E_hull", "κ"); matching ignores case, '_', '-' and extra spaces.
	Aliases []string `json:"aliases,omitempty"`
	// Support says what in Crucible provides it.
	Support Support `json:"support"`
}

// properties is the registry. The CGCNN checkpoints are those of Xie &
// Grossman (PRL 120, 145301, 2018); LLEMA's oracles for the same
// properties are listed in its App. B.1, Table 5.
var properties = []Property{
	{
		Name: "formation_energy_per_atom", Label: "Formation energy", Unit: "eV/atom", Support: SupportSurrogate,
		Description: "Formation energy per atom from the elements (CGCNN formation-energy-per-atom checkpoint, Materials Project energies).",
		Aliases:     []string{"formation energy", "formation energy per atom", "formation_energy", "e_form", "ΔHf", "ΔH_f", "enthalpy of formation"},
	},
	{
		Name: "band_gap", Label: "Band gap", Unit: "eV", Support: SupportSurrogate,
		Description: "Kohn–Sham (PBE) band gap (CGCNN band-gap checkpoint); PBE underestimates experimental and optical gaps.",
		Aliases:     []string{"band gap", "bandgap", "gap", "optical band gap", "electronic band gap", "Eg", "E_g"},
	},
	{
		Name: "bulk_modulus", Label: "Bulk modulus", Unit: "GPa", Support: SupportSurrogate,
		Description: "Voigt–Reuss–Hill bulk modulus (CGCNN bulk-moduli checkpoint, which predicts log10 GPa; reported in GPa).",
		Aliases:     []string{"bulk modulus", "bulk moduli", "K", "K_VRH"},
	},
	{
		Name: "shear_modulus", Label: "Shear modulus", Unit: "GPa", Support: SupportSurrogate,
		Description: "Voigt–Reuss–Hill shear modulus (CGCNN shear-moduli checkpoint, which predicts log10 GPa; reported in GPa).",
		Aliases:     []string{"shear modulus", "shear moduli", "G", "G_VRH"},
	},
	{
		Name: "poisson_ratio", Label: "Poisson ratio", Support: SupportSurrogate,
		Description: "Poisson's ratio (CGCNN poisson-ratio checkpoint).",
		Aliases:     []string{"Poisson ratio", "Poisson's ratio", "ν", "nu"},
	},
	{
		Name: "efermi", Label: "Fermi energy", Unit: "eV", Support: SupportSurrogate,
		Description: "Fermi energy of the DFT calculation (CGCNN efermi checkpoint).",
		Aliases:     []string{"Fermi energy", "Fermi level", "e_fermi", "E_F"},
	},
	{
		Name: "metal_probability", Label: "Metal probability", Support: SupportSurrogate,
		Description: "Probability, from 0 to 1, that the material is a metal (CGCNN semi-metal-classification checkpoint).",
		Aliases:     []string{"metal probability", "metallic probability", "p_metal"},
	},
	{
		Name: "density", Label: "Density", Unit: "g/cm³", Support: SupportStructure,
		Description: "Mass density, exactly from the structure's composition and cell volume.",
		Aliases:     []string{"density", "mass density", "ρ", "rho"},
	},
	{
		Name: "volume_per_atom", Label: "Volume per atom", Unit: "Å³/atom", Support: SupportStructure,
		Description: "Cell volume divided by the number of atoms, exactly from the structure.",
		Aliases:     []string{"volume per atom", "atomic volume"},
	},
	{
		Name: "e_above_hull", Label: "Energy above hull", Unit: "eV/atom", Support: SupportHull,
		Description: "Energy above the convex hull of the reference phases of the candidate's chemical system, from its predicted formation energy; ≤ 0.1 eV/atom counts as stable (LLEMA §3.2).",
		Aliases:     []string{"energy above hull", "energy above the hull", "energy above convex hull", "E_hull", "Ehull", "e_above_hull", "hull distance", "Δhull", "ΔE_hull"},
	},
	{
		Name: "dielectric_constant", Label: "Dielectric constant", Support: SupportSurrogate,
		Description: "Static (electronic + ionic) dielectric constant κ, the mean of the eigenvalues of the DFPT dielectric tensor: the value of Petousis et al. (2017) for a compound of that set, else Crucible's gradient-boosted-tree surrogate on structure, composition and band gap, with its cross-validated uncertainty (docs/surrogates.md). The electronic part alone is dielectric_electronic.",
		Aliases:     []string{"dielectric constant", "static dielectric constant", "permittivity", "relative permittivity", "static permittivity", "epsilon", "ε", "ε0", "ε_0", "κ", "kappa"},
	},
	{
		Name: "dielectric_electronic", Label: "Electronic dielectric constant", Support: SupportReference,
		Description: "Electronic (high-frequency) dielectric constant ε∞ ≈ n², from the refractive index of compounds in the reference table (LLEMA's oracle, ALIGNN jv_epsx, is also electronic only). No surrogate: a composition not in the table has no value.",
		Aliases:     []string{"electronic dielectric constant", "high-frequency dielectric constant", "optical dielectric constant", "ε∞", "epsilon infinity", "epsx", "n²"},
	},
	{
		Name: "piezo_max_eij", Label: "Piezoelectric stress coefficient", Unit: "C/m²", Support: SupportSurrogate,
		Description: "Largest longitudinal piezoelectric stress coefficient, max over directions of |e_ijk n_i n_j n_k| (eij_max of de Jong et al. 2015 for a compound of that set, else Crucible's surrogate on structure and composition; exactly 0 for a centrosymmetric structure).",
		Aliases:     []string{"piezoelectric stress coefficient", "eij max", "max eij", "e_ij", "eij"},
	},
	{
		Name: "piezo_max_dij", Label: "Piezoelectric coefficient", Unit: "pC/N", Support: SupportSurrogate,
		Description: "Largest piezoelectric strain coefficient |d_ij| (LLEMA: ALIGNN jv_dfpt_piezo_max), estimated as 3.637·1000·e/E from piezo_max_eij and Young's modulus E of the bulk and shear moduli, the uncertainty propagating both (docs/surrogates.md): an estimate, not a d computed from an elastic tensor.",
		Aliases:     []string{"piezoelectric coefficient", "piezoelectric constant", "piezo coefficient", "d_ij", "dij", "d proxy", "max dij"},
	},
	{
		Name: "piezo_max_dielectric", Label: "Piezo dielectric constant", Support: SupportSurrogate,
		Description: "Largest diagonal element of the static (electronic + ionic) dielectric tensor (Petousis et al. 2017 for a compound of that set, else Crucible's surrogate on structure, composition and band gap): the largest eigenvalue where the tensor is diagonal in the cell frame, a lower bound of it otherwise.",
		Aliases:     []string{"piezo max dielectric", "piezo dielectric constant", "total dielectric constant", "max dielectric"},
	},
	{
		Name: "conductivity", Label: "Electrical conductivity", Unit: "S/cm", Support: SupportSurrogate,
		Description: "Electrical conductivity near 300 K: the median of ESTM's measurements at 280–320 K for a composition of that set, else Crucible's composition-only surrogate. It cannot tell a degenerately doped oxide from an insulating one (docs/surrogates.md): its uncertainty is a factor of about 9.",
		Aliases:     []string{"electrical conductivity", "σ", "sigma"},
	},
	{
		Name: "seebeck_coefficient", Label: "Seebeck coefficient", Unit: "µV/K", Support: SupportUnsupported,
		Description: "Seebeck coefficient (LLEMA: ALIGNN jv_n-Seebeck). No oracle in Crucible provides it.",
		Aliases:     []string{"Seebeck coefficient", "Seebeck", "thermopower"},
	},
	{
		Name: "power_factor", Label: "Power factor", Unit: "µW/(cm·K²)", Support: SupportUnsupported,
		Description: "Thermoelectric power factor S²σ (LLEMA: ALIGNN jv_n-powerfact). No oracle in Crucible provides it.",
		Aliases:     []string{"power factor", "thermoelectric power factor", "PF"},
	},
}

// byName maps canonical names to their index in properties; byAlias maps
// every normalised name and alias to the canonical name.
var byName, byAlias = func() (map[string]int, map[string]string) {
	names := make(map[string]int, len(properties))
	aliases := make(map[string]string, 8*len(properties))
	for i, p := range properties {
		names[p.Name] = i
		aliases[normalizeName(p.Name)] = p.Name
		aliases[normalizeName(p.Label)] = p.Name
		for _, a := range p.Aliases {
			aliases[normalizeName(a)] = p.Name
		}
	}
	return names, aliases
}()

// normalizeName lower-cases a property name and turns '_' and '-' into
// single spaces, so "Band gap", "band_gap" and "band-gap" are one name.
func normalizeName(s string) string {
	s = strings.ToLower(s)
	s = strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// Properties returns every property Crucible knows, in registry order
// (CGCNN surrogates, structure, hull, reference, unsupported). The slice is
// a copy.
func Properties() []Property {
	out := make([]Property, len(properties))
	for i, p := range properties {
		p.Aliases = append([]string(nil), p.Aliases...)
		out[i] = p
	}
	return out
}

// PropertyNames returns the canonical names in registry order.
func PropertyNames() []string {
	out := make([]string, len(properties))
	for i, p := range properties {
		out[i] = p.Name
	}
	return out
}

// PropertyByName finds a property by its canonical name or any alias,
// ignoring case, '_', '-' and extra spaces. The error wraps
// ErrUnknownProperty and lists the canonical names.
func PropertyByName(name string) (Property, error) {
	if i, ok := byName[name]; ok {
		return properties[i], nil
	}
	if canon, ok := byAlias[normalizeName(name)]; ok {
		return properties[byName[canon]], nil
	}
	return Property{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownProperty, name, strings.Join(PropertyNames(), ", "))
}

// UnitOf is the unit of a property given by canonical name or alias, ""
// for an unknown one.
func UnitOf(name string) string {
	p, err := PropertyByName(name)
	if err != nil {
		return ""
	}
	return p.Unit
}

// canonicalProperty reports whether name is a canonical property name and
// returns it.
func canonicalProperty(name string) (Property, bool) {
	i, ok := byName[name]
	if !ok {
		return Property{}, false
	}
	return properties[i], true
}

// unit is one accepted spelling of a unit: a value v in it is v·mul/div in
// the canonical unit (division keeps milli-units exact: 100 meV is 0.1 eV).
type unit struct {
	canonical string
	mul, div  float64
}

// units maps normalised unit spellings (see normalizeUnit) to the canonical
// units of the registry.
var units = map[string]unit{
	"ev":        {"eV", 1, 1},
	"mev":       {"eV", 1, 1000},
	"ev/atom":   {"eV/atom", 1, 1},
	"ev/at":     {"eV/atom", 1, 1},
	"evatom-1":  {"eV/atom", 1, 1},
	"mev/atom":  {"eV/atom", 1, 1000},
	"mev/at":    {"eV/atom", 1, 1000},
	"gpa":       {"GPa", 1, 1},
	"mpa":       {"GPa", 1, 1000},
	"kbar":      {"GPa", 1, 10},
	"g/cm3":     {"g/cm³", 1, 1},
	"gcm-3":     {"g/cm³", 1, 1},
	"g/cc":      {"g/cm³", 1, 1},
	"g/ml":      {"g/cm³", 1, 1},
	"kg/m3":     {"g/cm³", 1, 1000},
	"kgm-3":     {"g/cm³", 1, 1000},
	"a3/atom":   {"Å³/atom", 1, 1},
	"a3/at":     {"Å³/atom", 1, 1},
	"a3":        {"Å³/atom", 1, 1},
	"pc/n":      {"pC/N", 1, 1},
	"c/m2":      {"C/m²", 1, 1},
	"cm-2":      {"C/m²", 1, 1},
	"s/cm":      {"S/cm", 1, 1},
	"scm-1":     {"S/cm", 1, 1},
	"s/m":       {"S/cm", 1, 100},
	"sm-1":      {"S/cm", 1, 100},
	"uv/k":      {"µV/K", 1, 1},
	"mv/k":      {"µV/K", 1000, 1},
	"uw/(cmk2)": {"µW/(cm·K²)", 1, 1},
	"uw/cm/k2":  {"µW/(cm·K²)", 1, 1},
	"uwcm-1k-2": {"µW/(cm·K²)", 1, 1},
}

// normalizeUnit lower-cases a unit and removes spaces, '^', '·' and '*',
// writes superscripts as digits, µ/μ as u and Å as a, so "g/cm³", "g/cm3",
// "g cm^-3" and "g/cm ³" meet.
func normalizeUnit(s string) string { return strings.ToLower(unitSpelling.Replace(s)) }

var unitSpelling = strings.NewReplacer(
	" ", "", "^", "", "·", "", "*", "", "⋅", "",
	"³", "3", "²", "2", "⁻", "-", "−", "-", "¹", "1",
	"µ", "u", "μ", "u", "Å", "a", "å", "a",
)

// ErrUnit is returned when a goal gives a unit that is unknown or does not
// measure the property.
var ErrUnit = errors.New("bad unit")

// toCanonical converts v in the unit spelled u to p's canonical unit. An
// empty u means the value is already in the canonical unit.
func toCanonical(p Property, v float64, u string) (float64, error) {
	u = strings.TrimSpace(u)
	if u == "" {
		return v, nil
	}
	if p.Unit == "" {
		return 0, fmt.Errorf("%w: %s is dimensionless, got unit %q", ErrUnit, p.Name, u)
	}
	def, ok := units[normalizeUnit(u)]
	if !ok {
		return 0, fmt.Errorf("%w: unknown unit %q for %s (in %s)", ErrUnit, u, p.Name, p.Unit)
	}
	if def.canonical != p.Unit {
		return 0, fmt.Errorf("%w: %q does not measure %s (in %s)", ErrUnit, u, p.Name, p.Unit)
	}
	return v * def.mul / def.div, nil
}

// unique returns the distinct strings of s in their first order.
func unique(s []string) []string {
	seen := make(map[string]bool, len(s))
	out := make([]string, 0, len(s))
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
