package evolve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Parent is a member of an island's pools, as a generator sees it.
type Parent struct {
	ID        string
	Structure *crystal.Structure
	// Score is LLEMA's S (App. B.2); Feasible whether every margin is ≥ 0.
	Score    float64
	Feasible bool
	// Properties are the evaluated values by canonical property name
	// ("band_gap", "formation_energy_per_atom", "e_above_hull"); the
	// property-directed operator reads them.
	Properties map[string]float64
}

// Input is one generation's request.
type Input struct {
	Task task.Task
	// Successes and Failures are the island's top-k of each pool, best
	// first (LLEMA §2.4). Both empty: proposals are built from scratch.
	Successes, Failures []Parent
	// Slots is the number of candidates wanted (LLEMA's b).
	Slots int
	// Rules are indices into Rules of the rules enabled for this
	// generation (LLEMA samples 6 of the 14 after generation 0, App. D.2);
	// nil enables every operator.
	Rules []int
	// Allowed is the proposer's filter (directives and element rules); a
	// composition it refuses is never proposed. Nil allows everything.
	Allowed func(crystal.Composition) bool
	// Known reports whether a reduced formula is in the reference data.
	// Known compositions are proposed only when nothing novel could be
	// made (LLEMA §4.2 counts them as memorisation). Nil: nothing is known.
	Known func(reducedFormula string) bool
	// Seen reports whether a structure fingerprint (crystal.Fingerprint) is
	// already in the campaign; such structures are not proposed again.
	Seen func(fingerprint string) bool
	// RNG drives every random choice: the same seed gives the same
	// proposals. Nil uses a fixed seed.
	RNG *rand.Rand
}

// Proposal is one proposed structure.
type Proposal struct {
	Structure *crystal.Structure
	// Formula is the reduced formula.
	Formula string
	// Fingerprint is crystal.Fingerprint of the structure.
	Fingerprint string
	// Prototype is the library prototype the structure was built in or
	// inherits from its parent, "" when there is none.
	Prototype string
	Parents   []string
	// Operator is one of the Op* names; Rule the number (1–14) of the
	// LLEMA rule it implements, 0 for the baseline.
	Operator  string
	Rule      int
	Rationale string
	// Known marks a reference composition, proposed because nothing novel
	// could be made.
	Known bool
}

// Rejection is a proposal that failed validity or the task's element rules.
type Rejection struct {
	Proposal Proposal
	Reasons  []string
}

// Budget of a generation.
const (
	// attemptsPerSlot bounds the structures tried per wanted candidate.
	attemptsPerSlot = 40
	// minAttempts is the least number of tries of a generation.
	minAttempts = 60
	// maxCellAtoms bounds the cells operators make (supercells for partial
	// substitution); the surrogate's cost grows with the cell.
	maxCellAtoms = 48
	// maxElements bounds the distinct elements of a proposal.
	maxElements = 5
)

// Propose runs one generation: it picks an operator among those of the
// enabled rules, parents from the pools (successes about three times as
// often as failures, better ones more often), and a move of that operator
// weighted by its chemical plausibility; builds the structure; and keeps
// it when it passes crystal.Validate (default options), the task's element
// rules and Allowed, is not a structural duplicate (within the generation,
// of a parent, or Seen) and has a composition not yet proposed in the
// generation. Known compositions are set aside and used only to fill the
// slots left when the attempt budget (40 per slot, at least 60) is spent.
// Failed validity or element-rule checks are returned as rejections (at
// most 2·Slots+2). Same Input and RNG seed, same output.
func Propose(in Input) ([]Proposal, []Rejection) {
	if in.Slots <= 0 {
		return nil, nil
	}
	g := newGeneration(in)
	g.run(g.pickMove)
	return g.out, g.rejected
}

// generation is the state of one Propose call.
type generation struct {
	in      Input
	rng     *rand.Rand
	palette []crystal.Element
	cations []crystal.Element // palette elements that can be cations
	anions  []crystal.Element // palette elements that can be anions
	parents []*parentInfo
	enabled map[string]bool
	widened bool // every operator enabled after the sampled rules ran dry

	cache    map[string]*moveSet
	fps      map[string]bool // fingerprints taken (parents and proposals)
	formulas map[string]bool // formulas proposed
	known    []move          // known compositions, set aside
	out      []Proposal
	rejected []Rejection
}

// moveSet is the moves of one operator on one choice of parents, and which
// were tried.
type moveSet struct {
	moves []move
	tried []bool
}

// move is one concrete proposal before it is built.
type move struct {
	op        string
	parents   []string
	comp      crystal.Composition
	proto     string // prototype name, "" when none
	build     func() (*crystal.Structure, error)
	weight    float64
	rationale string
}

