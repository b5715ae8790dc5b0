package crystal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrPrototypeMismatch is returned when a composition does not fit a
// prototype: wrong number of elements, wrong stoichiometry, or no anion
// where the prototype needs one.
var ErrPrototypeMismatch = errors.New("composition does not fit prototype")

// ErrUnknownPrototype is returned for a prototype name that is not in the
// library.
var ErrUnknownPrototype = errors.New("unknown prototype")

// SiteRole says whether a prototype site holds cations or anions.
type SiteRole int

const (
	// Cation sites take the less electronegative elements.
	Cation SiteRole = iota + 1
	// Anion sites take the most electronegative element.
	Anion
)

// String returns "cation" or "anion".
func (r SiteRole) String() string {
	switch r {
	case Cation:
		return "cation"
	case Anion:
		return "anion"
	}
	return fmt.Sprintf("SiteRole(%d)", int(r))
}

// PrototypeSite is one crystallographic site of a prototype.
type PrototypeSite struct {
	// Label is the site's letter in the stoichiometry ("A", "B", "X").
	Label string
	Role  SiteRole
	// Count is the number of atoms of the site per formula unit.
	Count int
	// Coordination is the site's coordination number as a Roman numeral
	// ("VI"), the key of Shannon's radii.
	Coordination string
}

// Prototype is a structure type that a composition can be poured into.
// Its fields are read-only.
type Prototype struct {
	// Name is the stable identifier: "rocksalt", "cscl", "zincblende",
	// "wurtzite", "fluorite", "antifluorite", "rutile", "perovskite",
	// "spinel", "corundum", "nias", "cdi2", "nafeo2".
	Name string
	// CommonName is the usual name with its archetype, "rock salt (NaCl)".
	CommonName string
	// Strukturbericht is the Strukturbericht designation ("B1"), empty where
	// there is none.
	Strukturbericht string
	// SpaceGroup is the Hermann–Mauguin symbol and number, "Fm-3m (225)".
	SpaceGroup string
	// Stoichiometry is the anonymous formula with cation letters A, B and
	// anion letter X: "AX", "AX2", "A2X3", "ABX3", "AB2X4".
	Stoichiometry string
	// Sites lists the sites, cations first.
	Sites []PrototypeSite
	// Intermetallic reports that compositions of metals only are accepted
	// too (the most electronegative metal on the "anion" site).
	Intermetallic bool
	// FormulaUnits is the number of formula units in the built cell.
	FormulaUnits int

	build func(r []float64) (protoCell, error)
}

// protoCell is a built prototype cell: lattice, positions of each site's
// atoms, and the parameters used.
type protoCell struct {
	lattice Lattice
	frac    [][]Vec3 // by prototype site
	params  map[string]float64
}

// Built is a structure made from a prototype and a composition.
type Built struct {
	Prototype *Prototype
	// Structure is the primitive cell (FormulaUnits formula units): the
	// conventional cell of the primitive lattices, the primitive
	// rhombohedral or face-centred cell otherwise.
	Structure *Structure
	// Elements holds the element on each prototype site, in Sites order.
	Elements []Element
	// Radii are the radii (Å) used for each site.
	Radii []float64
	// RadiusKind is "ionic" (Shannon radii of the oxidation states at the
	// site's coordination), "covalent" (Cordero) or "metallic" (CN-12
	// metallic radii corrected for coordination).
	RadiusKind string
	// Oxidation is the assignment behind ionic radii; nil otherwise.
	Oxidation *OxidationAssignment
	// Parameters are the lattice parameters of the conventional cell, "a"
	// (and "c") in Å, and the internal coordinates "u", "x", "z" where the
	// type has them.
	Parameters map[string]float64
	// ToleranceFactor is Goldschmidt's t = (r_A + r_X) / (√2 (r_B + r_X))
	// for the perovskite (stable cubic perovskites have 0.9 ≲ t ≲ 1.0), and
	// 0 for the other types.
	ToleranceFactor float64
}

// Prototypes returns the library, in a fixed order. The returned values
// share their Sites slices with the library: do not modify them.
func Prototypes() []*Prototype {
	out := make([]*Prototype, len(prototypeLibrary))
	for i := range prototypeLibrary {
		p := prototypeLibrary[i]
		out[i] = &p
	}
	return out
}

// PrototypeByName returns the prototype with the given Name.
func PrototypeByName(name string) (*Prototype, error) {
	for i := range prototypeLibrary {
		if prototypeLibrary[i].Name == name {
			p := prototypeLibrary[i]
			return &p, nil
		}
	}
	names := make([]string, len(prototypeLibrary))
	for i := range prototypeLibrary {
		names[i] = prototypeLibrary[i].Name
	}
	return nil, fmt.Errorf("%w %q (have %s)", ErrUnknownPrototype, name, strings.Join(names, ", "))
}

