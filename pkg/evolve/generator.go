package evolve

import (
	"reflect"
	"strconv"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Generator runs generations (Propose) and keeps, from one to the next, the
// work that does not change between them. Parents recur (an island's top-k
// changes slowly) and so do their moves, and as a campaign proceeds most
// attempts rebuild structures tried before; a Generator remembers
//
//   - each parent structure's analysis: its fingerprint, the library
//     prototype it is, its ions;
//   - each operator's moves on a parent (those that draw nothing at
//     random), for a task;
//   - what building each move gave: the fingerprint of a valid structure,
//     or why it failed;
//   - what the random fills reuse: a prototype filled with given ions
//     (composition, fit to the sites), crystal's Fit of a composition,
//     the charge-balancing states of a prototype, a site's candidate
//     cations.
//
// Each is a function of its key alone, so a Generator's proposals are
// exactly Propose's for the same Input and seed; only the time differs.
// The memories are bounded (least recently used entries are forgotten). A
// Generator is safe for concurrent use; the zero value is ready.
type Generator struct {
	mu       sync.Mutex // guards everything below, task states included
	uids     uint64
	parents  memo[uint64, []*analysis] // by structure hash
	outcomes memo[string, outcome]     // by move recipe
	fillings memo[fillKey, *filling]
	builtFPs memo[string, string]            // fingerprints of builds in prototypes, by recipe
	fits     memo[string, []crystal.Element] // Fit by build recipe
	tuples   map[tupleKey][][]int
	tasks    []*taskState // most recently used first
}

// Bounds of a Generator's memories (entries of each generation of a memo;
// twice as many are held at most).
const (
	parentMemo  = 2048
	outcomeMemo = 1 << 15
	movesMemo   = 1 << 12
	fillingMemo = 1 << 14
	rulesMemo   = 1 << 14
	maxTasks    = 8
)

// Propose runs one generation, as the package's Propose does.
func (gen *Generator) Propose(in Input) ([]Proposal, []Rejection) {
	if in.Slots <= 0 {
		return nil, nil
	}
	g := newGeneration(gen, in)
	g.run(g.pickMove)
	return g.out, g.rejected
}

// analysis is what a parent's structure alone determines.
type analysis struct {
	// uid identifies the structure among those the Generator holds.
	uid     uint64
	s       *crystal.Structure // a copy, which moves build from
	comp    crystal.Composition
	formula string
	fp      string
	// ions holds each element once, with its oxidation state in the best
	// neutral assignment, its count in the reduced formula and the
	// coordination of its site; ionic is false when some element has no
	// integer state (intermetallics, mixed valence), and then ions holds
	// states of 0.
	ions  []siteIon
	ionic bool
	// proto is the library prototype whose build of the parent's
	// composition has the parent's fingerprint, nil when none does;
	// protoElems is the element on each of its sites.
	proto      *crystal.Prototype
	protoElems []crystal.Element
	// desc and described are describe of the ions; matching the library
	// prototypes that accept comp.
	desc      descriptors
	described bool
	matching  []*crystal.Prototype
}

// analyse returns the analysis of s, from memory when s (exactly: lattice,
// species and coordinates) was analysed before. s must be well formed.
func (gen *Generator) analyse(s *crystal.Structure) *analysis {
	h := s.ExactHash()
	gen.mu.Lock()
	same, _ := gen.parents.get(h)
	gen.mu.Unlock()
	for _, a := range same {
		if a.s.Identical(s) {
			return a
		}
	}
	a := &analysis{s: s.Copy(), comp: s.Composition()}
	a.formula = a.comp.ReducedFormula()
	if fp, err := crystal.Fingerprint(s); err == nil {
		a.fp = fp
	}
	a.ions, a.ionic = parentIons(a.comp)
	if a.fp != "" {
		a.proto = gen.identifyPrototype(a.comp, a.fp)
	}
	if a.proto != nil {
		if elems, err := a.proto.Fit(a.comp); err == nil {
			a.protoElems = elems
			for k, e := range elems {
				for i := range a.ions {
					if a.ions[i].el == e {
						a.ions[i].coord = a.proto.Sites[k].Coordination
					}
				}
			}
		}
	}
	a.desc, a.described = describe(a.ionList())
	a.matching = crystal.Matching(a.comp)
	gen.mu.Lock()
	defer gen.mu.Unlock()
	same, _ = gen.parents.get(h)
	for _, b := range same {
		if b.s.Identical(s) {
			return b // analysed concurrently
		}
	}
	gen.uids++
	a.uid = gen.uids
	gen.parents.put(h, append(same[:len(same):len(same)], a), parentMemo)
	return a
}

// outcome is what building a move gave: the structure's fingerprint, or
// why it is rejected; built is whether the build itself succeeded.
type outcome struct {
	built   bool
	fp      string
	reasons []string
}

// outcome returns the remembered outcome of recipe r.
func (gen *Generator) outcome(r string) (outcome, bool) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return gen.outcomes.get(r)
}

