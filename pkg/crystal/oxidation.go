package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrNonIntegerComposition is returned when a composition has amounts that
// are not small-denominator rationals, so no integer formula exists to
// assign oxidation states to.
var ErrNonIntegerComposition = errors.New("composition has no small integer formula")

// OxidationStateSet selects which oxidation states an analysis may assign.
type OxidationStateSet int

const (
	// CommonStates are Element.CommonOxidationStates, pymatgen's
	// common_oxidation_states: the states an element usually takes (Fe +2,
	// +3; Cu +2; O −2). The default, and the strictest set.
	CommonStates OxidationStateSet = iota
	// ICSDStates are Element.ICSDOxidationStates, the states observed in
	// the ICSD (Cu +1, +2, +3), falling back to all states for the few
	// elements with none observed (Au, Pt, Os, …), as pymatgen's
	// oxi_state_guesses does.
	ICSDStates
	// AllStates are Element.OxidationStates, every known state (O −1 of
	// peroxides, Fe −2 … +6). Very permissive.
	AllStates
)

// String names the set: "common", "icsd" or "all".
func (s OxidationStateSet) String() string {
	switch s {
	case CommonStates:
		return "common"
	case ICSDStates:
		return "icsd"
	case AllStates:
		return "all"
	}
	return "OxidationStateSet(" + strconv.Itoa(int(s)) + ")"
}

func (s OxidationStateSet) states(e Element) []int {
	switch s {
	case ICSDStates:
		if st := e.ICSDOxidationStates(); len(st) > 0 {
			return st
		}
		return e.OxidationStates()
	case AllStates:
		return e.OxidationStates()
	}
	return e.CommonOxidationStates()
}

// Defaults of OxidationOptions.
const (
	// DefaultMaxAssignments is how many neutral assignments are kept.
	DefaultMaxAssignments = 16
	// DefaultMaxSearchNodes bounds the enumeration. The pruned search of an
	// eight-element composition over all oxidation states visits a few
	// thousand nodes; the bound only stops pathological inputs.
	DefaultMaxSearchNodes = 1 << 20
	// maxMixedValenceAtoms bounds the atoms of one element (in the reduced
	// integer formula) that the mixed-valence solver splits over states;
	// its table has atoms × atoms × (state range) entries. An element with
	// more atoms keeps one state.
	maxMixedValenceAtoms = 256
	// maxFormulaDenominator is the largest denominator by which a
	// non-integer composition (Li0.5CoO2) is multiplied to make it integer.
	maxFormulaDenominator = 100
)

// OxidationOptions configure AssignOxidationStates. The zero value is the
// SMACT default: common oxidation states, one state per element, the
// Pauling electronegativity test, and all-metal compositions accepted as
// alloys.
type OxidationOptions struct {
	// States is the set of oxidation states to draw from (default
	// CommonStates).
	States OxidationStateSet
	// MixedValence lets the atoms of one element take different states of
	// the same sign (Fe3O4 as Fe²⁺Fe³⁺₂O₄), solved for integer counts per
	// state. It is tried only when no single-valence assignment exists, so
	// compounds that balance with one state per element are reported as
	// before. Off by default, as in SMACT's smact_validity: with it, nearly
	// any ratio of a multivalent element to an anion balances (Fe7O9 does),
	// which weakens the filter.
	MixedValence bool
	// NoElectronegativityTest turns off the Pauling test (every cation less
	// electronegative than every anion).
	NoElectronegativityTest bool
	// NoAlloys analyses compositions made only of metals like any other,
	// instead of accepting them as intermetallics with all oxidation states
	// zero.
	NoAlloys bool
	// MaxAssignments is how many neutral assignments to keep, best first
	// (default DefaultMaxAssignments).
	MaxAssignments int
	// MaxSearchNodes bounds the enumeration (default DefaultMaxSearchNodes);
	// when it is reached the analysis is marked Truncated.
	MaxSearchNodes int
}

// Ion is one oxidation state of an element and how many atoms of the
// analysed integer formula take it.
type Ion struct {
	Element Element
	State   int
	Count   int
}

// String writes the ion as a chemist would: "Fe3+", "O2-", "Na+", "Cl-",
// "Ni0".
func (ion Ion) String() string {
	return ion.Element.Symbol() + chargeString(ion.State)
}

func chargeString(q int) string {
	switch {
	case q == 0:
		return "0"
	case q == 1:
		return "+"
	case q == -1:
		return "-"
	case q > 0:
		return strconv.Itoa(q) + "+"
	}
	return strconv.Itoa(-q) + "-"
}

