package crystal

import (
	"fmt"
	"strings"
)

// Element is a chemical element identified by its atomic number Z (1–94).
// The zero value is not an element; use ElementBySymbol or ElementByZ.
type Element uint8

// MaxZ is the heaviest element Crucible knows (plutonium).
const MaxZ = 94

// ShannonRadius is one row of Shannon's table of effective ionic radii
// (Shannon, Acta Cryst. A32, 751 (1976)), in Å.
type ShannonRadius struct {
	Charge       int
	Coordination string // Roman numeral, e.g. "VI"; "IVSQ" for square planar
	Spin         string // "High Spin", "Low Spin" or ""
	Crystal      float64
	Ionic        float64
}

type elementData struct {
	Z                     int
	Symbol, Name          string
	Mass                  float64 // standard atomic weight, u
	Group, Period         int
	Block                 byte    // 's', 'p', 'd' or 'f'
	X                     float64 // Pauling electronegativity; 0 when undefined (He, Ne, Ar)
	CommonOxidationStates []int
	OxidationStates       []int
	ICSDOxidationStates   []int
	CovalentRadius        float64 // Å, Cordero et al. 2008
	MetallicRadius        float64 // Å, 0 when not tabulated
	AtomicRadius          float64 // Å (Slater), 0 when not tabulated
	ShannonRadii          []ShannonRadius
}

// crustalAbundance is the abundance of each element in the Earth's
// continental crust in mg/kg (ppm by mass), from the CRC Handbook of
// Chemistry and Physics, 97th ed., "Abundance of Elements in the Earth's
// Crust and in the Sea". Elements with no stable isotope and no measurable
// natural abundance are 0.
var crustalAbundance = [MaxZ + 1]float64{
	0,
	1.40e3, 8e-3, 20, 2.8, 10, 200, 19, 4.61e5, 585, 5e-3, // H–Ne
	2.36e4, 2.33e4, 8.23e4, 2.82e5, 1.05e3, 350, 145, 3.5, // Na–Ar
	2.09e4, 4.15e4, 22, 5.65e3, 120, 102, 950, 5.63e4, 25, 84, 60, 70, // K–Zn
	19, 1.5, 1.8, 0.05, 2.4, 1e-4, // Ga–Kr
	90, 370, 33, 165, 20, 1.2, 0, 1e-3, 1e-3, 1.5e-2, 7.5e-2, 0.15, // Rb–Cd
	0.25, 2.3, 0.2, 1e-3, 0.45, 3e-5, // In–Xe
	3, 425, 39, 66.5, 9.2, 41.5, 0, 7.05, 2.0, 6.2, 1.2, 5.2, 1.3, 3.5, 0.52, 3.2, 0.8, // Cs–Lu
	3.0, 2.0, 1.25, 7e-4, 1.5e-3, 1e-3, 5e-3, 4e-3, 8.5e-2, // Hf–Hg
	0.85, 14, 8.5e-3, 2e-10, 0, 4e-13, // Tl–Rn
	0, 9e-7, 5.5e-10, 9.6, 1.4e-6, 2.7, 0, 0, // Fr–Pu
}

// EarthAbundanceThreshold is the crustal abundance (mg/kg) at or above which
// an element counts as earth-abundant. 1 ppm admits Sn, Ge, Mo and W (the
// elements of "earth-abundant" absorbers such as Cu2ZnSnS4) and excludes In,
// Te, Se and the platinum-group metals, the usual reading in photovoltaics.
const EarthAbundanceThreshold = 1.0

// toxicElements are the elements LLEMA's "Toxic-Free Perovskite Oxides" task
// excludes (LLEMA App. C: Pb, Cd, Hg, Tl, Be, As, Sb, Se, U, Th), plus Te
// (toxic and the reason CdTe absorbers are not called non-toxic) and the
// remaining radioactive elements (Tc, Pm, Po–Pu).
var toxicElements = map[string]bool{
	"Pb": true, "Cd": true, "Hg": true, "Tl": true, "Be": true, "As": true,
	"Sb": true, "Se": true, "U": true, "Th": true, "Te": true,
	"Tc": true, "Pm": true, "Po": true, "At": true, "Rn": true, "Fr": true,
	"Ra": true, "Ac": true, "Pa": true, "Np": true, "Pu": true,
}

var symbolToZ = func() map[string]Element {
	m := make(map[string]Element, MaxZ)
	for z := 1; z <= MaxZ; z++ {
		m[elementTable[z].Symbol] = Element(z)
	}
	return m
}()

// ElementBySymbol returns the element with the given symbol ("Fe"); the
// match is case-sensitive, as chemical symbols are.
func ElementBySymbol(symbol string) (Element, error) {
	if e, ok := symbolToZ[symbol]; ok {
		return e, nil
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownElement, symbol)
}

// ElementByZ returns the element with atomic number z.
func ElementByZ(z int) (Element, error) {
	if z < 1 || z > MaxZ {
		return 0, fmt.Errorf("%w: atomic number %d outside 1–%d", ErrUnknownElement, z, MaxZ)
	}
	return Element(z), nil
}

// MustElement returns the element with the given symbol and panics if there
// is none. For constant symbols in code and tests only.
func MustElement(symbol string) Element {
	e, err := ElementBySymbol(symbol)
	if err != nil {
		panic(err)
	}
	return e
}

// Valid reports whether e is one of the elements 1–94.
func (e Element) Valid() bool { return e >= 1 && e <= MaxZ }

func (e Element) data() *elementData {
	if !e.Valid() {
		return &elementTable[0]
	}
	return &elementTable[e]
}

// Z is the atomic number.
func (e Element) Z() int { return int(e) }

