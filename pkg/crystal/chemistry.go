package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// BondingClass names the chemistry a composition is judged by. The names
// are part of Crucible's interface (JSON output, counts): never rename one.
type BondingClass string

const (
	// ClassElement: one element.
	ClassElement BondingClass = "element"
	// ClassIntermetallic: metals only (Element.IsMetal).
	ClassIntermetallic BondingClass = "intermetallic"
	// ClassIonic: metals and non-metals charge-balanced over known
	// oxidation states (the verdict carries the assignment).
	ClassIonic BondingClass = "ionic"
	// ClassPolyanionic: anions bonded to each other take part of the
	// cations' charge: peroxides, superoxides and ozonides, polyhalides,
	// and the anion-rich borides, carbides, silicides, pnictides and
	// chalcogenides of Zintl chemistry (LaB6, CaC2, Cs2Te13, NdP5).
	ClassPolyanionic BondingClass = "polyanionic"
	// ClassMetalRich: metal–metal bonding keeps electrons the anions do not
	// take: interstitial and metal-rich borides, carbides, nitrides,
	// silicides, germanides, pnictides and chalcogenides (FeSi, Mo2C, Hf2S,
	// Ca2N), suboxides (Ti3O, Cs11O3) and reduced halides (Sc7Cl10, LaI2).
	ClassMetalRich BondingClass = "metal_rich"
	// ClassCovalent: non-metals only (B4C, SiC, XeF2, P4S3).
	ClassCovalent BondingClass = "covalent"
)

// Reason codes of the chemistry verdict beside charge_neutrality and
// electronegativity.
const (
	// ReasonElectronCount: a metal-rich, polyanionic or covalent
	// composition whose electrons no bonding picture accounts for: the
	// anions that cannot bond to each other (H, F, isolated anions) need
	// more electrons than the metals can give, or the reverse (NaH2).
	ReasonElectronCount ReasonCode = "electron_count"
	// ReasonImplausibleComposition: element counts no compound has (more
	// than MaxChemistryElements elements, a formula unit of more than
	// MaxFormulaAtoms atoms, an intermetallic of more than
	// MaxIntermetallicElements metals or with one element
	// MaxIntermetallicRatio times another), or a noble gas that forms no
	// compounds (He, Ne, Ar).
	ReasonImplausibleComposition ReasonCode = "implausible_composition"
)

// Sentinels of the chemistry reason codes, for errors.Is.
var (
	ErrElectronCount          = errors.New("electron count unbalanced")
	ErrImplausibleComposition = errors.New("implausible composition")
)

// Plausibility bounds of the chemistry verdict.
const (
	// MaxChemistryElements: no known compound has more distinct elements
	// (the Materials Project's stable phases have at most seven).
	MaxChemistryElements = 8
	// MaxFormulaAtoms bounds the atoms of the reduced integer formula: a
	// formula unit must fit in the largest cell Validate accepts
	// (DefaultMaxAtoms).
	MaxFormulaAtoms = DefaultMaxAtoms
	// MaxIntermetallicElements: five principal elements make the
	// high-entropy alloys (the Cantor alloy CoCrFeMnNi, Cantor et al.,
	// Mater. Sci. Eng. A 375, 213 (2004)); ordered intermetallic phases
	// have at most four.
	MaxIntermetallicElements = 5
	// MaxIntermetallicRatio bounds the ratio of the most to the least
	// abundant metal. The most lopsided ordered intermetallics are near
	// 1:22 (Be22Re, the ZrZn22 type); past 1:30 a composition describes a
	// dilute solid solution, not a compound.
	MaxIntermetallicRatio = 30.0
	// maxBalanceMultiple is the largest multiple of the reduced formula
	// searched for a mixed-valence assignment (PdF3 balances as Pd2F6 =
	// Pd²⁺Pd⁴⁺F₆).
	maxBalanceMultiple = 4
	// smallElectronegativityDifference separates, among compounds of
	// metals with B, C, N, Si, P, S, Ge, As, Se, Sb, Te or H that no ionic
	// assignment balances, the intermetallic-like (FeSi, MoSi2, NiAs:
	// Pauling electronegativities within 0.5 of each other) from the
	// Zintl-like ones.
	smallElectronegativityDifference = 0.5
)

// ChemistryOptions bound the oxidation-state search of JudgeComposition.
// The zero value uses the defaults of OxidationOptions.
type ChemistryOptions struct {
	// MaxAssignments is how many neutral assignments to keep, best first
	// (default DefaultMaxAssignments).
	MaxAssignments int
	// MaxSearchNodes bounds each enumeration (default
	// DefaultMaxSearchNodes).
	MaxSearchNodes int
}