// OxidationAssignment gives every atom of an integer formula an oxidation
// state: its ions, ordered by atomic number and then state. With one state
// per element there is one ion per element.
type OxidationAssignment struct {
	Ions []Ion
	// Score is Σ count × (ICSD occurrence of the ion), the prior with
	// which pymatgen's oxi_state_guesses ranks solutions; higher is more
	// usual. For a mixed-valence element it is the score of its most
	// frequent split, as pymatgen ranks, whatever split Ions lists.
	Score int
}

// State returns the mean oxidation state of e (the state itself without
// mixed valence) and whether e is in the assignment.
func (a OxidationAssignment) State(e Element) (float64, bool) {
	n, sum := 0, 0
	for _, ion := range a.Ions {
		if ion.Element == e {
			n += ion.Count
			sum += ion.Count * ion.State
		}
	}
	if n == 0 {
		return 0, false
	}
	return float64(sum) / float64(n), true
}

// States maps each element symbol to its mean oxidation state, e.g.
// {"Fe": 3, "O": -2}; Fe3O4 with mixed valence gives Fe 8/3.
func (a OxidationAssignment) States() map[string]float64 {
	out := make(map[string]float64)
	for _, ion := range a.Ions {
		if _, done := out[ion.Element.Symbol()]; !done {
			out[ion.Element.Symbol()], _ = a.State(ion.Element)
		}
	}
	return out
}

// MixedValence reports whether some element takes more than one state.
func (a OxidationAssignment) MixedValence() bool {
	for i := 1; i < len(a.Ions); i++ {
		if a.Ions[i].Element == a.Ions[i-1].Element {
			return true
		}
	}
	return false
}

// String lists the ions by increasing electronegativity, as formulas are
// written: "Fe3+ O2-"; with mixed valence each ion is followed by its count
// in the formula, "Fe2+:1 Fe3+:2 O2-:4".
func (a OxidationAssignment) String() string {
	mixed := a.MixedValence()
	ions := slices.Clone(a.Ions)
	slices.SortStableFunc(ions, func(x, y Ion) int {
		switch xx, xy := x.Element.X(), y.Element.X(); {
		case xx < xy:
			return -1
		case xx > xy:
			return 1
		}
		return int(x.Element) - int(y.Element)
	})
	parts := make([]string, len(ions))
	for i, ion := range ions {
		parts[i] = ion.String()
		if mixed {
			parts[i] += ":" + strconv.Itoa(ion.Count)
		}
	}
	return strings.Join(parts, " ")
}

// OxidationAnalysis is the outcome of AssignOxidationStates.
type OxidationAnalysis struct {
	// Formula is the reduced integer composition that was analysed.
	Formula Composition
	// Options are the options used, defaults filled in.
	Options OxidationOptions
	// Neutral reports whether some assignment sums to zero (and passes the
	// electronegativity test unless disabled), or the composition is a
	// single element or, unless NoAlloys, made only of metals.
	Neutral bool
	// Elemental marks a single-element composition: neutral, state 0.
	Elemental bool
	// Alloy marks an all-metal composition accepted as an intermetallic
	// with every oxidation state 0 (SMACT's include_alloys).
	Alloy bool
	// Assignments are the neutral assignments found, best first: highest
	// Score, then fewer mixed-valence elements, then states in a fixed
	// order. At most MaxAssignments are kept.
	Assignments []OxidationAssignment
	// Reason is empty when Neutral, otherwise ReasonChargeNeutrality (no
	// assignment sums to zero) or ReasonElectronegativity (some do, but
	// each puts a cation at least as electronegative as an anion).
	Reason ReasonCode
	// Detail explains the outcome in words.
	Detail string
	// Truncated reports that the enumeration hit MaxSearchNodes; Neutral
	// false is then "none found", not "none exists".
	Truncated bool
}

// Best returns the best neutral assignment, if any.
func (a *OxidationAnalysis) Best() (OxidationAssignment, bool) {
	if len(a.Assignments) == 0 {
		return OxidationAssignment{}, false
	}
	return a.Assignments[0], true
}

