package evolve

import (
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// The chemistry the operators share: which elements may stand on cation and
// anion sites, ionic radii, closed shells, similarity of two ions, and how
// well ions fit a prototype's sites.

// ion is an element in one oxidation state.
type ion struct {
	el crystal.Element
	q  int
}

// cationLike reports whether e may occupy a cation site of an ionic solid:
// a metal, or one of the metalloids whose oxides are network or layered
// solids (B, Si, Ge, As, Sb, Te). C, N, P, S, Se and the halogens in
// positive states form molecular anions (carbonate, nitrate, phosphate,
// sulfate), which the single-anion prototypes cannot hold.
func cationLike(e crystal.Element) bool {
	switch e.Symbol() {
	case "B", "Si", "Ge", "As", "Sb", "Te":
		return true
	}
	return e.IsMetal()
}

// anionLike reports whether e may occupy the anion site: the nonmetals and
// heavier pnictogens that form monatomic anions (carbides, nitrides,
// oxides, fluorides, phosphides, sulfides, chlorides, arsenides,
// selenides, bromides, antimonides, tellurides, iodides). Hydrides are left
// out: H⁻ and H⁺ compounds are not in the prototypes' chemistry.
func anionLike(e crystal.Element) bool {
	switch e.Symbol() {
	case "C", "N", "O", "F", "P", "S", "Cl", "As", "Se", "Br", "Sb", "Te", "I":
		return true
	}
	return false
}

// radioactive reports elements without a stable isotope (Tc, Pm, Po and
// heavier), which no discovery of a usable material proposes.
func radioactive(e crystal.Element) bool {
	return e.Symbol() == "Tc" || e.Symbol() == "Pm" || e.Z() >= 84
}

// palette returns the elements the chemistry operators may introduce: not
// noble gases, not hydrogen, not radioactive, and allowed by allows.
func palette(allows func(crystal.Element) bool) []crystal.Element {
	var out []crystal.Element
	for _, e := range crystal.Elements() {
		if e.Group() == 18 || e.Symbol() == "H" || radioactive(e) {
			continue
		}
		if allows != nil && !allows(e) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// cationStates are e's common positive oxidation states: an assignment of
// common states that balances passes the validity check as ionic.
func cationStates(e crystal.Element) []int {
	if !cationLike(e) {
		return nil
	}
	var out []int
	for _, q := range e.CommonOxidationStates() {
		if q > 0 {
			out = append(out, q)
		}
	}
	return out
}

// anionState is e's common negative oxidation state (the most negative
// one), and ok false when it has none or may not be an anion.
func anionState(e crystal.Element) (int, bool) {
	if !anionLike(e) {
		return 0, false
	}
	best := 0
	for _, q := range e.CommonOxidationStates() {
		if q < best {
			best = q
		}
	}
	return best, best < 0
}

// hasState reports whether q is one of e's common oxidation states and e
// may take a site of that sign.
func hasState(e crystal.Element, q int) bool {
	if q > 0 {
		return slices.Contains(cationStates(e), q)
	}
	a, ok := anionState(e)
	return ok && a == q
}

// radius returns the Shannon ionic radius (Å) of e in state q at the
// given coordination (nearest tabulated coordination when that one is
// not), and ok false when e has no radius for q.
func radius(e crystal.Element, q int, coordination string) (float64, bool) {
	r, ok := e.IonicRadius(q, coordination)
	return r, ok && r > 0
}

// closedShell reports whether the ion has an empty or full d (or f) shell:
// s- and p-block ions, d⁰ and d¹⁰ ions (Sc³⁺, Ti⁴⁺, Zn²⁺, Ga³⁺, Cu⁺),
// f⁰ and f¹⁴ ions (La³⁺, Ce⁴⁺, Lu³⁺). Wide-gap insulators are made of
// closed-shell ions; partly filled d and f shells put states in the gap (and
// give the small gaps of transition-metal oxides in PBE, on which the
// surrogates were trained).
func closedShell(e crystal.Element, q int) bool {
	z := e.Z()
	switch {
	case z >= 57 && z <= 71:
		f := z - 54 - q
		return f == 0 || f == 14
	case z >= 89:
		f := z - 86 - q
		return f == 0 || f == 14
	case e.Block() == 'd':
		d := e.Group() - q
		return d == 0 || d == 10
	}
	return true
}

// gaussian is exp(−x²/2).
func gaussian(x float64) float64 { return math.Exp(-0.5 * x * x) }

// radiusSimilarity compares two radii: exp(−½ (Δr/(σ r))²), 1 for equal
// radii, 0.61 at a relative difference of σ.
func radiusSimilarity(r, r2, sigma float64) float64 {
	if r <= 0 || r2 <= 0 {
		return 0
	}
	return gaussian((r2 - r) / (sigma * r))
}

// ionSimilarity is the chemical similarity of replacing a by b at a site of
// the given coordination: a Gaussian kernel on the relative difference of
// Shannon radii (σr) times one on the difference of Pauling
// electronegativities (σχ). Size and electronegativity are the two
// descriptors of Goldschmidt's rules for isomorphous substitution (radii
// within ~15 %, similar bond character).
func ionSimilarity(a, b ion, coordination string, sigmaR, sigmaX float64) float64 {
	ra, ok1 := radius(a.el, a.q, coordination)
	rb, ok2 := radius(b.el, b.q, coordination)
	if !ok1 || !ok2 {
		return 0
	}
	s := radiusSimilarity(ra, rb, sigmaR)
	if sigmaX > 0 {
		s *= gaussian((a.el.X() - b.el.X()) / sigmaX)
	}
	return s
}

// coordinationNumber converts a Roman numeral ("VI", "XII") to a number.
func coordinationNumber(s string) int {
	values := map[byte]int{'I': 1, 'V': 5, 'X': 10}
	n := 0
	for i := 0; i < len(s); i++ {
		v := values[s[i]]
		if i+1 < len(s) && values[s[i+1]] > v {
			n -= v
		} else {
			n += v
		}
	}
	return n
}

// radiusRatioWindow is the range of r_cation / r_anion in which Pauling's
// first rule (Pauling, J. Am. Chem. Soc. 51, 1010 (1929)) predicts a
// cation's coordination: the cation touches all its anions and the anions
// do not overlap. 0.225–0.414 tetrahedral, 0.414–0.732 octahedral,
// 0.732–1 cubic; 12-fold for larger cations.
func radiusRatioWindow(cn int) (lo, hi float64) {
	switch {
	case cn <= 3:
		return 0.155, 0.225
	case cn == 4:
		return 0.225, 0.414
	case cn <= 6:
		return 0.414, 0.732
	case cn <= 8:
		return 0.732, 1.0
	}
	return 1.0, 1.4
}

// windowFit is 1 inside [lo, hi] and falls off as a Gaussian of width
// sigma outside: the radius-ratio rules are tendencies (BaO is rock salt at
// r+/r− = 0.96, ZnO tetrahedral at 0.43), not laws.
func windowFit(x, lo, hi, sigma float64) float64 {
	switch {
	case x < lo:
		return gaussian((lo - x) / sigma)
	case x > hi:
		return gaussian((x - hi) / sigma)
	}
	return 1
}

// Perovskite limits: Goldschmidt's tolerance factor
// t = (r_A + r_X)/(√2 (r_B + r_X)) (Naturwiss. 14, 477 (1926)) and the
// octahedral factor μ = r_B/r_X. Formable oxide and halide perovskites have
// 0.8 ≲ t ≲ 1.06 and 0.41 ≲ μ ≲ 0.90 (Li et al., Acta Cryst. B64, 702
// (2008)); cubic ones 0.9 ≲ t ≲ 1.0.
const (
	minTolerance, maxTolerance = 0.80, 1.06
	minOctahedral              = 0.41
	maxOctahedral              = 0.90
)

// toleranceFactor returns t and μ for A, B in the perovskite with anion X,
// with A at coordination XII and B, X at VI; ok is false when a radius is
// missing.
func toleranceFactor(a, b, x ion) (t, mu float64, ok bool) {
	ra, ok1 := radius(a.el, a.q, "XII")
	rb, ok2 := radius(b.el, b.q, "VI")
	rx, ok3 := radius(x.el, x.q, "VI")
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false
	}
	return (ra + rx) / (math.Sqrt2 * (rb + rx)), rb / rx, true
}

// siteFit scores, from 0 to 1, how well ions fit the sites of prototype p:
// ions[k] is on p.Sites[k]. For the perovskite it is 0 outside the
// formable ranges of t and μ (widened by 0.05) and otherwise 1 for a cubic
// tolerance factor, 0.88 ≤ t ≤ 1.02, falling off with σ = 0.03 outside it
// (the library's perovskite is the cubic aristotype, which distorts or
// gives way to other structures away from t ≈ 1), times the μ fit. For the
// other types it is the product over cation sites of the radius-ratio fit
// at the site's coordination (σ = 0.12). Ions without a tabulated radius
// count as a fair fit (0.5): nothing is known against them.
func siteFit(p *crystal.Prototype, ions []ion) float64 {
	anion := -1
	for k, s := range p.Sites {
		if s.Role == crystal.Anion {
			anion = k
		}
	}
	if anion < 0 || len(ions) != len(p.Sites) {
		return 0.5
	}
	x := ions[anion]
	if p.Name == "perovskite" {
		t, mu, ok := toleranceFactor(ions[0], ions[1], x)
		if !ok {
			return 0.5
		}
		if t < minTolerance-0.05 || t > maxTolerance+0.05 || mu < minOctahedral-0.05 || mu > maxOctahedral+0.05 {
			return 0
		}
		return windowFit(t, 0.88, 1.02, 0.03) * windowFit(mu, minOctahedral, maxOctahedral, 0.05)
	}
	rx, ok := radius(x.el, x.q, "VI")
	if !ok {
		return 0.5
	}
	fit := 1.0
	for k, s := range p.Sites {
		if s.Role != crystal.Cation {
			continue
		}
		r, ok := radius(ions[k].el, ions[k].q, s.Coordination)
		if !ok {
			fit *= 0.5
			continue
		}
		lo, hi := radiusRatioWindow(coordinationNumber(s.Coordination))
		fit *= windowFit(r/rx, lo, hi, 0.12)
	}
	return fit
}

// pairwiseDistinct reports whether the ions have distinct elements.
func pairwiseDistinct(ions []ion) bool {
	for i := range ions {
		for j := i + 1; j < len(ions); j++ {
			if ions[i].el == ions[j].el {
				return false
			}
		}
	}
	return true
}

// paulingOrdered reports whether every cation is less electronegative than
// every anion (SMACT's electronegativity test, which validation applies to
// ionic assignments).
func paulingOrdered(ions []ion) bool {
	maxCation, minAnion := 0.0, math.Inf(1)
	for _, in := range ions {
		x := in.el.X()
		if in.q > 0 && x > maxCation {
			maxCation = x
		}
		if in.q < 0 && x < minAnion {
			minAnion = x
		}
	}
	return maxCation < minAnion
}

// Valence ladders of each period for the Grimm–Sommerfeld (isoelectronic)
// series: one step along a ladder changes the valence-electron count by
// one (Si → AlP → MgS → NaCl; Ge → GaAs → ZnSe → CuBr). Periods 4–6 have
// two ladders, the s/d⁰ one (K Ca Sc Ti V Cr) and the d¹⁰ one (Cu Zn Ga Ge
// As Se Br), so closed d shells stay closed.
var valenceLadders = [][]string{
	{"Li", "Be", "B", "C", "N", "O", "F"},
	{"Na", "Mg", "Al", "Si", "P", "S", "Cl"},
	{"K", "Ca", "Sc", "Ti", "V", "Cr", "Mn"},
	{"Cu", "Zn", "Ga", "Ge", "As", "Se", "Br"},
	{"Rb", "Sr", "Y", "Zr", "Nb", "Mo"},
	{"Ag", "Cd", "In", "Sn", "Sb", "Te", "I"},
	{"Cs", "Ba", "La", "Hf", "Ta", "W", "Re"},
	{"Au", "Hg", "Tl", "Pb", "Bi"},
}

// ladderStep returns the element one step along e's valence ladder (step
// +1 or −1), and ok false at the ends or for elements on no ladder.
func ladderStep(e crystal.Element, step int) (crystal.Element, bool) {
	sym := e.Symbol()
	for _, l := range valenceLadders {
		if i := slices.Index(l, sym); i >= 0 {
			j := i + step
			if j < 0 || j >= len(l) {
				return 0, false
			}
			return crystal.MustElement(l[j]), true
		}
	}
	return 0, false
}