// ChemistryVerdict is the outcome of JudgeComposition.
type ChemistryVerdict struct {
	// Formula is the reduced integer composition judged.
	Formula Composition
	// Class is the bonding class the composition was judged by; set for
	// invalid compositions too (the class whose rules they fail).
	Class BondingClass
	// Valid reports whether the composition satisfies its class's rules.
	Valid bool
	// Assignments are the charge-balanced assignments found, best first
	// (highest ICSD occurrence score, single valence before mixed): set
	// for ionic and covalent compositions that balance, and all states 0
	// for an element or an intermetallic. Ion counts are per
	// formula unit of the assignment, which may be a multiple of Formula
	// for mixed valence (Pd²⁺:1 Pd⁴⁺:1 F⁻:6 for PdF3).
	Assignments []OxidationAssignment
	// Code is empty when Valid, else the failed rule (charge_neutrality,
	// electronegativity, electron_count, implausible_composition).
	Code ReasonCode
	// Detail explains the verdict in words: the class, why, and the
	// assignment or the electron count.
	Detail string
	// Truncated reports that an enumeration hit MaxSearchNodes.
	Truncated bool
}

// Best returns the best assignment, if any.
func (v *ChemistryVerdict) Best() (OxidationAssignment, bool) {
	if len(v.Assignments) == 0 {
		return OxidationAssignment{}, false
	}
	return v.Assignments[0], true
}

// OxidationStates returns the best assignment's mean state per element
// symbol, or nil when there is none.
func (v *ChemistryVerdict) OxidationStates() map[string]float64 {
	if best, ok := v.Best(); ok {
		return best.States()
	}
	return nil
}

// Err returns nil for a valid verdict, else a *ValidityError with its code.
func (v *ChemistryVerdict) Err() error {
	if v.Valid {
		return nil
	}
	return &ValidityError{Code: v.Code, Detail: v.Detail}
}

// JudgeComposition judges a composition by the chemistry it has: it picks
// a bonding class and applies that class's rules. See the package
// documentation, "Chemistry", for the classes, rules and data. The error
// is non-nil only when c is empty or has no small integer formula
// (ErrBadFormula, ErrNonIntegerComposition); a composition no chemistry
// allows is an invalid verdict, not an error.
func JudgeComposition(c Composition, opt ChemistryOptions) (*ChemistryVerdict, error) {
	if opt.MaxAssignments <= 0 {
		opt.MaxAssignments = DefaultMaxAssignments
	}
	if opt.MaxSearchNodes <= 0 {
		opt.MaxSearchNodes = DefaultMaxSearchNodes
	}
	if c.IsEmpty() {
		return nil, fmt.Errorf("judge composition: %w: empty composition", ErrBadFormula)
	}
	elems, counts, err := integerFormula(c)
	if err != nil {
		return nil, fmt.Errorf("judge composition %s: %w", c.ReducedFormula(), err)
	}
	j := newJudge(elems, counts, opt)
	return j.judge(), nil
}

// judge holds one composition and what the rules need to know about it.
type judge struct {
	opt    ChemistryOptions
	elems  []Element
	counts []int
	v      *ChemistryVerdict
	name   string

	metalAtoms, nonmetalAtoms int
	hasF, hasO, hasHalide     bool // F; O; Cl, Br or I
	hasFormer                 bool // B, C, N, Si, P, S, Ge, As, Se, Sb or Te
	peroxide, superoxide      bool // a cation that stabilises O₂²⁻; O₂⁻ and O₃⁻
	polyhalide                bool // a cation that stabilises X₃⁻
}

func newJudge(elems []Element, counts []int, opt ChemistryOptions) *judge {
	items := make([]ElementAmount, len(elems))
	for i, e := range elems {
		items[i] = ElementAmount{e, float64(counts[i])}
	}
	j := &judge{opt: opt, elems: elems, counts: counts}
	j.v = &ChemistryVerdict{Formula: Composition{items: items}}
	j.name = j.v.Formula.ReducedFormula()
	for i, e := range elems {
		if e.IsMetal() {
			j.metalAtoms += counts[i]
			j.peroxide = j.peroxide || peroxideCation(e)
			j.superoxide = j.superoxide || superoxideCation(e)
			j.polyhalide = j.polyhalide || polyhalideCation(e)
			continue
		}
		j.nonmetalAtoms += counts[i]
		switch e.Symbol() {
		case "F":
			j.hasF = true
		case "O":
			j.hasO = true
		case "Cl", "Br", "I":
			j.hasHalide = true
		case "B", "C", "N", "Si", "P", "S", "Ge", "As", "Se", "Sb", "Te":
			j.hasFormer = true
		}
	}
	return j
}

func (j *judge) hard() bool { return j.hasF || j.hasO || j.hasHalide }

func (j *judge) valid(class BondingClass, detail string) *ChemistryVerdict {
	j.v.Class, j.v.Valid, j.v.Detail = class, true, detail
	return j.v
}

func (j *judge) invalid(class BondingClass, code ReasonCode, detail string) *ChemistryVerdict {
	j.v.Class, j.v.Valid, j.v.Code, j.v.Detail = class, false, code, "judged "+string(class)+": "+detail
	j.v.Assignments = nil
	return j.v
}