// AssignOxidationStates finds assignments of oxidation states to the
// elements of c whose charges sum to zero: SMACT's smact_validity test
// (Davies et al., Chem 1, 617 (2016); SMACT's screening.smact_validity and
// neutral_ratios), with pymatgen's ranking of solutions.
//
// The composition is first made integer (multiplied by the smallest
// denominator ≤ 100 that makes every amount whole; ErrNonIntegerComposition
// otherwise) and reduced by the greatest common divisor. Then:
//
//   - a single element is neutral (state 0), as in SMACT;
//   - unless NoAlloys, a composition of metals only (Element.IsMetal) is
//     neutral as an intermetallic with every state 0, as SMACT's
//     include_alloys; the analysis says so in Alloy and Detail;
//   - otherwise every choice of one state qᵢ per element from the chosen set
//     with Σ nᵢqᵢ = 0 is a solution, provided (Pauling test, SMACT's
//     eneg_states_test) every cation (q > 0) is strictly less
//     electronegative than every anion (q < 0). An element without a
//     Pauling electronegativity (He, Ne, Ar) fails the test unless its
//     state is 0. With MixedValence, and only when no single-valence
//     solution exists, the nᵢ atoms of an element may split over several
//     states of one sign (Fe3O4 = Fe²⁺ + 2 Fe³⁺ + 4 O²⁻); for each
//     achievable total charge the most frequent split is kept.
//
// The search is a depth-first enumeration over elements that prunes a
// branch as soon as the remaining elements cannot bring the partial charge
// back to zero (bounds from each element's smallest and largest total
// charge) or a choice breaks the Pauling test, so compositions of eight or
// more elements with all states stay fast.
//
// Solutions are ranked by Σ nᵢ · occurrence(element, qᵢ) over the ICSD
// bond-valence occurrence counts that pymatgen's oxi_state_guesses uses,
// so Cu2ZnSnS4 over ICSD states gives Cu⁺ Zn²⁺ Sn⁴⁺ S²⁻ before Cu²⁺ Sn²⁺.
//
// Decisions: peroxides and superoxides are not neutral with common states
// (O is −2 only), so LiO (Li2O2) is rejected unless States is AllStates,
// where O −1 balances it; mixed-valence compounds such as Fe3O4, Co3O4 and
// Pb3O4 are rejected unless MixedValence is set, as in SMACT's default.
func AssignOxidationStates(c Composition, opt OxidationOptions) (*OxidationAnalysis, error) {
	if opt.MaxAssignments <= 0 {
		opt.MaxAssignments = DefaultMaxAssignments
	}
	if opt.MaxSearchNodes <= 0 {
		opt.MaxSearchNodes = DefaultMaxSearchNodes
	}
	if c.IsEmpty() {
		return nil, fmt.Errorf("assign oxidation states: %w: empty composition", ErrBadFormula)
	}
	elems, counts, err := integerFormula(c)
	if err != nil {
		return nil, fmt.Errorf("assign oxidation states of %s: %w", c.ReducedFormula(), err)
	}
	formulaItems := make([]ElementAmount, len(elems))
	for i, e := range elems {
		formulaItems[i] = ElementAmount{e, float64(counts[i])}
	}
	res := &OxidationAnalysis{Formula: Composition{items: formulaItems}, Options: opt}
	name := res.Formula.ReducedFormula()

	zeroAssignment := func() OxidationAssignment {
		var a OxidationAssignment
		for i, e := range elems {
			a.Ions = append(a.Ions, Ion{e, 0, counts[i]})
			a.Score += counts[i] * occurrence(e, 0)
		}
		return a
	}
	if len(elems) == 1 {
		res.Neutral, res.Elemental = true, true
		res.Assignments = []OxidationAssignment{zeroAssignment()}
		res.Detail = name + " is a single element: oxidation state 0"
		return res, nil
	}
	if !opt.NoAlloys && allMetals(elems) {
		res.Neutral, res.Alloy = true, true
		res.Assignments = []OxidationAssignment{zeroAssignment()}
		res.Detail = name + " contains only metals: accepted as an intermetallic with all oxidation states 0"
		return res, nil
	}

	states := make([][]int, len(elems))
	for i, e := range elems {
		states[i] = opt.States.states(e)
		if len(states[i]) == 0 {
			res.Reason = ReasonChargeNeutrality
			res.Detail = fmt.Sprintf("%s has no %s oxidation states, so %s cannot be charge balanced", e, opt.States, name)
			return res, nil
		}
	}

	search := func(mixed, pauling bool, keep int) ([]OxidationAssignment, bool) {
		s := newChargeSearch(elems, counts, states, mixed, pauling, keep, opt.MaxSearchNodes)
		s.run()
		return s.results(), s.truncated
	}
	sols, trunc := search(false, !opt.NoElectronegativityTest, opt.MaxAssignments)
	mixedTried := false
	if len(sols) == 0 && opt.MixedValence {
		mixedTried = true
		var t2 bool
		sols, t2 = search(true, !opt.NoElectronegativityTest, opt.MaxAssignments)
		trunc = trunc || t2
	}
	res.Truncated = trunc
	if len(sols) > 0 {
		res.Neutral = true
		res.Assignments = sols
		res.Detail = fmt.Sprintf("%s is charge balanced as %s", name, sols[0])
		return res, nil
	}

	valence := "one " + opt.States.String() + " oxidation state per element"
	if mixedTried {
		valence = opt.States.String() + " oxidation states (mixed valence allowed)"
	}
	if !opt.NoElectronegativityTest {
		// Distinguish "nothing balances" from "only unphysical orderings
		// balance", so the pipeline can count the two failure kinds.
		if alt, _ := search(mixedTried, false, 1); len(alt) > 0 {
			res.Reason = ReasonElectronegativity
			res.Detail = fmt.Sprintf("%s balances only as %s, which puts a cation at least as electronegative as an anion (Pauling test)", name, alt[0])
			return res, nil
		}
	}
	res.Reason = ReasonChargeNeutrality
	res.Detail = fmt.Sprintf("no assignment of %s sums to zero for %s (%s)", valence, name, describeStates(elems, states))
	if trunc {
		res.Detail += fmt.Sprintf("; search stopped after %d nodes", opt.MaxSearchNodes)
	}
	return res, nil
}

