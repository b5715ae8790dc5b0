package surrogate

import (
	"errors"
	"fmt"
	"slices"
)

// ErrUnknownProperty: no surrogate is defined for the property.
var ErrUnknownProperty = errors.New("no surrogate for property")

// Property describes a property the package trains a surrogate for: what
// the target is, where its data are, and the feature groups of its model
// and of its composition-only baseline.
type Property struct {
	// Name is the canonical property name (pkg/task's registry).
	Name string
	// Unit of the values ("" when dimensionless).
	Unit string
	// Description says what the value is and where the data come from.
	Description string
	// File is the data file in the data directory's tables folder.
	File string
	// Groups are the feature groups of the model.
	Groups []string
	// BaselineGroups are the composition-only baseline's groups.
	BaselineGroups []string
	// MinBandGap, when positive, is the smallest band gap (eV) the model
	// accepts when it takes the gap: below it a static dielectric constant
	// is not defined (metals) and the training data have none.
	MinBandGap float64
	// ZeroIfCentrosymmetric: the property is a component of an odd-rank
	// polar tensor, zero by symmetry in a crystal with an inversion centre.
	ZeroIfCentrosymmetric bool
}

// NeedsStructure reports whether the property's model uses structure
// descriptors.
func (p Property) NeedsStructure() bool { return slices.Contains(p.Groups, GroupStructure) }

var properties = []Property{
	{
		Name: "dielectric_constant",
		Description: "Static (electronic + ionic) dielectric constant κ, the mean of the eigenvalues of the DFPT dielectric tensor " +
			"(poly_total of Petousis et al., Sci. Data 4, 160134 (2017); 1,056 Materials Project compounds, 0 K, PBE).",
		File:           "mp_dielectric_petousis2017.csv",
		Groups:         []string{GroupMagpie, GroupStructure, GroupBandGap},
		BaselineGroups: []string{GroupMagpie},
		MinBandGap:     0.1,
	},
	{
		Name: "piezo_max_dielectric",
		Description: "Largest diagonal element of the static (electronic + ionic) dielectric tensor in the cell frame of the DFPT calculation " +
			"(the largest of e_total_diag, Petousis et al., Sci. Data 4, 160134 (2017); 1,056 Materials Project compounds, 0 K, PBE): " +
			"the largest eigenvalue where the tensor is diagonal in that frame (orthorhombic and higher symmetry), a lower bound of it otherwise.",
		File:           "mp_dielectric_petousis2017.csv",
		Groups:         []string{GroupMagpie, GroupStructure, GroupBandGap},
		BaselineGroups: []string{GroupMagpie},
		MinBandGap:     0.1,
	},
	{
		Name: "piezo_max_eij",
		Unit: "C/m^2",
		Description: "Largest longitudinal piezoelectric stress coefficient, max over directions n of |e_ijk n_i n_j n_k| of the DFPT tensor " +
			"(eij_max of de Jong et al., Sci. Data 2, 150053 (2015), whose v_max is that direction; 941 non-centrosymmetric Materials Project compounds). " +
			"Not the largest Voigt component |e_iα|, which is larger by a median factor 1.66.",
		File:                  "mp_piezo_dejong2015.csv",
		Groups:                []string{GroupMagpie, GroupStructure},
		BaselineGroups:        []string{GroupMagpie},
		ZeroIfCentrosymmetric: true,
	},
	{
		Name: "conductivity",
		Unit: "S/cm",
		Description: "Electrical conductivity near room temperature, from experimental thermoelectric measurements between 280 and 320 K " +
			"(ESTM set of Na & Chang, npj Comput. Mater. 8, 214 (2022)); doped and non-stoichiometric bulk samples, mostly thermoelectric " +
			"chalcogenides and alloys. Composition only: the measurements come without structures.",
		File: "expt_thermoelectric_estm.csv",
		// The oxidation-state descriptors do not help here (5-fold
		// log10 MAE 0.336 with them, 0.318 without; 0.809 vs 0.797 with
		// studies held out) and are slow on doped formulas, whose integer
		// forms are large.
		Groups:         []string{GroupMagpie},
		BaselineGroups: []string{GroupMagpie},
	},
}

// Properties returns the properties with a surrogate, in a fixed order.
func Properties() []Property {
	out := slices.Clone(properties)
	for i := range out {
		out[i].Groups = slices.Clone(out[i].Groups)
		out[i].BaselineGroups = slices.Clone(out[i].BaselineGroups)
	}
	return out
}

// PropertyByName returns the property with a surrogate named name.
func PropertyByName(name string) (Property, error) {
	for _, p := range Properties() {
		if p.Name == name {
			return p, nil
		}
	}
	return Property{}, fmt.Errorf("%w: %q", ErrUnknownProperty, name)
}
