package evolve

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

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
	// SeenFormula reports whether the campaign has a structure of a reduced
	// formula. A structure of a formula it has not, that is no parent's
	// and not known, cannot be a duplicate: it is proposed without a
	// fingerprint (Proposal.Fingerprint ""), which saves computing one.
	// Nil: every proposal is fingerprinted.
	SeenFormula func(reducedFormula string) bool
	// SeenStructure reports whether this very structure
	// (crystal.Structure.Identical) is in the campaign. Builds are
	// deterministic, so a move proposed without a fingerprint in an earlier
	// generation rebuilds that structure: a duplicate, known without
	// computing its fingerprint. Nil: only fingerprints are compared.
	SeenStructure func(*crystal.Structure) bool
	// RNG drives every random choice: the same seed gives the same
	// proposals. Nil uses a fixed seed.
	RNG *rand.Rand
	// Guidance is what the campaign's reflections say (GuidanceFrom); the
	// zero value changes nothing.
	Guidance Guidance
}

// Proposal is one proposed structure.
type Proposal struct {
	Structure *crystal.Structure
	// Formula is the reduced formula.
	Formula string
	// Fingerprint is crystal.Fingerprint of the structure, "" when
	// Input.SeenFormula made it unnecessary.
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
//
// Propose remembers nothing between calls; a long-lived Generator gives
// the same proposals faster.
func Propose(in Input) ([]Proposal, []Rejection) {
	return new(Generator).Propose(in)
}

// generation is the state of one Propose call.
type generation struct {
	in      Input
	rng     *rand.Rand
	gen     *Generator
	ts      *taskState
	palette []crystal.Element
	cations []crystal.Element // palette elements that can be cations
	anions  []crystal.Element // palette elements that can be anions
	parents []*parentInfo
	enabled map[string]bool
	widened bool // every operator enabled after the sampled rules ran dry
	// ops and opWeights are the enabled operators that the parents allow,
	// with their base weights; parentWeights the parents' weights.
	ops           []operator
	opWeights     []float64
	parentWeights []float64

	// Scratch space of the fills: siteCandidates' results, fill's ions
	// and elements used, the ions a draw keeps, a fill's amounts.
	scratchEls     []crystal.Element
	scratchWs      []float64
	scratchIons    []ion
	scratchUsed    []crystal.Element
	scratchKeep    []ion
	scratchAmounts []ionAmount

	sets     map[setKey]*moveSet
	fps      map[string]bool // fingerprints taken (parents and proposals)
	formulas map[string]bool // formulas proposed
	parentFs map[string]bool // the parents' reduced formulas
	known    []move          // known compositions, set aside
	out      []Proposal
	rejected []Rejection
}

// setKey identifies an operator's moves on parents (by index).
type setKey struct {
	op   string
	a, b int
}

// moveSet is the moves of one operator on one choice of parents, and which
// were tried.
type moveSet struct {
	moves []move
	tried []bool
}

// move is one concrete proposal before it is built.
type move struct {
	op      string
	parents []string
	comp    crystal.Composition
	formula string // comp's reduced formula
	proto   string // prototype name, "" when none
	// recipe names what build makes (crystal.Build of a composition in a
	// prototype, substitutions in a parent's cell), exactly: equal recipes
	// build equal structures. Generator remembers outcomes by it; "" for a
	// move not to remember.
	recipe string
	build  func() (*crystal.Structure, error)
	// draw, when not nil, is the random choice of sites the move still
	// needs (see siteDraw); build and recipe are set once it is drawn.
	draw    *siteDraw
	weight  float64
	explain func() string // the rationale, written when needed
	// admitted: the move passed this generation's admissible, so the
	// element rules and Allowed need not be checked again.
	admitted bool
}

func newGeneration(gen *Generator, in Input) *generation {
	rng := in.RNG
	if rng == nil {
		rng = rand.New(rand.NewPCG(0x5eed, 0xc0ffee))
	}
	ts := gen.forTask(in.Task)
	g := &generation{
		in: in, rng: rng, gen: gen, ts: ts,
		palette: ts.palette, cations: ts.cations, anions: ts.anions,
		enabled:  enabledOperators(in.Rules),
		sets:     map[setKey]*moveSet{},
		fps:      map[string]bool{},
		formulas: map[string]bool{},
		parentFs: map[string]bool{},
	}
	for i, p := range in.Successes {
		if pi := analyseParent(gen, p, true, i, in.Task); pi != nil {
			pi.index = len(g.parents)
			g.parents = append(g.parents, pi)
		}
	}
	for i, p := range in.Failures {
		if pi := analyseParent(gen, p, false, i, in.Task); pi != nil {
			pi.index = len(g.parents)
			g.parents = append(g.parents, pi)
		}
	}
	for _, p := range g.parents {
		if p.fp != "" {
			g.fps[p.fp] = true
		}
		g.parentFs[p.formula] = true
		g.parentWeights = append(g.parentWeights, p.weight)
	}
	g.enable()
	return g
}

// enable lists the enabled operators the parents allow.
func (g *generation) enable() {
	g.ops, g.opWeights = g.ops[:0], g.opWeights[:0]
	for _, op := range operators {
		if g.enabled[op.name] && op.arity <= len(g.parents) {
			g.ops = append(g.ops, op)
			g.opWeights = append(g.opWeights, op.weight*g.in.Guidance.operator(op.name))
		}
	}
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
				g.enable()
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
	op, a, b, ok := g.pickOperator()
	if !ok {
		return move{}, false
	}
	key := setKey{op.name, a, b}
	set := g.sets[key]
	if set == nil || (op.arity == 0 && allTried(set)) {
		var ps []*parentInfo
		if a >= 0 {
			ps = append(ps, g.parents[a])
		}
		if b >= 0 {
			ps = append(ps, g.parents[b])
		}
		set = &moveSet{moves: g.movesOf(op, ps)}
		set.tried = make([]bool, len(set.moves))
		g.sets[key] = set
	}
	i, ok := g.sampleMove(set)
	if !ok {
		return move{}, false
	}
	set.tried[i] = true
	return set.moves[i], true
}

// movesOf returns the admissible moves of op on parents ps for this
// generation. The moves of an operator that draws nothing at random while
// making them are remembered by the Generator (for the task, the parents'
// structures and needs); those replacing random sites draw them here, from
// the generation's RNG, in the order the operator would.
func (g *generation) movesOf(op operator, ps []*parentInfo) []move {
	var ml *moveList
	var key string
	if !op.random {
		key = movesKey(op.name, ps)
		ml, _ = g.ts.movesOf(g.gen, key)
	}
	if ml == nil {
		ml = &moveList{}
		ml.moves = g.ruleAdmissible(op.moves(g, ps, ml))
		if !op.random {
			g.ts.rememberMoves(g.gen, key, ml)
		}
	}
	var perms [][]int
	for _, n := range ml.draws {
		perms = append(perms, g.rng.Perm(n))
	}
	var parents []string
	for _, p := range ps {
		parents = append(parents, p.ID)
	}
	out := make([]move, 0, len(ml.moves))
	for _, m := range ml.moves {
		if g.in.Allowed != nil && !g.in.Allowed(m.comp) {
			continue
		}
		m.parents, m.admitted = parents, true
		if m.draw != nil {
			m.draw.complete(&m, perms[m.draw.group])
		}
		out = append(out, m)
	}
	return out
}

// ruleAdmissible drops the moves whose composition breaks the task's
// element rules (the must-contain rules; the palette already keeps out
// excluded elements), which are avoided rather than tried, and those with
// more than maxElements elements. Compositions of more than three elements
// are down-weighted by 0.35 per extra element: each added element opens
// more competing phases on the hull, and repeated partial substitutions
// would otherwise grow ever longer formulas. It also writes each move's
// reduced formula.
func (g *generation) ruleAdmissible(ms []move) []move {
	out := ms[:0]
	for _, m := range ms {
		n := m.comp.Len()
		if n > maxElements {
			continue
		}
		if m.formula == "" {
			m.formula = m.comp.ReducedFormula()
		}
		if !g.ts.obeysRules(g.gen, m.formula, m.comp) {
			continue
		}
		if n > 3 {
			m.weight *= math.Pow(0.35, float64(n-3))
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
	weight := func(m *move) float64 { return m.weight }
	if g.in.Guidance.weighsCompositions() {
		weight = func(m *move) float64 { return m.weight * g.in.Guidance.composition(m.comp) }
	}
	total := 0.0
	for i := range s.moves {
		if w := weight(&s.moves[i]); !s.tried[i] && w > 0 {
			total += w
		}
	}
	if total <= 0 {
		return 0, false
	}
	x := g.rng.Float64() * total
	last := -1
	for i := range s.moves {
		w := weight(&s.moves[i])
		if s.tried[i] || w <= 0 {
			continue
		}
		last = i
		if x -= w; x < 0 {
			return i, true
		}
	}
	return last, last >= 0
}

// consider builds and checks a move and records the outcome. Known
// compositions are set aside unless allowKnown. What building a move gives
// is remembered by its recipe, so a move tried in an earlier generation is
// not built again unless it is proposed (or rejected: a proposal carries
// its structure).
func (g *generation) consider(m move, allowKnown bool) {
	formula := m.formula
	if formula == "" {
		formula = m.comp.ReducedFormula()
	}
	if g.formulas[formula] && !allowKnown {
		return
	}
	if !m.admitted && g.in.Allowed != nil && !g.in.Allowed(m.comp) {
		return
	}
	known := g.in.Known != nil && g.in.Known(formula)
	if known && !allowKnown {
		g.known = append(g.known, m)
		return
	}
	p := Proposal{Formula: formula, Prototype: m.proto, Parents: m.parents, Operator: m.op,
		Rule: ruleOf(m.op), Known: known}
	if !m.admitted {
		if reasons := g.in.Task.Check(m.comp); len(reasons) > 0 {
			p.Rationale = m.explain()
			g.reject(p, reasons)
			return
		}
	}
	// A structure can only duplicate one of its own reduced formula.
	keyed := known || g.formulas[formula] || g.parentFs[formula] ||
		g.in.SeenFormula == nil || g.in.SeenFormula(formula)
	var s *crystal.Structure
	o, remembered := outcome{}, false
	if m.recipe != "" {
		o, remembered = g.gen.outcome(m.recipe)
	}
	// A remembered outcome lacks the fingerprint when the structure's
	// formula was new to the campaign that built it.
	if !remembered || keyed && o.built && o.reasons == nil && o.fp == "" {
		if remembered {
			s = rebuild(m, &o)
		} else {
			s, o = buildOutcome(m)
		}
		if keyed && o.reasons == nil {
			if g.in.SeenStructure != nil && g.in.SeenStructure(s) {
				if !remembered && m.recipe != "" {
					g.gen.remember(m.recipe, o)
				}
				return
			}
			o = fingerprinted(s)
		}
		if m.recipe != "" {
			g.gen.remember(m.recipe, o)
		}
	}
	if o.reasons == nil && o.fp != "" && (g.fps[o.fp] || (g.in.Seen != nil && g.in.Seen(o.fp))) {
		return
	}
	if s == nil && o.built {
		s = rebuild(m, &o)
	}
	p.Structure = s
	p.Rationale = m.explain()
	if o.reasons != nil {
		g.reject(p, slices.Clone(o.reasons))
		return
	}
	if o.fp != "" {
		g.fps[o.fp] = true
	}
	g.formulas[formula] = true
	p.Fingerprint = o.fp
	g.out = append(g.out, p)
}

// buildOutcome builds m and checks it: the structure, and why it is
// rejected if it is. The fingerprint is left to fingerprinted.
func buildOutcome(m move) (*crystal.Structure, outcome) {
	s, err := m.build()
	if err != nil {
		return nil, outcome{reasons: []string{"build: " + err.Error()}}
	}
	rep, err := crystal.Validate(s, crystal.ValidityOptions{})
	if err != nil {
		return s, outcome{built: true, reasons: []string{err.Error()}}
	}
	if !rep.Valid() {
		return s, outcome{built: true, reasons: rep.Reasons()}
	}
	return s, outcome{built: true}
}

// fingerprinted is the outcome of a valid build s with its fingerprint.
func fingerprinted(s *crystal.Structure) outcome {
	fp, err := crystal.Fingerprint(s)
	if err != nil {
		return outcome{built: true, reasons: []string{"fingerprint: " + err.Error()}}
	}
	return outcome{built: true, fp: fp}
}

// rebuild builds a move whose outcome o was remembered: builds are
// deterministic, so this is the structure checked before. Should it fail
// after all, o says why.
func rebuild(m move, o *outcome) *crystal.Structure {
	s, err := m.build()
	if err != nil {
		*o = outcome{reasons: []string{"build: " + err.Error()}}
	}
	return s
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
	// random: the operator draws from the generation's RNG while making
	// its moves (beyond the sites of siteDraw), so they are not
	// remembered.
	random bool
	// moves makes the operator's moves on ps; draws of random sites are
	// appended to ml.draws.
	moves func(g *generation, ps []*parentInfo, ml *moveList) []move
}

// operators lists every operator with its base weight. Substitutions that
// keep the parent's structure come first: they make the smallest steps,
// which is what exploiting a good parent needs.
var operators = []operator{
	{OpSameGroup, 0.8, 1, false, sameGroupMoves},
	{OpSimilarElement, 1.0, 1, false, similarElementMoves},
	{OpPartialSubstitution, 1.4, 1, false, partialSubstitutionMoves},
	{OpOxidationState, 0.6, 1, false, oxidationStateMoves},
	{OpIonicRadius, 0.8, 1, false, ionicRadiusMoves},
	{OpPropertyDirected, 1.2, 1, false, propertyDirectedMoves},
	{OpChargeCoupled, 0.6, 1, false, chargeCoupledMoves},
	{OpIsoelectronic, 0.4, 1, false, isoelectronicMoves},
	{OpAnionExchange, 0.25, 1, false, anionExchangeMoves},
	{OpPrototypeFill, 0.8, 1, true, prototypeFillMoves},
	{OpTemplateFill, 0.35, 1, true, templateFillMoves},
	{OpCoordinationChange, 0.4, 1, false, coordinationChangeMoves},
	{OpRedox, 0.4, 1, false, redoxMoves},
	{OpCrossover, 0.8, 2, false, crossoverMoves},
}

var scratchOperator = operator{OpScratch, 1, 0, true, scratchMoves}

// pickOperator chooses an enabled operator and its parents (indices, −1
// for none). With no parents it builds from scratch.
func (g *generation) pickOperator() (op operator, a, b int, ok bool) {
	if len(g.parents) == 0 {
		return scratchOperator, -1, -1, true
	}
	if len(g.ops) == 0 {
		return operator{}, -1, -1, false
	}
	op = g.ops[weightedIndex(g.rng, g.opWeights)]
	a, b = g.pickParent(-1), -1
	if op.arity == 2 {
		b = g.pickParent(a)
	}
	return op, a, b, true
}

// pickParent draws a parent other than the one of index not: weight
// 1/(1+rank) in the success pool and 0.35/(1+rank) in the failure pool
// (exploitation with some exploration, as LLEMA shows both pools), halved
// for a parent known to be unstable.
func (g *generation) pickParent(not int) int {
	w := g.parentWeights
	if not >= 0 {
		saved := w[not]
		w[not] = 0
		defer func() { w[not] = saved }()
	}
	return weightedIndex(g.rng, w)
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