func allMetals(elems []Element) bool {
	for _, e := range elems {
		if !e.IsMetal() {
			return false
		}
	}
	return true
}

// describeStates writes "Na: +1; Cl: -1, +1, +3".
func describeStates(elems []Element, states [][]int) string {
	parts := make([]string, len(elems))
	for i, e := range elems {
		qs := make([]string, len(states[i]))
		for k, q := range states[i] {
			qs[k] = fmt.Sprintf("%+d", q)
		}
		parts[i] = e.Symbol() + ": " + strings.Join(qs, ", ")
	}
	return strings.Join(parts, "; ")
}

// integerFormula returns the elements of c by atomic number with whole
// amounts divided by their greatest common divisor.
func integerFormula(c Composition) ([]Element, []int, error) {
	items := c.Items()
	slices.SortFunc(items, func(a, b ElementAmount) int { return int(a.Element) - int(b.Element) })
	for k := 1; k <= maxFormulaDenominator; k++ {
		counts := make([]int, len(items))
		ok := true
		for i, it := range items {
			x := it.Amount * float64(k)
			r := math.Round(x)
			if math.Abs(x-r) > 1e-6*math.Max(1, x) || r < 1 || r > math.MaxInt32 {
				ok = false
				break
			}
			counts[i] = int(r)
		}
		if !ok {
			continue
		}
		g := 0
		for _, n := range counts {
			g = GCD(g, n)
		}
		elems := make([]Element, len(items))
		for i := range items {
			elems[i] = items[i].Element
			counts[i] /= g
		}
		return elems, counts, nil
	}
	return nil, nil, ErrNonIntegerComposition
}

// chargeOption is one way an element's atoms can be charged: the ions (one
// per state used), their total charge, sign and score.
type chargeOption struct {
	ions  []Ion
	total int
	sign  int // +1 cation, −1 anion, 0 neutral
	score int
}

// chargeSearch enumerates one option per element with zero total charge.
type chargeSearch struct {
	elems    []Element
	options  [][]chargeOption // by search position
	order    []int            // search position → element index
	minRest  []int            // smallest total charge of positions ≥ p
	maxRest  []int            // largest total charge of positions ≥ p
	pauling  bool
	keep     int
	maxNodes int

	nodes     int
	truncated bool
	chosen    []int // option index per position
	found     []OxidationAssignment
}