func (gen *Generator) remember(r string, o outcome) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	gen.outcomes.put(r, o, outcomeMemo)
}

// fit returns p.Fit(comp), and ok false when it fails, remembered by
// recipe (buildRecipe(p, comp): Fit reads what Build reads). The elements
// are shared: read only.
func (gen *Generator) fit(p *crystal.Prototype, comp crystal.Composition, recipe string) ([]crystal.Element, bool) {
	gen.mu.Lock()
	elems, ok := gen.fits.get(recipe)
	gen.mu.Unlock()
	if ok {
		return elems, elems != nil
	}
	elems, err := p.Fit(comp)
	if err != nil {
		elems = nil
	}
	gen.mu.Lock()
	gen.fits.put(recipe, elems, fillingMemo)
	gen.mu.Unlock()
	return elems, elems != nil
}

// builtFingerprint returns the fingerprint of crystal.Build(p, c), and ok
// false when it cannot be built or fingerprinted: from the outcome of the
// move that built it when there was one, else from memory or computed.
func (gen *Generator) builtFingerprint(p *crystal.Prototype, c crystal.Composition) (string, bool) {
	r := buildRecipe(p, c)
	gen.mu.Lock()
	o, ok := gen.outcomes.get(r)
	fp, known := gen.builtFPs.get(r)
	gen.mu.Unlock()
	switch {
	case ok && o.fp != "":
		return o.fp, true
	case ok && !o.built:
		return "", false
	case known:
		return fp, fp != ""
	}
	if b, err := crystal.Build(p, c); err == nil {
		if f, err := crystal.Fingerprint(b.Structure); err == nil {
			fp = f
		}
	}
	gen.mu.Lock()
	gen.builtFPs.put(r, fp, outcomeMemo)
	gen.mu.Unlock()
	return fp, fp != ""
}

// taskState is what a Generator keeps for one task: its palette and the
// operators' move lists.
type taskState struct {
	task                     task.Task
	palette, cations, anions []crystal.Element
	moves                    memo[string, *moveList]
	sites                    map[siteKey]siteCands
	rules                    memo[string, bool] // element rules met, by reduced formula
}

// forTask returns the state of task t, made on first use; tasks are
// compared by value.
func (gen *Generator) forTask(t task.Task) *taskState {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	for i, ts := range gen.tasks {
		if reflect.DeepEqual(ts.task, t) {
			copy(gen.tasks[1:i+1], gen.tasks[:i])
			gen.tasks[0] = ts
			return ts
		}
	}
	ts := &taskState{task: t, palette: palette(t.Elements.Allows)}
	for _, e := range ts.palette {
		if len(cationStates(e)) > 0 {
			ts.cations = append(ts.cations, e)
		}
		if _, ok := anionState(e); ok {
			ts.anions = append(ts.anions, e)
		}
	}
	if len(gen.tasks) == maxTasks {
		gen.tasks = gen.tasks[:maxTasks-1]
	}
	gen.tasks = append([]*taskState{ts}, gen.tasks...)
	return ts
}

// obeysRules reports whether c (reduced formula f) meets the task's
// element rules, remembered by formula.
func (ts *taskState) obeysRules(gen *Generator, f string, c crystal.Composition) bool {
	gen.mu.Lock()
	ok, known := ts.rules.get(f)
	gen.mu.Unlock()
	if known {
		return ok
	}
	ok = len(ts.task.Check(c)) == 0
	gen.mu.Lock()
	ts.rules.put(f, ok, rulesMemo)
	gen.mu.Unlock()
	return ok
}

// moveList is an operator's moves on some parents, as the operator makes
// them and before a generation's filters apply. Moves that replace sites
// chosen at random (siteDraw) are completed for each generation: draws
// lists the size of each random permutation the operator takes, in order.
type moveList struct {
	moves []move
	draws []int
}

