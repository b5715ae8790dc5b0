package surrogate

import (
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// subshell is one nl subshell of the Madelung (aufbau) filling order.
type subshell struct {
	n, l int // l: 0 s, 1 p, 2 d, 3 f
}

// madelung is the order in which subshells fill (the n + l rule, ties by
// n), far enough for Z ≤ 118.
var madelung = []subshell{
	{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {4, 0}, {3, 2}, {4, 1}, {5, 0},
	{4, 2}, {5, 1}, {6, 0}, {4, 3}, {5, 2}, {6, 1}, {7, 0}, {5, 3}, {6, 2}, {7, 1},
}

// configException moves electrons between subshells of the aufbau
// configuration to give the measured ground state (NIST Atomic Spectra
// Database, ground levels): e.g. Cr is 3d⁵4s¹, not 3d⁴4s².
type configException struct {
	from, to subshell
	count    int
}

var configExceptions = map[int][]configException{
	24: {{subshell{4, 0}, subshell{3, 2}, 1}}, // Cr 3d5 4s1
	29: {{subshell{4, 0}, subshell{3, 2}, 1}}, // Cu 3d10 4s1
	41: {{subshell{5, 0}, subshell{4, 2}, 1}}, // Nb 4d4 5s1
	42: {{subshell{5, 0}, subshell{4, 2}, 1}}, // Mo 4d5 5s1
	44: {{subshell{5, 0}, subshell{4, 2}, 1}}, // Ru 4d7 5s1
	45: {{subshell{5, 0}, subshell{4, 2}, 1}}, // Rh 4d8 5s1
	46: {{subshell{5, 0}, subshell{4, 2}, 2}}, // Pd 4d10
	47: {{subshell{5, 0}, subshell{4, 2}, 1}}, // Ag 4d10 5s1
	57: {{subshell{4, 3}, subshell{5, 2}, 1}}, // La 5d1 6s2
	58: {{subshell{4, 3}, subshell{5, 2}, 1}}, // Ce 4f1 5d1 6s2
	64: {{subshell{4, 3}, subshell{5, 2}, 1}}, // Gd 4f7 5d1 6s2
	78: {{subshell{6, 0}, subshell{5, 2}, 1}}, // Pt 5d9 6s1
	79: {{subshell{6, 0}, subshell{5, 2}, 1}}, // Au 5d10 6s1
	89: {{subshell{5, 3}, subshell{6, 2}, 1}}, // Ac 6d1 7s2
	90: {{subshell{5, 3}, subshell{6, 2}, 2}}, // Th 6d2 7s2
	91: {{subshell{5, 3}, subshell{6, 2}, 1}}, // Pa 5f2 6d1 7s2
	92: {{subshell{5, 3}, subshell{6, 2}, 1}}, // U 5f3 6d1 7s2
	93: {{subshell{5, 3}, subshell{6, 2}, 1}}, // Np 5f4 6d1 7s2
}

// configuration returns the ground-state electron configuration of the
// neutral atom with z electrons as occupations by subshell.
func configuration(z int) map[subshell]int {
	occ := make(map[subshell]int)
	left := z
	for _, s := range madelung {
		if left == 0 {
			break
		}
		k := min(left, 2*(2*s.l+1))
		occ[s] = k
		left -= k
	}
	for _, x := range configExceptions[z] {
		occ[x.from] -= x.count
		occ[x.to] += x.count
	}
	return occ
}

// nobleCore is the atomic number of the noble gas whose configuration is
// the core of element z: the heaviest noble gas lighter than z.
func nobleCore(z int) int {
	core := 0
	for _, g := range []int{2, 10, 18, 36, 54, 86} {
		if g < z {
			core = g
		}
	}
	return core
}

// Valence counts the electrons outside the noble-gas core of an element by
// orbital type, as Magpie's NsValence … NfValence do (Ward et al., npj
// Comput. Mater. 2, 16028 (2016)): filled d and f shells beyond the core
// count, so Ga has s 2, p 1, d 10 and Pb has s 2, p 2, d 10, f 14.
// Unfilled counts the empty states of the partly filled valence subshells
// (Magpie's NUnfilled).
type Valence struct {
	S, P, D, F int
	Unfilled   int
}

// Total is the number of valence electrons.
func (v Valence) Total() int { return v.S + v.P + v.D + v.F }

// ValenceOf returns the valence electrons of e from its ground-state
// configuration (aufbau order with the measured exceptions, Cr, Cu, Nb,
// Mo, Ru, Rh, Pd, Ag, La, Ce, Gd, Pt, Au, Ac, Th, Pa, U, Np).
func ValenceOf(e crystal.Element) Valence {
	occ := configuration(e.Z())
	core := configuration(nobleCore(e.Z()))
	var v Valence
	for s, k := range occ {
		k -= core[s]
		if k <= 0 {
			continue
		}
		switch s.l {
		case 0:
			v.S += k
		case 1:
			v.P += k
		case 2:
			v.D += k
		case 3:
			v.F += k
		}
		if c := 2 * (2*s.l + 1); k < c {
			v.Unfilled += c - k
		}
	}
	return v
}

// elementProps are the elemental properties whose composition-weighted
// statistics make the Magpie-style descriptors, in feature order.
var elementProps = []struct {
	name string
	of   func(crystal.Element) float64
}{
	{"Z", func(e crystal.Element) float64 { return float64(e.Z()) }},
	{"mass", crystal.Element.Mass},
	{"period", func(e crystal.Element) float64 { return float64(e.Period()) }},
	{"group", func(e crystal.Element) float64 { return float64(e.Group()) }},
	{"electronegativity", crystal.Element.X},
	{"covalent_radius", crystal.Element.CovalentRadius},
	{"ionic_radius", commonIonRadius},
	{"valence_s", func(e crystal.Element) float64 { return float64(ValenceOf(e).S) }},
	{"valence_p", func(e crystal.Element) float64 { return float64(ValenceOf(e).P) }},
	{"valence_d", func(e crystal.Element) float64 { return float64(ValenceOf(e).D) }},
	{"valence_f", func(e crystal.Element) float64 { return float64(ValenceOf(e).F) }},
	{"valence", func(e crystal.Element) float64 { return float64(ValenceOf(e).Total()) }},
	{"unfilled", func(e crystal.Element) float64 { return float64(ValenceOf(e).Unfilled) }},
	{"common_oxidation", func(e crystal.Element) float64 { return float64(commonOxidation(e)) }},
}

// ionicRadiusProp is the index of ionic_radius in elementProps.
var ionicRadiusProp = func() int {
	for i, p := range elementProps {
		if p.name == "ionic_radius" {
			return i
		}
	}
	panic("no ionic_radius property")
}()

// commonOxidation is the element's first common oxidation state (pymatgen's
// list; the most frequent one for most elements), 0 when it has none.
func commonOxidation(e crystal.Element) int {
	if s := e.CommonOxidationStates(); len(s) > 0 {
		// For elements that are both (H −1/+1, C −4/+4, N −3/+3/+5) the list
		// starts with the anion; a cation state is more usual in the
		// compounds here only for H, whose +1 we take.
		if e.Symbol() == "H" {
			return 1
		}
		return s[0]
	}
	return 0
}

// commonIonRadius is Shannon's effective ionic radius (Å) of the element in
// its common oxidation state in six-fold coordination (the nearest
// tabulated coordination otherwise); the covalent radius where no positive
// radius is tabulated for that state (H⁺'s is negative), so the property is
// a positive length for every element.
func commonIonRadius(e crystal.Element) float64 {
	q := commonOxidation(e)
	if q != 0 {
		if r, ok := e.IonicRadius(q, "VI"); ok && r > 0 {
			return r
		}
	}
	return e.CovalentRadius()
}

// elementTableCache holds elementProps evaluated for every element.
var elementTableCache = func() [crystal.MaxZ + 1][]float64 {
	var t [crystal.MaxZ + 1][]float64
	for z := 1; z <= crystal.MaxZ; z++ {
		e := crystal.Element(z)
		row := make([]float64, len(elementProps))
		for i, p := range elementProps {
			row[i] = p.of(e)
		}
		t[z] = row
	}
	return t
}()

// supported reports whether the descriptors are defined for e: every
// element but He, Ne and Ar, which have no Pauling electronegativity.
func supported(e crystal.Element) bool {
	_, ok := e.Electronegativity()
	return e.Valid() && ok
}