func newChargeSearch(elems []Element, counts []int, states [][]int, mixed, pauling bool, keep, maxNodes int) *chargeSearch {
	s := &chargeSearch{elems: elems, pauling: pauling, keep: keep, maxNodes: maxNodes}
	opts := make([][]chargeOption, len(elems))
	for i, e := range elems {
		if mixed && counts[i] > 1 && counts[i] <= maxMixedValenceAtoms {
			opts[i] = mixedOptions(e, counts[i], states[i])
		} else {
			opts[i] = singleOptions(e, counts[i], states[i])
		}
		// Most frequent first, so good solutions are found early.
		slices.SortStableFunc(opts[i], func(a, b chargeOption) int { return b.score - a.score })
	}
	// Fewest options first: the bounds then prune near the root.
	s.order = make([]int, len(elems))
	for i := range s.order {
		s.order[i] = i
	}
	slices.SortStableFunc(s.order, func(a, b int) int { return len(opts[a]) - len(opts[b]) })
	s.options = make([][]chargeOption, len(elems))
	for p, i := range s.order {
		s.options[p] = opts[i]
	}
	n := len(elems)
	s.minRest = make([]int, n+1)
	s.maxRest = make([]int, n+1)
	for p := n - 1; p >= 0; p-- {
		lo, hi := math.MaxInt, math.MinInt
		for _, o := range s.options[p] {
			lo, hi = min(lo, o.total), max(hi, o.total)
		}
		s.minRest[p] = s.minRest[p+1] + lo
		s.maxRest[p] = s.maxRest[p+1] + hi
	}
	s.chosen = make([]int, n)
	return s
}

func sign(q int) int {
	switch {
	case q > 0:
		return 1
	case q < 0:
		return -1
	}
	return 0
}

func singleOptions(e Element, n int, states []int) []chargeOption {
	out := make([]chargeOption, 0, len(states))
	for _, q := range states {
		out = append(out, chargeOption{
			ions:  []Ion{{e, q, n}},
			total: n * q,
			sign:  sign(q),
			score: n * occurrence(e, q),
		})
	}
	return out
}

// mixedOptions returns, for each sign, every total charge that n atoms of e
// can carry with states of that sign. Each is scored by its most frequent
// split over the states (a knapsack over atoms: best[m][t] is the best
// score of m atoms with total charge t), pymatgen's ranking; the split
// listed is the nearest in states that reaches the total: one state, else
// two neighbouring states of the list (Fe²⁺/Fe³⁺ in Fe3O4, Co²⁺/Co³⁺ in
// Co3O4, Pb²⁺/Pb⁴⁺ in Pb3O4), the most frequent such; only a total that no
// neighbouring pair reaches lists the most frequent split. A state 0 is
// never mixed with others.
func mixedOptions(e Element, n int, states []int) []chargeOption {
	var out []chargeOption
	for _, sg := range []int{1, -1} {
		var group []int
		for _, q := range states {
			if sign(q) == sg {
				group = append(group, q)
			}
		}
		if len(group) == 0 {
			continue
		}
		slices.Sort(group)
		if sg < 0 {
			slices.Reverse(group) // −1 before −2: same order of magnitude as cations
		}
		qmin, qmax := slices.Min(group), slices.Max(group)
		width := n*(qmax-qmin) + 1
		// Totals of m atoms lie in [m·qmin, m·qmax].
		idx := func(m, t int) int { return m*width + t - m*qmin }
		best := make([]int, (n+1)*width)
		from := make([]int8, (n+1)*width) // index into group of the last atom's state
		for i := range best {
			best[i] = -1
		}
		best[idx(0, 0)] = 0
		occ := make([]int, len(group))
		for k, q := range group {
			occ[k] = occurrence(e, q)
		}
		for m := 0; m < n; m++ {
			for t := m * qmin; t <= m*qmax; t++ {
				b := best[idx(m, t)]
				if b < 0 {
					continue
				}
				for k, q := range group {
					j := idx(m+1, t+q)
					if v := b + occ[k]; v > best[j] {
						best[j], from[j] = v, int8(k)
					}
				}
			}
		}
		for t := n * qmin; t <= n*qmax; t++ {
			if best[idx(n, t)] < 0 {
				continue
			}
			per, ok := nearestSplit(group, occ, n, t)
			if !ok {
				per = make([]int, len(group))
				for m, tt := n, t; m > 0; m-- {
					k := from[idx(m, tt)]
					per[k]++
					tt -= group[k]
				}
			}
			o := chargeOption{total: t, sign: sg, score: best[idx(n, t)]}
			for k, q := range group {
				if per[k] > 0 {
					o.ions = append(o.ions, Ion{e, q, per[k]})
				}
			}
			slices.SortFunc(o.ions, func(a, b Ion) int { return a.State - b.State })
			out = append(out, o)
		}
	}
	for _, q := range states {
		if q == 0 {
			out = append(out, chargeOption{ions: []Ion{{e, 0, n}}, score: n * occurrence(e, 0)})
		}
	}
	return out
}