// Matching returns the prototypes that accept c, in library order.
func Matching(c Composition) []*Prototype {
	var out []*Prototype
	for _, p := range Prototypes() {
		if _, err := p.Fit(c); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Fit returns the element for each site of p (in Sites order), or an error
// wrapping ErrPrototypeMismatch saying why c does not fit.
//
// The reduced integer formula of c must have one element per site with the
// site's count. The anion site takes the most electronegative element (a
// composition of metals only fits an Intermetallic prototype, and is
// refused by the others); cation sites are matched by count, and cation
// sites with equal counts by size: the larger cation (Cordero covalent
// radius) goes to the site of higher coordination (the A site of the
// perovskite, the interlayer site of α-NaFeO2).
func (p *Prototype) Fit(c Composition) ([]Element, error) {
	elems, counts, err := integerFormula(c)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrPrototypeMismatch, p.Name, err)
	}
	mismatch := func(format string, args ...any) error {
		return fmt.Errorf("%w %s (%s): %s", ErrPrototypeMismatch, p.Name, p.Stoichiometry, fmt.Sprintf(format, args...))
	}
	name := formulaOf(elems, counts)
	if len(elems) != len(p.Sites) {
		return nil, mismatch("%s has %d elements, the prototype %d sites", name, len(elems), len(p.Sites))
	}
	if allMetals(elems) && !p.Intermetallic {
		return nil, mismatch("%s has no anion (only metals)", name)
	}
	// The anion: most electronegative; ties broken by atomic number.
	anion := 0
	for i, e := range elems {
		if e.X() > elems[anion].X() || (e.X() == elems[anion].X() && e > elems[anion]) {
			anion = i
		}
	}
	out := make([]Element, len(p.Sites))
	used := make([]bool, len(elems))
	var cationSites []int
	for k, s := range p.Sites {
		if s.Role == Anion {
			if counts[anion] != s.Count {
				return nil, mismatch("anion %s has %d atoms per formula unit, site %s needs %d", elems[anion], counts[anion], s.Label, s.Count)
			}
			out[k], used[anion] = elems[anion], true
		} else {
			cationSites = append(cationSites, k)
		}
	}
	// Cation sites by decreasing coordination, cations by decreasing size;
	// each site takes the first unused cation with its count.
	slices.SortStableFunc(cationSites, func(a, b int) int {
		return romanCoordination(p.Sites[b].Coordination) - romanCoordination(p.Sites[a].Coordination)
	})
	cations := make([]int, 0, len(elems))
	for i := range elems {
		if !used[i] {
			cations = append(cations, i)
		}
	}
	// Sizes only decide between cations of equal counts; they cost an
	// oxidation-state assignment, so they are found only when needed.
	if sharedCount(cations, counts) {
		size := cationSizes(elems, counts)
		slices.SortStableFunc(cations, func(a, b int) int {
			ra, rb := size[a], size[b]
			switch {
			case ra > rb:
				return -1
			case ra < rb:
				return 1
			}
			return int(elems[a]) - int(elems[b])
		})
	}
	for _, k := range cationSites {
		found := false
		for _, i := range cations {
			if !used[i] && counts[i] == p.Sites[k].Count {
				out[k], used[i], found = elems[i], true, true
				break
			}
		}
		if !found {
			return nil, mismatch("%s has no cation with %d atoms per formula unit for site %s", name, p.Sites[k].Count, p.Sites[k].Label)
		}
	}
	return out, nil
}

// sharedCount reports whether two of the cations (indices into counts) have
// the same count.
func sharedCount(cations, counts []int) bool {
	for x, i := range cations {
		for _, j := range cations[x+1:] {
			if counts[i] == counts[j] {
				return true
			}
		}
	}
	return false
}

// cationSizes returns a size for each element to order cations by: the
// Shannon radius at coordination VI of its state in the best neutral
// assignment when every element has one, otherwise the covalent radius
// (Cordero et al.).
func cationSizes(elems []Element, counts []int) []float64 {
	size := make([]float64, len(elems))
	items := make([]ElementAmount, len(elems))
	for i, e := range elems {
		items[i] = ElementAmount{e, float64(counts[i])}
		size[i] = e.CovalentRadius()
	}
	c, err := NewComposition(items...)
	if err != nil {
		return size
	}
	a, ok := bestIonicAssignment(c)
	if !ok {
		return size
	}
	ionic := make([]float64, len(elems))
	for i, e := range elems {
		q, _ := a.State(e)
		r, ok := e.IonicRadius(int(q), "VI")
		if !ok || r <= 0 {
			return size
		}
		ionic[i] = r
	}
	return ionic
}

// formulaOf writes elements and counts as a formula in the given order.
func formulaOf(elems []Element, counts []int) string {
	var b strings.Builder
	for i, e := range elems {
		b.WriteString(e.Symbol())
		if counts[i] != 1 {
			fmt.Fprintf(&b, "%d", counts[i])
		}
	}
	return b.String()
}

// BuildAll builds c in every prototype that accepts it. The error joins the
// failures of prototypes that accept c but could not be built; the slice
// holds the rest. A composition no prototype accepts gives neither.
func BuildAll(c Composition) ([]*Built, error) {
	var out []*Built
	var errs []error
	for _, p := range Matching(c) {
		b, err := Build(p, c)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, b)
	}
	return out, errors.Join(errs...)
}