func (j *judge) judge() *ChemistryVerdict {
	if len(j.elems) == 1 {
		j.v.Assignments = []OxidationAssignment{j.zeroAssignment()}
		return j.valid(ClassElement, j.name+" is a single element: oxidation state 0")
	}
	class := ClassIonic
	switch {
	case j.nonmetalAtoms == 0:
		class = ClassIntermetallic
	case j.metalAtoms == 0:
		class = ClassCovalent
	}
	if v := j.implausible(class); v != nil {
		return v
	}
	switch class {
	case ClassIntermetallic:
		j.v.Assignments = []OxidationAssignment{j.zeroAssignment()}
		return j.valid(class, fmt.Sprintf("%s contains only metals: an intermetallic (%d elements, most to least abundant %s), all oxidation states 0",
			j.name, len(j.elems), j.ratioText()))
	case ClassCovalent:
		return j.covalent()
	}
	return j.compound()
}

// zeroAssignment gives every atom oxidation state 0.
func (j *judge) zeroAssignment() OxidationAssignment {
	var a OxidationAssignment
	for i, e := range j.elems {
		a.Ions = append(a.Ions, Ion{e, 0, j.counts[i]})
		a.Score += j.counts[i] * occurrence(e, 0)
	}
	return a
}

// implausible applies the count bounds and the inert noble gases.
func (j *judge) implausible(class BondingClass) *ChemistryVerdict {
	for _, e := range j.elems {
		switch e.Symbol() {
		case "He", "Ne", "Ar":
			return j.invalid(class, ReasonImplausibleComposition,
				fmt.Sprintf("%s contains %s, a noble gas that forms no compounds at ambient pressure", j.name, e))
		}
	}
	atoms := 0
	for _, n := range j.counts {
		atoms += n
	}
	switch {
	case len(j.elems) > MaxChemistryElements:
		return j.invalid(class, ReasonImplausibleComposition,
			fmt.Sprintf("%s has %d elements, more than any known compound (at most %d)", j.name, len(j.elems), MaxChemistryElements))
	case atoms > MaxFormulaAtoms:
		return j.invalid(class, ReasonImplausibleComposition,
			fmt.Sprintf("%s has %d atoms per formula unit, more than fit in the largest cell accepted (%d)", j.name, atoms, MaxFormulaAtoms))
	case class == ClassIntermetallic && len(j.elems) > MaxIntermetallicElements:
		return j.invalid(class, ReasonImplausibleComposition,
			fmt.Sprintf("%s is an intermetallic of %d metals, more than the %d principal elements of high-entropy alloys", j.name, len(j.elems), MaxIntermetallicElements))
	case class == ClassIntermetallic && j.ratio() > MaxIntermetallicRatio:
		return j.invalid(class, ReasonImplausibleComposition,
			fmt.Sprintf("%s has metals in the ratio %s, beyond the most lopsided ordered intermetallics (1:%g): a dilute solid solution, not a compound", j.name, j.ratioText(), MaxIntermetallicRatio))
	}
	return nil
}

func (j *judge) ratio() float64 {
	return float64(slices.Max(j.counts)) / float64(slices.Min(j.counts))
}

func (j *judge) ratioText() string {
	return fmt.Sprintf("%d:%d", slices.Max(j.counts), slices.Min(j.counts))
}

// compound judges a composition of metals and non-metals: ionic if an
// assignment balances, else by electron count as polyanionic or
// metal-rich where the chemistry of its elements allows.
func (j *judge) compound() *ChemistryVerdict {
	sols, paulingOnly := j.balance()
	if len(sols) > 0 {
		j.v.Assignments = sols
		return j.valid(ClassIonic, fmt.Sprintf("%s is ionic: %s", j.name, describeAssignment(sols[0])))
	}
	if !j.hard() {
		return j.softCompound(paulingOnly)
	}
	return j.hardCompound(paulingOnly)
}

// balance searches charge-balanced assignments with the Pauling test:
// ICSD states first, then (with F, O, Cl, Br or I present, or without
// metals) the extended states; each with one state per element, then
// mixed valence over up to maxBalanceMultiple formula units. paulingOnly
// is an assignment that balances only without the Pauling test, when
// there is one.
func (j *judge) balance() (sols []OxidationAssignment, paulingOnly *OxidationAssignment) {
	passes := []bool{false}
	if j.hard() || j.metalAtoms == 0 {
		passes = append(passes, true)
	}
	var states [][]int
	for _, extended := range passes {
		prev := states
		states = make([][]int, len(j.elems))
		for i, e := range j.elems {
			states[i] = j.ionicStates(e, extended)
			if len(states[i]) == 0 {
				return nil, nil
			}
		}
		if prev != nil && slices.EqualFunc(prev, states, slices.Equal) {
			continue
		}
		if pruned := j.paulingStates(states); pruned != nil {
			if sols := j.search(pruned, true, maxBalanceMultiple); len(sols) > 0 {
				return sols, nil
			}
		}
	}
	// Only to tell the electronegativity failure from the others.
	if alt := j.search(states, false, 1); len(alt) > 0 {
		paulingOnly = &alt[0]
	}
	return nil, paulingOnly
}