// nearestSplit returns how many of n atoms take each state of group
// (occurrences occ) to carry total t with one state, or else two states
// neighbouring in value: the narrowest such split, the most frequent among
// equally narrow ones.
func nearestSplit(group, occ []int, n, t int) ([]int, bool) {
	order := make([]int, len(group)) // indices of group by increasing state
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return group[a] - group[b] })
	var per []int
	bestGap, bestScore := math.MaxInt, -1
	consider := func(a, b, na, nb int) {
		gap, score := group[b]-group[a], na*occ[a]+nb*occ[b]
		if gap < bestGap || (gap == bestGap && score > bestScore) {
			per = make([]int, len(group))
			per[a] += na
			per[b] += nb
			bestGap, bestScore = gap, score
		}
	}
	for _, a := range order {
		if n*group[a] == t {
			consider(a, a, n, 0)
		}
	}
	for i := 0; i+1 < len(order); i++ {
		a, b := order[i], order[i+1]
		step := group[b] - group[a]
		if d := t - n*group[a]; d > 0 && d%step == 0 && d/step < n {
			consider(a, b, n-d/step, d/step)
		}
	}
	return per, per != nil
}

func (s *chargeSearch) run() {
	s.visit(0, 0, math.Inf(-1), math.Inf(1))
}

// visit chooses an option for position p given the partial charge and the
// largest cation and smallest anion electronegativity so far.
func (s *chargeSearch) visit(p, charge int, maxCationX, minAnionX float64) {
	if s.truncated {
		return
	}
	s.nodes++
	if s.nodes > s.maxNodes {
		s.truncated = true
		return
	}
	if p == len(s.order) {
		if charge == 0 {
			s.record()
		}
		return
	}
	e := s.elems[s.order[p]]
	x, hasX := e.Electronegativity()
	for k, o := range s.options[p] {
		rest := charge + o.total
		if rest+s.minRest[p+1] > 0 || rest+s.maxRest[p+1] < 0 {
			continue
		}
		mc, ma := maxCationX, minAnionX
		if s.pauling && o.sign != 0 {
			if !hasX {
				continue
			}
			if o.sign > 0 {
				if x >= minAnionX {
					continue
				}
				mc = math.Max(mc, x)
			} else {
				if x <= maxCationX {
					continue
				}
				ma = math.Min(ma, x)
			}
		}
		s.chosen[p] = k
		s.visit(p+1, rest, mc, ma)
	}
}

func (s *chargeSearch) record() {
	var a OxidationAssignment
	for p, k := range s.chosen {
		o := s.options[p][k]
		a.Ions = append(a.Ions, o.ions...)
		a.Score += o.score
	}
	slices.SortFunc(a.Ions, func(x, y Ion) int {
		if x.Element != y.Element {
			return int(x.Element) - int(y.Element)
		}
		return x.State - y.State
	})
	// Keep the best `keep`, sorted; insertion keeps this O(keep) per hit.
	pos, _ := slices.BinarySearchFunc(s.found, a, compareAssignments)
	if pos >= s.keep {
		return
	}
	s.found = slices.Insert(s.found, pos, a)
	if len(s.found) > s.keep {
		s.found = s.found[:s.keep]
	}
}

func (s *chargeSearch) results() []OxidationAssignment { return s.found }

// compareAssignments orders assignments best first: higher score, fewer
// ions (less mixed valence), then ion by ion by state, higher states first
// (an arbitrary but fixed order).
func compareAssignments(a, b OxidationAssignment) int {
	if a.Score != b.Score {
		return b.Score - a.Score
	}
	if len(a.Ions) != len(b.Ions) {
		return len(a.Ions) - len(b.Ions)
	}
	for i := range a.Ions {
		if a.Ions[i].Element != b.Ions[i].Element {
			return int(a.Ions[i].Element) - int(b.Ions[i].Element)
		}
		if a.Ions[i].State != b.Ions[i].State {
			return b.Ions[i].State - a.Ions[i].State
		}
		if a.Ions[i].Count != b.Ions[i].Count {
			return b.Ions[i].Count - a.Ions[i].Count
		}
	}
	return 0
}

// ParseOxidationStateSet reads a set's name: "common", "icsd" or "all".
func ParseOxidationStateSet(name string) (OxidationStateSet, error) {
	for _, s := range []OxidationStateSet{CommonStates, ICSDStates, AllStates} {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("%q: want common, icsd or all", name)
}