// Symbol is the chemical symbol, e.g. "Fe".
func (e Element) Symbol() string { return e.data().Symbol }

// String returns the symbol.
func (e Element) String() string {
	if !e.Valid() {
		return fmt.Sprintf("Element(%d)", int(e))
	}
	return e.Symbol()
}

// Name is the English name, e.g. "Iron".
func (e Element) Name() string { return e.data().Name }

// Mass is the standard atomic weight in unified atomic mass units.
func (e Element) Mass() float64 { return e.data().Mass }

// Group is the IUPAC group 1–18; lanthanides and actinides are in group 3.
func (e Element) Group() int { return e.data().Group }

// Period is the row of the periodic table, 1–7.
func (e Element) Period() int { return e.data().Period }

// Block is 's', 'p', 'd' or 'f'.
func (e Element) Block() byte { return e.data().Block }

// Electronegativity is the Pauling electronegativity, and ok is false for
// the elements that have none (He, Ne, Ar).
func (e Element) Electronegativity() (x float64, ok bool) {
	x = e.data().X
	return x, x > 0
}

// X is the Pauling electronegativity, 0 where none is defined.
func (e Element) X() float64 { return e.data().X }

// CommonOxidationStates are the oxidation states the element usually takes.
func (e Element) CommonOxidationStates() []int { return e.data().CommonOxidationStates }

// OxidationStates are all known oxidation states.
func (e Element) OxidationStates() []int { return e.data().OxidationStates }

// ICSDOxidationStates are the oxidation states observed in the Inorganic
// Crystal Structure Database.
func (e Element) ICSDOxidationStates() []int { return e.data().ICSDOxidationStates }

// ShannonRadii lists every tabulated effective ionic radius of the element.
func (e Element) ShannonRadii() []ShannonRadius { return e.data().ShannonRadii }

// IonicRadius returns Shannon's effective ionic radius (Å) for the given
// charge and coordination (Roman numeral, e.g. "VI"). When the coordination
// is not tabulated the nearest tabulated one is used; high spin is preferred
// over low spin. ok is false when the charge has no radius at all.
func (e Element) IonicRadius(charge int, coordination string) (r float64, ok bool) {
	want := romanCoordination(coordination)
	best, bestDiff := 0.0, 1<<30
	cns := shannonCN[e.data().Z]
	for i, s := range e.data().ShannonRadii {
		if s.Charge != charge {
			continue
		}
		diff := cns[i] - want
		if diff < 0 {
			diff = -diff
		}
		diff *= 2
		if s.Spin == "Low Spin" {
			diff++ // prefer high spin at equal coordination
		}
		if diff < bestDiff {
			best, bestDiff = s.Ionic, diff
		}
	}
	return best, bestDiff != 1<<30
}

// shannonCN holds the coordination numbers of each element's Shannon
// radii, parsed once.
var shannonCN = func() [MaxZ + 1][]int {
	var out [MaxZ + 1][]int
	for z := 1; z <= MaxZ; z++ {
		rs := elementTable[z].ShannonRadii
		out[z] = make([]int, len(rs))
		for i, s := range rs {
			out[z][i] = romanCoordination(s.Coordination)
		}
	}
	return out
}()

// romanCoordination converts "VI", "IVSQ", "IVPY", "IIIPY" etc. to a number.
func romanCoordination(s string) int {
	values := func(c byte) int {
		switch c {
		case 'I':
			return 1
		case 'V':
			return 5
		case 'X':
			return 10
		}
		return 0
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "SQ"), "PY")
	n := 0
	for i := 0; i < len(s); i++ {
		v := values(s[i])
		if i+1 < len(s) && values(s[i+1]) > v {
			n -= v
		} else {
			n += v
		}
	}
	return n
}

// CovalentRadius in Å (Cordero et al. 2008).
func (e Element) CovalentRadius() float64 { return e.data().CovalentRadius }

// MetallicRadius in Å, and ok false where none is tabulated.
func (e Element) MetallicRadius() (r float64, ok bool) {
	r = e.data().MetallicRadius
	return r, r > 0
}

// AtomicRadius is Slater's empirical atomic radius in Å, 0 where unknown.
func (e Element) AtomicRadius() float64 { return e.data().AtomicRadius }

// CrustalAbundance is the abundance in the Earth's crust in mg/kg.
func (e Element) CrustalAbundance() float64 {
	if !e.Valid() {
		return 0
	}
	return crustalAbundance[e]
}

// EarthAbundant reports whether the crustal abundance is at least
// EarthAbundanceThreshold.
func (e Element) EarthAbundant() bool { return e.CrustalAbundance() >= EarthAbundanceThreshold }

// Toxic reports whether the element is toxic or radioactive enough that a
// "non-toxic" material must not contain it.
func (e Element) Toxic() bool { return toxicElements[e.Symbol()] }

// IsMetal reports whether the element is a metal in the usual chemical sense:
// everything except H, the noble gases, and the nonmetals and metalloids
// B, C, N, O, F, Si, P, S, Cl, Ge, As, Se, Br, Sb, Te, I and At.
func (e Element) IsMetal() bool {
	switch e.Symbol() {
	case "H", "He", "Ne", "Ar", "Kr", "Xe", "Rn",
		"B", "C", "N", "O", "F", "Si", "P", "S", "Cl",
		"Ge", "As", "Se", "Br", "Sb", "Te", "I", "At":
		return false
	}
	return e.Valid()
}

// Elements returns all elements in order of atomic number.
func Elements() []Element {
	out := make([]Element, MaxZ)
	for i := range out {
		out[i] = Element(i + 1)
	}
	return out
}