// Build makes the structure of composition c in prototype p, with lattice
// parameters estimated from radii:
//
//   - a composition of metals only uses metallic radii (CN 12, Element.
//     MetallicRadius; covalent where none is tabulated) scaled to the
//     site's coordination with Goldschmidt's factors (0.97 for CN 8, 0.96
//     for CN 6, 0.88 for CN 4; Pauling, The Nature of the Chemical Bond,
//     3rd ed., §11-2);
//   - otherwise the best single-valence neutral assignment of common
//     oxidation states (ICSD states if none) gives Shannon ionic radii at
//     each site's coordination (VI for rock salt, NiAs, corundum and rutile
//     cations, IV for zinc blende and wurtzite, VIII for CsCl and the
//     fluorite cation, XII for the perovskite A site);
//   - where that fails (no neutral assignment, or a radius not tabulated,
//     as for C⁴⁻ in SiC or As³⁻ in GaAs) Cordero covalent radii, which suit
//     the covalent compounds concerned.
//
// Each type then sets its cation–anion bonds to r_cation + r_anion as its
// doc in the library states. The cell is primitive; Supercell gives larger
// ones.
func Build(p *Prototype, c Composition) (*Built, error) {
	if p == nil || p.build == nil {
		return nil, fmt.Errorf("build: %w: nil or foreign prototype", ErrUnknownPrototype)
	}
	elems, err := p.Fit(c)
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", c.ReducedFormula(), err)
	}
	b := &Built{Prototype: p, Elements: elems}
	b.Radii, b.RadiusKind, b.Oxidation = siteRadii(p, elems)
	cell, err := p.build(b.Radii)
	if err != nil {
		return nil, fmt.Errorf("build %s as %s: %w", c.ReducedFormula(), p.Name, err)
	}
	var species []Element
	var frac []Vec3
	for k, pos := range cell.frac {
		for _, f := range pos {
			species = append(species, elems[k])
			frac = append(frac, f)
		}
	}
	s, err := NewStructure(cell.lattice, species, frac)
	if err != nil {
		return nil, fmt.Errorf("build %s as %s: %w", c.ReducedFormula(), p.Name, err)
	}
	b.Structure = s
	b.Parameters = cell.params
	if t, ok := cell.params["t"]; ok {
		b.ToleranceFactor = t
		delete(cell.params, "t")
	}
	return b, nil
}

// goldschmidtFactor scales a CN-12 metallic radius to coordination cn.
func goldschmidtFactor(cn int) float64 {
	switch {
	case cn >= 12:
		return 1
	case cn >= 8:
		return 0.97
	case cn >= 6:
		return 0.96
	}
	return 0.88
}

// siteRadii chooses the radius of each site of p occupied by elems.
func siteRadii(p *Prototype, elems []Element) ([]float64, string, *OxidationAssignment) {
	r := make([]float64, len(elems))
	if allMetals(elems) {
		for k, e := range elems {
			m, ok := e.MetallicRadius()
			if !ok {
				m = e.CovalentRadius()
			}
			r[k] = m * goldschmidtFactor(romanCoordination(p.Sites[k].Coordination))
		}
		return r, "metallic", nil
	}
	if a, ok := ionicAssignment(p, elems); ok {
		ionic := true
		for k, e := range elems {
			q, _ := a.State(e)
			if (p.Sites[k].Role == Anion) != (q < 0) {
				ionic = false
				break
			}
			rad, ok := e.IonicRadius(int(q), p.Sites[k].Coordination)
			if !ok || rad <= 0 {
				ionic = false
				break
			}
			r[k] = rad
		}
		if ionic {
			return r, "ionic", &a
		}
	}
	for k, e := range elems {
		r[k] = e.CovalentRadius()
	}
	return r, "covalent", nil
}

// ionicAssignment returns the best single-valence neutral assignment for
// the elements on the sites of p.
func ionicAssignment(p *Prototype, elems []Element) (OxidationAssignment, bool) {
	items := make([]ElementAmount, len(elems))
	for k, e := range elems {
		items[k] = ElementAmount{e, float64(p.Sites[k].Count)}
	}
	c, err := NewComposition(items...)
	if err != nil {
		return OxidationAssignment{}, false
	}
	return bestIonicAssignment(c)
}

// bestIonicAssignment returns the best single-valence neutral assignment of
// common oxidation states, or of ICSD states when the common ones have
// none; all-metal compositions are analysed as ionic too.
func bestIonicAssignment(c Composition) (OxidationAssignment, bool) {
	for _, set := range []OxidationStateSet{CommonStates, ICSDStates} {
		a, err := AssignOxidationStates(c, OxidationOptions{States: set, NoAlloys: true})
		if err != nil {
			return OxidationAssignment{}, false
		}
		if best, ok := a.Best(); ok {
			return best, true
		}
	}
	return OxidationAssignment{}, false
}