// movesKey identifies an operator's moves on parents ps: the operator,
// each parent's structure and what its evaluation asks for.
func movesKey(op string, ps []*parentInfo) string {
	b := make([]byte, 0, 64)
	b = append(b, op...)
	for _, p := range ps {
		b = append(b, '|')
		b = strconv.AppendUint(b, p.uid, 10)
		for _, n := range p.needs {
			b = append(b, ';')
			b = append(b, n.prop...)
			b = strconv.AppendFloat(b, n.dir, 'g', -1, 64)
			b = append(b, ':')
			b = strconv.AppendFloat(b, n.weight, 'g', -1, 64)
		}
	}
	return string(b)
}

func (ts *taskState) movesOf(gen *Generator, key string) (*moveList, bool) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	return ts.moves.get(key)
}

func (ts *taskState) rememberMoves(gen *Generator, key string, ml *moveList) {
	gen.mu.Lock()
	defer gen.mu.Unlock()
	ts.moves.put(key, ml, movesMemo)
}

// memo is a bounded map that forgets the least recently used entries,
// approximately: entries live in a young and an old map; a hit in the old
// one moves the entry to the young one, and when the young one is full it
// becomes the old one, whose entries are dropped.
type memo[K comparable, V any] struct {
	young, old map[K]V
}

func (m *memo[K, V]) get(k K) (V, bool) {
	if v, ok := m.young[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	if ok {
		delete(m.old, k)
		m.young[k] = v // young exists: old was young once
	}
	return v, ok
}

// put stores v under k; size bounds the young map.
func (m *memo[K, V]) put(k K, v V, size int) {
	if m.young == nil {
		m.young = make(map[K]V)
	}
	if _, ok := m.young[k]; !ok && len(m.young) >= size {
		m.old, m.young = m.young, make(map[K]V, size)
	}
	m.young[k] = v
}

// tupleKey is a prototype and the total anion charge of chargeTuples.
type tupleKey struct {
	p     *crystal.Prototype
	total int
}

// chargeTuples is the package's chargeTuples, remembered (callers must not
// modify the tuples).
func (gen *Generator) chargeTuples(p *crystal.Prototype, total int) [][]int {
	k := tupleKey{p, total}
	gen.mu.Lock()
	t, ok := gen.tuples[k]
	gen.mu.Unlock()
	if ok {
		return t
	}
	t = chargeTuples(p, total)
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if gen.tuples == nil {
		gen.tuples = map[tupleKey][][]int{}
	}
	gen.tuples[k] = t
	return t
}

// fillKey is a prototype and the ions on its sites, packed (packIons).
type fillKey struct {
	p    *crystal.Prototype
	ions uint64
}

// packIons packs up to five ions into 64 bits, 12 per ion (element and
// state + 8), and ok false when they do not fit.
func packIons(ions []ion) (uint64, bool) {
	if len(ions) > 5 {
		return 0, false
	}
	k := uint64(len(ions))
	for _, in := range ions {
		if in.q < -8 || in.q > 7 {
			return 0, false
		}
		k = k<<12 | uint64(in.el)<<4 | uint64(in.q+8)
	}
	return k, true
}

// fillSeen is a prototype and a reduced formula, which fillMoves offers
// once.
type fillSeen struct {
	p       *crystal.Prototype
	formula string
}

// filling is what a prototype filled with ions gives: its composition when
// the charges balance with distinct elements and every cation is less
// electronegative than every anion (balanced), and then how well the ions
// fit the sites once crystal's Fit has placed them (fits, fit, placed; see
// protoFit), and how to build it.
type filling struct {
	balanced bool
	comp     crystal.Composition
	formula  string
	fits     bool
	fit      float64
	placed   []ion
	recipe   string
	build    func() (*crystal.Structure, error)
}

// filling returns the filling of p with ions (ions[k] on p.Sites[k]),
// remembered by prototype and ions. The result is shared: read only.
func (gen *Generator) filling(p *crystal.Prototype, ions []ion) *filling {
	packed, ok := packIons(ions)
	k := fillKey{p, packed}
	if ok {
		gen.mu.Lock()
		f, found := gen.fillings.get(k)
		gen.mu.Unlock()
		if found {
			return f
		}
	}
	f := &filling{}
	if comp, balanced := protoComposition(p, ions); balanced && paulingOrdered(ions) {
		f.balanced, f.comp, f.formula = true, comp, comp.ReducedFormula()
		m := buildMove("", p, comp, 0, nil)
		f.recipe, f.build = m.recipe, m.build
		if elems, ok := gen.fit(p, comp, f.recipe); ok {
			f.fit, f.placed, f.fits = placedFit(p, elems, ions)
		}
	}
	if ok {
		gen.mu.Lock()
		gen.fillings.put(k, f, fillingMemo)
		gen.mu.Unlock()
	}
	return f
}