func newGeneration(in Input) *generation {
	rng := in.RNG
	if rng == nil {
		rng = rand.New(rand.NewPCG(0x5eed, 0xc0ffee))
	}
	g := &generation{
		in: in, rng: rng,
		enabled:  enabledOperators(in.Rules),
		cache:    map[string]*moveSet{},
		fps:      map[string]bool{},
		formulas: map[string]bool{},
	}
	g.palette = palette(in.Task.Elements.Allows)
	for _, e := range g.palette {
		if len(cationStates(e)) > 0 {
			g.cations = append(g.cations, e)
		}
		if _, ok := anionState(e); ok {
			g.anions = append(g.anions, e)
		}
	}
	for i, p := range in.Successes {
		if pi := analyseParent(p, true, i, in.Task); pi != nil {
			pi.index = len(g.parents)
			g.parents = append(g.parents, pi)
		}
	}
	for i, p := range in.Failures {
		if pi := analyseParent(p, false, i, in.Task); pi != nil {
			pi.index = len(g.parents)
			g.parents = append(g.parents, pi)
		}
	}
	for _, p := range g.parents {
		if p.fp != "" {
			g.fps[p.fp] = true
		}
	}
	return g
}

// run tries moves from next until the slots are filled or the budget is
// spent, then fills what is left with the known compositions set aside.
func (g *generation) run(next func() (move, bool)) {
	budget := max(attemptsPerSlot*g.in.Slots, minAttempts)
	for tries, idle := 0, 0; tries < budget && len(g.out) < g.in.Slots; {
		m, ok := next()
		if !ok {
			// The enabled operators have nothing (left) to offer these
			// parents: fall back to every operator once, then stop.
			if idle++; idle > 2*budget {
				if g.widened {
					break
				}
				g.enabled, g.widened, idle = enabledOperators(nil), true, 0
			}
			continue
		}
		tries++
		g.consider(m, false)
	}
	for _, m := range g.known {
		if len(g.out) >= g.in.Slots {
			break
		}
		g.consider(m, true)
	}
}

// pickMove chooses an operator, its parents and one untried move.
func (g *generation) pickMove() (move, bool) {
	op, ps, ok := g.pickOperator()
	if !ok {
		return move{}, false
	}
	key := op.name
	for _, p := range ps {
		key += "|" + strconv.Itoa(p.index)
	}
	set := g.cache[key]
	if set == nil || (op.arity == 0 && allTried(set)) {
		set = &moveSet{moves: g.admissible(op.moves(g, ps))}
		set.tried = make([]bool, len(set.moves))
		g.cache[key] = set
	}
	i, ok := g.sampleMove(set)
	if !ok {
		return move{}, false
	}
	set.tried[i] = true
	return set.moves[i], true
}