// paulingStates drops the states the Pauling test forbids whatever the
// other elements take: a positive state of the most electronegative
// element and a negative state of the least electronegative one. It
// returns nil when an element is left without states.
func (j *judge) paulingStates(states [][]int) [][]int {
	out := make([][]int, len(states))
	for i, e := range j.elems {
		x, hasX := e.Electronegativity()
		above, below := false, false
		for _, o := range j.elems {
			if ox, ok := o.Electronegativity(); ok && o != e && hasX {
				above = above || ox > x
				below = below || ox < x
			}
		}
		out[i] = slices.DeleteFunc(slices.Clone(states[i]), func(q int) bool {
			return (q > 0 && !above) || (q < 0 && !below) || (q != 0 && !hasX)
		})
		if len(out[i]) == 0 {
			return nil
		}
	}
	return out
}

// search runs the single-valence search, then the mixed-valence one over
// 1 … multiples formula units.
func (j *judge) search(states [][]int, pauling bool, multiples int) []OxidationAssignment {
	run := func(k int, mixed bool) []OxidationAssignment {
		counts := make([]int, len(j.counts))
		for i, n := range j.counts {
			counts[i] = k * n
		}
		s := newChargeSearch(j.elems, counts, states, mixed, pauling, j.opt.MaxAssignments, j.opt.MaxSearchNodes)
		s.run()
		j.v.Truncated = j.v.Truncated || s.truncated
		return s.results()
	}
	if sols := run(1, false); len(sols) > 0 || !canMix(states) {
		return sols
	}
	for k := 1; k <= multiples; k++ {
		if sols := run(k, true); len(sols) > 0 {
			return sols
		}
	}
	return nil
}

// canMix reports whether some element has two states of one sign, so
// mixed valence can reach totals that one state per element cannot.
func canMix(states [][]int) bool {
	for _, st := range states {
		pos, neg := 0, 0
		for _, q := range st {
			switch {
			case q > 0:
				pos++
			case q < 0:
				neg++
			}
		}
		if pos > 1 || neg > 1 {
			return true
		}
	}
	return false
}