// admissible drops the moves whose composition breaks the task's element
// rules (the must-contain rules; the palette already keeps out excluded
// elements) or that Allowed refuses, which are avoided rather than tried,
// and those with more than maxElements elements. Compositions of more than
// three elements are down-weighted by 0.35 per extra element: each
// added element opens more competing phases on the hull, and repeated
// partial substitutions would otherwise grow ever longer formulas.
func (g *generation) admissible(ms []move) []move {
	out := ms[:0]
	for _, m := range ms {
		n := m.comp.Len()
		if n > maxElements || len(g.in.Task.Check(m.comp)) > 0 {
			continue
		}
		if n > 3 {
			m.weight *= math.Pow(0.35, float64(n-3))
		}
		if g.in.Allowed != nil && !g.in.Allowed(m.comp) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func allTried(s *moveSet) bool {
	for _, t := range s.tried {
		if !t {
			return false
		}
	}
	return true
}

// sampleMove draws an untried move with probability proportional to its
// weight.
func (g *generation) sampleMove(s *moveSet) (int, bool) {
	total := 0.0
	for i, m := range s.moves {
		if !s.tried[i] && m.weight > 0 {
			total += m.weight
		}
	}
	if total <= 0 {
		return 0, false
	}
	x := g.rng.Float64() * total
	last := -1
	for i, m := range s.moves {
		if s.tried[i] || m.weight <= 0 {
			continue
		}
		last = i
		if x -= m.weight; x < 0 {
			return i, true
		}
	}
	return last, last >= 0
}

// consider builds and checks a move and records the outcome. Known
// compositions are set aside unless allowKnown.
func (g *generation) consider(m move, allowKnown bool) {
	formula := m.comp.ReducedFormula()
	if g.formulas[formula] && !allowKnown {
		return
	}
	if g.in.Allowed != nil && !g.in.Allowed(m.comp) {
		return
	}
	known := g.in.Known != nil && g.in.Known(formula)
	if known && !allowKnown {
		g.known = append(g.known, m)
		return
	}
	p := Proposal{Formula: formula, Prototype: m.proto, Parents: m.parents, Operator: m.op,
		Rule: ruleOf(m.op), Rationale: m.rationale, Known: known}
	if reasons := g.in.Task.Check(m.comp); len(reasons) > 0 {
		g.reject(p, reasons)
		return
	}
	s, err := m.build()
	if err != nil {
		g.reject(p, []string{"build: " + err.Error()})
		return
	}
	p.Structure = s
	rep, err := crystal.Validate(s, crystal.ValidityOptions{})
	if err != nil {
		g.reject(p, []string{err.Error()})
		return
	}
	if !rep.Valid() {
		g.reject(p, rep.Reasons())
		return
	}
	fp, err := crystal.Fingerprint(s)
	if err != nil {
		g.reject(p, []string{"fingerprint: " + err.Error()})
		return
	}
	if g.fps[fp] || (g.in.Seen != nil && g.in.Seen(fp)) {
		return
	}
	g.fps[fp] = true
	g.formulas[formula] = true
	p.Fingerprint = fp
	g.out = append(g.out, p)
}

func (g *generation) reject(p Proposal, reasons []string) {
	if len(g.rejected) < 2*g.in.Slots+2 {
		g.rejected = append(g.rejected, Rejection{Proposal: p, Reasons: reasons})
	}
}

// operator is one chemical move type.
type operator struct {
	name string
	// weight is the operator's base frequency.
	weight float64
	// arity is the number of parents: 0 (from scratch), 1 or 2.
	arity int
	moves func(g *generation, ps []*parentInfo) []move
}

// operators lists every operator with its base weight. Substitutions that
// keep the parent's structure come first: they make the smallest steps,
// which is what exploiting a good parent needs.
var operators = []operator{
	{OpSameGroup, 0.8, 1, sameGroupMoves},
	{OpSimilarElement, 1.0, 1, similarElementMoves},
	{OpPartialSubstitution, 1.4, 1, partialSubstitutionMoves},
	{OpOxidationState, 0.6, 1, oxidationStateMoves},
	{OpIonicRadius, 0.8, 1, ionicRadiusMoves},
	{OpPropertyDirected, 1.2, 1, propertyDirectedMoves},
	{OpChargeCoupled, 0.6, 1, chargeCoupledMoves},
	{OpIsoelectronic, 0.4, 1, isoelectronicMoves},
	{OpAnionExchange, 0.25, 1, anionExchangeMoves},
	{OpPrototypeFill, 0.8, 1, prototypeFillMoves},
	{OpTemplateFill, 0.35, 1, templateFillMoves},
	{OpCoordinationChange, 0.4, 1, coordinationChangeMoves},
	{OpRedox, 0.4, 1, redoxMoves},
	{OpCrossover, 0.8, 2, crossoverMoves},
}

var scratchOperator = operator{OpScratch, 1, 0, scratchMoves}

// pickOperator chooses an enabled operator and its parents. With no
// parents it builds from scratch.
func (g *generation) pickOperator() (operator, []*parentInfo, bool) {
	if len(g.parents) == 0 {
		return scratchOperator, nil, true
	}
	var ops []operator
	var weights []float64
	for _, op := range operators {
		if !g.enabled[op.name] || op.arity > len(g.parents) {
			continue
		}
		ops = append(ops, op)
		weights = append(weights, op.weight)
	}
	if len(ops) == 0 {
		return operator{}, nil, false
	}
	op := ops[weightedIndex(g.rng, weights)]
	ps := []*parentInfo{g.pickParent(nil)}
	if op.arity == 2 {
		ps = append(ps, g.pickParent(ps[0]))
	}
	return op, ps, true
}

// pickParent draws a parent other than not: weight 1/(1+rank) in the
// success pool and 0.35/(1+rank) in the failure pool (exploitation with
// some exploration, as LLEMA shows both pools), halved for a parent known
// to be unstable.
func (g *generation) pickParent(not *parentInfo) *parentInfo {
	weights := make([]float64, len(g.parents))
	for i, p := range g.parents {
		if p != not {
			weights[i] = p.weight
		}
	}
	return g.parents[weightedIndex(g.rng, weights)]
}

// weightedIndex draws i with probability w[i]/Σw (uniformly when all are
// zero).
func weightedIndex(rng *rand.Rand, w []float64) int {
	total := 0.0
	for _, x := range w {
		if x > 0 {
			total += x
		}
	}
	if total <= 0 {
		return rng.IntN(len(w))
	}
	x := rng.Float64() * total
	for i, v := range w {
		if v <= 0 {
			continue
		}
		if x -= v; x < 0 {
			return i
		}
	}
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			return i
		}
	}
	return 0
}

// substituted returns the composition of c with element from replaced by
// to (to must not be in c).
func substituted(c crystal.Composition, from, to crystal.Element) crystal.Composition {
	items := c.Items()
	for i := range items {
		if items[i].Element == from {
			items[i].Element = to
		}
	}
	out, _ := crystal.NewComposition(items...)
	return out
}

// describe writes ions for rationales: "Mg2+".
func (i ion) String() string {
	switch {
	case i.q == 1:
		return i.el.Symbol() + "+"
	case i.q == -1:
		return i.el.Symbol() + "-"
	case i.q > 0:
		return fmt.Sprintf("%s%d+", i.el.Symbol(), i.q)
	case i.q < 0:
		return fmt.Sprintf("%s%d-", i.el.Symbol(), -i.q)
	}
	return i.el.Symbol()
}

// sortedElements returns the keys of m in atomic-number order, so map
// iteration never decides a random draw.
func sortedElements[V any](m map[crystal.Element]V) []crystal.Element {
	out := make([]crystal.Element, 0, len(m))
	for e := range m {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}