// ionicStates are the oxidation states an element may take in an ionic
// assignment (see the package documentation, "Chemistry").
func (j *judge) ionicStates(e Element, extended bool) []int {
	if q, ok := fixedValence(e); ok {
		return []int{q}
	}
	if st, ok := nobleGasStates[e.Symbol()]; ok {
		return st
	}
	base := e.ICSDOxidationStates()
	if len(base) == 0 {
		base = e.OxidationStates()
	}
	out := slices.Clone(base)
	add := func(q int) {
		if !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	zintl := j.zintlAnion(e)
	for _, q := range e.OxidationStates() {
		switch {
		case !e.IsMetal():
			// O⁻ is the peroxide ion: judged by the polyanion rules.
			if extended && (e.Symbol() != "O" || q != -1) {
				add(q)
			}
		case q > 0:
			if extended && variableValence(e) {
				add(q)
			}
		case q < 0:
			if zintl {
				add(q)
			}
		}
	}
	if !zintl && e.IsMetal() {
		out = slices.DeleteFunc(out, func(q int) bool { return q < 0 })
	}
	return out
}

// zintlAnion reports whether metal e may be an anion here: a p-block metal
// (Ga, In, Tl, Sn, Pb, Bi, Po) or gold or platinum, beside a less
// electronegative metal (Sr₃PbO has Pb⁴⁻, Ca₆Sn₂NF Sn⁴⁻, CsAu Au⁻,
// Cs₂Pt Pt²⁻).
func (j *judge) zintlAnion(e Element) bool {
	if !e.IsMetal() || zintlLimit(e) == 0 {
		return false
	}
	for _, o := range j.elems {
		if o != e && o.IsMetal() && o.X() < e.X() {
			return true
		}
	}
	return false
}

// zintlLimit is the most negative charge of metal e as a Zintl anion: the
// octet (8 − valence electrons) for p-block metals, −1 for Au (auride),
// −2 for Pt (platinide); 0 for other metals.
func zintlLimit(e Element) int {
	switch e.Symbol() {
	case "Ga", "In", "Tl", "Sn", "Pb", "Bi", "Po":
		return -(18 - e.Group())
	case "Au":
		return -1
	case "Pt":
		return -2
	}
	return 0
}

// nobleGasStates are the oxidation states of the noble gases that form
// compounds (Greenwood & Earnshaw, Chemistry of the Elements, 2nd ed.,
// ch. 18), which pymatgen's tables lack: KrF₂; XeF₂, XeF₄, XeF₆, XeO₄.
var nobleGasStates = map[string][]int{
	"Kr": {2},
	"Xe": {2, 4, 6, 8},
	"Rn": {2},
}

// fixedValence returns the one oxidation state of the metals that take the
// group valence in every ionic compound: the alkali metals +1, the
// alkaline earths +2, Zn and Cd +2, Al +3, and Sc, Y, La and Lu +3.
// pymatgen's ICSD list also has Sc²⁺ and La²⁺, the formal states of
// metallic reduced halides (LaI₂ is La³⁺ with an electron in the
// conduction band); these are judged as metal-rich, never as ionic.
func fixedValence(e Element) (int, bool) {
	switch e.Symbol() {
	case "Li", "Na", "K", "Rb", "Cs", "Fr":
		return 1, true
	case "Be", "Mg", "Ca", "Sr", "Ba", "Ra", "Zn", "Cd":
		return 2, true
	case "Al", "Sc", "Y", "La", "Lu":
		return 3, true
	}
	return 0, false
}

// variableValence reports whether metal e's positive states beyond the
// ICSD list may be used: the transition metals of groups 4–12 and the
// p-block metals. Fixed-valence metals, the lanthanides and the actinides
// keep their ICSD states (their other states are those of metal-rich
// compounds).
func variableValence(e Element) bool {
	if _, ok := fixedValence(e); ok || fBlock(e) {
		return false
	}
	g := e.Group()
	return (g >= 4 && g <= 12) || (e.Block() == 'p' && e.IsMetal())
}

func fBlock(e Element) bool {
	z := e.Z()
	return (z >= 57 && z <= 71) || (z >= 89 && z <= 103)
}

// peroxideCation: the metals whose peroxides exist (Li₂O₂, Na₂O₂, BaO₂,
// MgO₂, ZnO₂, CdO₂): groups 1, 2 and 12.
func peroxideCation(e Element) bool {
	g := e.Group()
	return e.IsMetal() && (g == 1 || g == 2 || g == 12)
}

// superoxideCation: the large alkali cations that stabilise superoxides
// and ozonides (NaO₂, KO₂, RbO₂, CsO₂; KO₃, RbO₃, CsO₃).
func superoxideCation(e Element) bool {
	switch e.Symbol() {
	case "Na", "K", "Rb", "Cs":
		return true
	}
	return false
}

// polyhalideCation: the large monovalent cations that stabilise
// polyhalide anions (CsI₃, CsBr₃, RbI₃, TlI₃, Cs₂I₈).
func polyhalideCation(e Element) bool {
	switch e.Symbol() {
	case "K", "Rb", "Cs", "Tl":
		return true
	}
	return false
}

// suboxideLimit: the metals that form metal-rich oxides with metal–metal
// bonds, and their lowest mean charge there: the alkali suboxides of Rb
// and Cs (Rb₉O₂, Cs₇O; Simon, Struct. Bond. 36, 81 (1979)) and the
// suboxides of groups 4 and 5 (Ti₆O, Zr₃O, Nb₆O, Ta₂O), down to 0; the
// metallic monoxides of the lanthanides Ce–Yb (CeO, NdO, SmO), +2.
func suboxideLimit(e Element) (float64, bool) {
	if z := e.Z(); z >= 58 && z <= 70 {
		return 2, true
	}
	switch e.Symbol() {
	case "Rb", "Cs", "Ti", "Zr", "Hf", "V", "Nb", "Ta":
		return 0, true
	}
	return 0, false
}

// subhalideLimit: the metals that form reduced chlorides, bromides and
// iodides with metal–metal bonds (Corbett, Acc. Chem. Res. 14, 239
// (1981); Simon, Angew. Chem. Int. Ed. 27, 159 (1988)), and their lowest
// mean charge there: Sc, Y, La, the lanthanides and actinides, groups 4
// and 5, Mo, W and Re down to +1 (ScCl, ZrCl, LaI; Sc₇Cl₁₀, Gd₂Cl₃, LaI₂,
// Nb₆I₁₁, Ta₆Cl₁₅, Mo₆Cl₁₂); the subvalent clusters of Ga, In, Tl, Bi and
// Hg down to +½ (Bi₅³⁺, Hg₃²⁺).
func subhalideLimit(e Element) (float64, bool) {
	if fBlock(e) {
		return 1, true
	}
	switch e.Symbol() {
	case "Sc", "Y", "Ti", "Zr", "Hf", "Nb", "Ta", "Mo", "W", "Re":
		return 1, true
	case "Ga", "In", "Tl", "Bi", "Hg":
		return 0.5, true
	}
	return 0, false
}

// chargeSpan is the range of the mean charge of one element's atoms.
type chargeSpan struct{ lo, hi float64 }

// spans gives every element its charge range for the electron count.
// reduce lets metals hold electrons (metal–metal bonding, down to charge 0
// or, for Zintl anions, below); catenate lets anions bond to each other
// (mean charge above the isolated ion's).
func (j *judge) spans(reduce, catenate bool) []chargeSpan {
	out := make([]chargeSpan, len(j.elems))
	for i, e := range j.elems {
		if e.IsMetal() {
			out[i] = j.metalSpan(e, reduce)
		} else {
			out[i] = j.nonmetalSpan(e, catenate)
		}
	}
	return out
}

func (j *judge) metalSpan(e Element, reduce bool) chargeSpan {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range j.ionicStates(e, j.hard()) {
		if q > 0 {
			lo, hi = math.Min(lo, float64(q)), math.Max(hi, float64(q))
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 0
	}
	if reduce {
		if r, ok := j.reducedLimit(e); ok {
			lo = math.Min(lo, r)
		}
	}
	if j.zintlAnion(e) {
		lo = float64(zintlLimit(e))
	}
	return chargeSpan{lo, hi}
}

// reducedLimit is the lowest mean charge metal e may take here through
// metal–metal bonding, and whether it may be reduced at all. Beside B, C,
// N, Si, P, S, Ge, As, Se, Sb, Te or H alone every metal may (down to 0).
// With F, O, Cl, Br or I a metal may when it forms subfluorides,
// suboxides or reduced halides (reducedFramework), down to the limit of
// those unless late transition or p-block metals bond into its framework
// (the intermetallic halides La₂Ni₂I, Gd₂Fe₂I, La₂Al₂I; Zr₄Pd₂O), which
// then may be at charge 0 as may the framework metal.
func (j *judge) reducedLimit(e Element) (float64, bool) {
	if !j.hard() {
		return 0, true
	}
	framework, partner := false, false
	for _, o := range j.elems {
		if _, ok := j.reducedFramework(o); ok {
			framework = true
		} else if interstitialMetal(o) {
			partner = true
		}
	}
	lim, ok := j.reducedFramework(e)
	switch {
	case ok && partner:
		return 0, true
	case ok:
		return lim, true
	case framework && interstitialMetal(e):
		return 0, true
	}
	return 0, false
}

// reducedFramework reports whether metal e forms metal-rich compounds
// with the F, O, Cl, Br and I present, and its lowest mean charge there:
// Ag₂F (+½); the suboxides (0; +2 for the lanthanide monoxides); the
// reduced halides (+1, the monohalides ScCl, ZrCl, LaI; +½ for the
// subvalent clusters Bi₅³⁺, Hg₃²⁺). Without B, C, N, Si, P, S, Ge, As,
// Se, Sb or Te it must form them with every one of these anions present;
// with them, whose atoms sit inside the metal clusters (Gd₂CCl, Y₉C₄I₈O),
// with any one.
func (j *judge) reducedFramework(e Element) (float64, bool) {
	if !e.IsMetal() {
		return 0, false
	}
	limits := []struct {
		present bool
		limit   func(Element) (float64, bool)
	}{
		{j.hasF, subfluorideLimit},
		{j.hasO, suboxideLimit},
		{j.hasHalide, subhalideLimit},
	}
	lim, any, all := 0.0, false, true
	for _, l := range limits {
		if !l.present {
			continue
		}
		x, ok := l.limit(e)
		if !ok {
			all = false
			continue
		}
		if !any || x < lim {
			lim = x
		}
		any = true
	}
	if !any || (!all && !j.hasFormer) {
		return 0, false
	}
	return lim, true
}

// subfluorideLimit: silver, whose subfluoride Ag₂F is the one metal-rich
// fluoride, down to +½.
func subfluorideLimit(e Element) (float64, bool) { return 0.5, e.Symbol() == "Ag" }

// interstitialMetal: the late transition metals (groups 8–11) and the
// p-block metals, which sit at the centre of, or bond into, the metal
// clusters of reduced halides and suboxides.
func interstitialMetal(e Element) bool {
	g := e.Group()
	return e.IsMetal() && ((g >= 8 && g <= 11) || e.Block() == 'p')
}

func (j *judge) nonmetalSpan(e Element, catenate bool) chargeSpan {
	iso := 0
	for _, q := range append(e.ICSDOxidationStates(), e.OxidationStates()...) {
		iso = min(iso, q)
	}
	s := chargeSpan{float64(iso), float64(iso)}
	if st, ok := nobleGasStates[e.Symbol()]; ok {
		s = chargeSpan{float64(slices.Min(st)), float64(slices.Max(st))}
		if !j.moreElectronegative(e) {
			s = chargeSpan{math.NaN(), math.NaN()} // nothing to bond to
		}
		return s
	}
	if catenate {
		s.hi = j.catenationLimit(e, iso)
	}
	if j.moreElectronegative(e) {
		for _, q := range e.OxidationStates() {
			s.hi = math.Max(s.hi, float64(q))
		}
	}
	return s
}

// moreElectronegative reports whether some other non-metal of the
// composition is more electronegative than e, so e may be positive.
func (j *judge) moreElectronegative(e Element) bool {
	for _, o := range j.elems {
		if o != e && !o.IsMetal() && o.X() > e.X() {
			return true
		}
	}
	return false
}

// catenationLimit is the highest mean charge of non-metal e's atoms when
// they bond to each other: 0 for the elements that form networks, chains
// and clusters (B, C, Si, Ge, P, As, Sb, S, Se, Te); −1/3 for N (azide
// N₃⁻); for O −1 (peroxide) beside a group 1, 2 or 12 metal and −1/3
// (ozonide) beside Na, K, Rb or Cs; for Cl and Br −1/3 (X₃⁻) and for I
// −1/5 (I₅⁻) beside K, Rb, Cs or Tl; none for H and F. In a covalent
// composition O may reach −1 and the halogens keep −1.
func (j *judge) catenationLimit(e Element, iso int) float64 {
	switch e.Symbol() {
	case "B", "C", "Si", "Ge", "P", "As", "Sb", "S", "Se", "Te":
		return 0
	case "N":
		return -1.0 / 3
	case "O":
		switch {
		case j.metalAtoms == 0:
			return -1
		case j.superoxide:
			return -1.0 / 3
		case j.peroxide:
			return -1
		}
	case "Cl", "Br":
		if j.polyhalide {
			return -1.0 / 3
		}
	case "I":
		if j.polyhalide {
			return -1.0 / 5
		}
	}
	return float64(iso)
}

// balanced reports whether the charge ranges admit a total of zero, and
// gives mean charges that do: every element at the same fraction t of
// its range (a representative point, not a unique one).
func (j *judge) balanced(sp []chargeSpan) (bool, []float64) {
	lo, width := 0.0, 0.0
	for i, s := range sp {
		if math.IsNaN(s.lo) {
			return false, nil
		}
		lo += float64(j.counts[i]) * s.lo
		width += float64(j.counts[i]) * (s.hi - s.lo)
	}
	const eps = 1e-9
	if lo > eps || lo+width < -eps {
		return false, nil
	}
	t := 0.0
	if width > 0 {
		t = math.Min(1, math.Max(0, -lo/width))
	}
	mean := make([]float64, len(sp))
	for i, s := range sp {
		mean[i] = s.lo + t*(s.hi-s.lo)
	}
	return true, mean
}

// softCompound judges metals with B, C, N, Si, P, S, Ge, As, Se, Sb, Te
// or H that no ionic assignment balances: borides, carbides, nitrides,
// silicides, germanides, pnictides, chalcogenides and hydrides whose
// bonding is partly metallic or anion–anion. They are judged by electron
// count: metals may keep electrons and the network formers may bond to
// each other, but hydride, which forms no H–H bonds, must be filled by
// the metals (NaH2 is rejected).
func (j *judge) softCompound(paulingOnly *OxidationAssignment) *ChemistryVerdict {
	poly, _ := j.balanced(j.spans(false, true))
	rich, _ := j.balanced(j.spans(true, false))
	both, _ := j.balanced(j.spans(true, true))
	dx := j.electronegativityDifference()
	class := ClassMetalRich
	if dx >= smallElectronegativityDifference && poly && !rich {
		class = ClassPolyanionic
	}
	if !both {
		detail := fmt.Sprintf("no ionic assignment balances %s, nor does the electron count: charges per atom %s cannot sum to zero", j.name, j.spanText(j.spans(true, true)))
		if paulingOnly != nil {
			detail += "; it balances ionically only as " + paulingOnly.String() + ", which breaks the Pauling test"
		}
		return j.invalid(class, ReasonElectronCount, detail)
	}
	why := "anion–anion bonds take part of the cations' charge"
	if class == ClassMetalRich {
		why = "metal–metal bonding"
		if dx < smallElectronegativityDifference {
			why = fmt.Sprintf("electronegativity difference %.2f: intermetallic-like bonding", dx)
		}
	}
	return j.valid(class, fmt.Sprintf("%s is %s (%s), judged by electron count, not ionic balance: charges per atom %s can sum to zero",
		j.name, class, why, j.spanText(j.spans(true, true))))
}

// hardCompound judges a composition with F, O, Cl, Br or I that no ionic
// assignment balances. The hard anions are filled (F⁻ always); only the
// chemistry listed in the package documentation relaxes that: peroxide,
// superoxide and ozonide ions, polyhalide ions, suboxides and reduced
// halides of the metals that form them, and a boride, carbide, nitride,
// silicide, pnictide or chalcogenide part (Gd₂CCl, Ca₃GeO).
func (j *judge) hardCompound(paulingOnly *OxidationAssignment) *ChemistryVerdict {
	if ok, mean := j.balanced(j.spans(false, false)); ok {
		// Balanced in the mean but not by an integer assignment within
		// maxBalanceMultiple formula units, or only breaking the Pauling
		// test.
		return j.valid(ClassIonic, fmt.Sprintf("%s is ionic with mixed valence over a large formula unit: mean charges %s", j.name, j.meanText(mean)))
	}
	if ok, mean := j.balanced(j.spans(false, true)); ok {
		return j.valid(ClassPolyanionic, fmt.Sprintf("%s is polyanionic (no ionic assignment; anion–anion bonds: %s): mean charges %s",
			j.name, j.bondedAnions(), j.meanText(mean)))
	}
	for _, catenate := range []bool{false, true} {
		if ok, mean := j.balanced(j.spans(true, catenate)); ok {
			return j.valid(ClassMetalRich, fmt.Sprintf("%s is metal_rich (no ionic assignment; metal–metal bonding keeps electrons): mean charges %s",
				j.name, j.meanText(mean)))
		}
	}
	code := ReasonChargeNeutrality
	detail := fmt.Sprintf("no assignment of oxidation states sums to zero for %s (%s), and no peroxide, polyhalide, suboxide or reduced-halide chemistry fits: charges per atom %s cannot sum to zero",
		j.name, j.statesText(), j.spanText(j.spans(true, true)))
	if paulingOnly != nil {
		code = ReasonElectronegativity
		detail = fmt.Sprintf("%s balances only as %s, which puts a cation at least as electronegative as an anion (Pauling test)", j.name, paulingOnly)
	}
	return j.invalid(ClassIonic, code, detail)
}

// bondedAnions names the anion–anion chemistry available here.
func (j *judge) bondedAnions() string {
	var parts []string
	if j.hasO && j.superoxide {
		parts = append(parts, "peroxide, superoxide or ozonide")
	} else if j.hasO && j.peroxide {
		parts = append(parts, "peroxide")
	}
	if j.hasHalide && j.polyhalide {
		parts = append(parts, "polyhalide")
	}
	if j.hasFormer {
		parts = append(parts, "a polyanion of "+strings.Join(j.formers(), ", "))
	}
	if len(parts) == 0 {
		return "none named"
	}
	return strings.Join(parts, "; ")
}

func (j *judge) formers() []string {
	var out []string
	for _, e := range j.elems {
		switch e.Symbol() {
		case "B", "C", "N", "Si", "P", "S", "Ge", "As", "Se", "Sb", "Te":
			out = append(out, e.Symbol())
		}
	}
	return out
}

// electronegativityDifference is the count-weighted mean Pauling
// electronegativity of the non-metals minus that of the metals.
func (j *judge) electronegativityDifference() float64 {
	var xm, xn float64
	for i, e := range j.elems {
		if e.IsMetal() {
			xm += float64(j.counts[i]) * e.X()
		} else {
			xn += float64(j.counts[i]) * e.X()
		}
	}
	return xn/float64(j.nonmetalAtoms) - xm/float64(j.metalAtoms)
}

// covalent judges a composition of non-metals: balanced over the ICSD and
// then all known states with the Pauling test, else by electron count
// with bonds between like atoms.
func (j *judge) covalent() *ChemistryVerdict {
	sols, paulingOnly := j.balance()
	if len(sols) > 0 {
		j.v.Assignments = sols
		return j.valid(ClassCovalent, fmt.Sprintf("%s is covalent, formal states %s", j.name, describeAssignment(sols[0])))
	}
	sp := j.spans(false, true)
	if ok, mean := j.balanced(sp); ok {
		return j.valid(ClassCovalent, fmt.Sprintf("%s is covalent with bonds between like atoms: mean charges %s", j.name, j.meanText(mean)))
	}
	detail := fmt.Sprintf("no electron count balances %s: charges per atom %s cannot sum to zero", j.name, j.spanText(sp))
	if paulingOnly != nil {
		detail += "; it balances only as " + paulingOnly.String() + ", which breaks the Pauling test"
	}
	return j.invalid(ClassCovalent, ReasonElectronCount, detail)
}

func describeAssignment(a OxidationAssignment) string {
	s := a.String()
	if a.MixedValence() {
		s += " (mixed valence)"
	}
	return s
}

// meanText writes "Ti +0.67, O -2".
func (j *judge) meanText(mean []float64) string {
	parts := make([]string, len(mean))
	for i, e := range j.elems {
		parts[i] = e.Symbol() + " " + signed(mean[i])
	}
	return strings.Join(parts, ", ")
}

// spanText writes the charge ranges per atom: "Na +1; F -1",
// "Ti 0 … +4; O -2".
func (j *judge) spanText(sp []chargeSpan) string {
	parts := make([]string, len(sp))
	for i, e := range j.elems {
		s := sp[i]
		switch {
		case math.IsNaN(s.lo):
			parts[i] = e.Symbol() + " has no partner to bond to"
		case s.lo == s.hi:
			parts[i] = e.Symbol() + " " + signed(s.lo)
		default:
			parts[i] = e.Symbol() + " " + signed(s.lo) + " … " + signed(s.hi)
		}
	}
	return strings.Join(parts, "; ")
}

// statesText lists the ionic states tried: "Na: +1; F: -1".
func (j *judge) statesText() string {
	states := make([][]int, len(j.elems))
	for i, e := range j.elems {
		states[i] = j.ionicStates(e, true)
	}
	return describeStates(j.elems, states)
}

func signed(x float64) string {
	if math.Abs(x) < 5e-3 {
		return "0"
	}
	if x == math.Round(x) {
		return fmt.Sprintf("%+d", int(x))
	}
	return fmt.Sprintf("%+.2f", x)
}
