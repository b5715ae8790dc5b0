package evolve

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Operators that build a composition in a library prototype
// (crystal.Build): prototype and template filling, building from scratch,
// anion exchange, coordination change and redox variants.

// fillSamples is how many random fills one fill operator draws per parent.
const fillSamples = 48

// protoComposition returns the composition with ions[k] on p.Sites[k], and
// ok false when an element repeats or the charges do not sum to zero.
func protoComposition(p *crystal.Prototype, ions []ion) (crystal.Composition, bool) {
	if len(ions) != len(p.Sites) || !pairwiseDistinct(ions) {
		return crystal.Composition{}, false
	}
	charge := 0
	items := make([]crystal.ElementAmount, len(ions))
	for k, in := range ions {
		charge += p.Sites[k].Count * in.q
		items[k] = crystal.ElementAmount{Element: in.el, Amount: float64(p.Sites[k].Count)}
	}
	if charge != 0 {
		return crystal.Composition{}, false
	}
	c, err := crystal.NewComposition(items...)
	return c, err == nil
}

// protoFit returns how well ions fit p once crystal's Fit has put each
// element on its site (Fit orders cations by size, which may differ from
// the order given), and the ions in Fit's order.
func protoFit(p *crystal.Prototype, comp crystal.Composition, ions []ion) (float64, []ion, bool) {
	elems, err := p.Fit(comp)
	if err != nil {
		return 0, nil, false
	}
	return placedFit(p, elems, ions)
}

// placedFit is protoFit with Fit's elements given.
func placedFit(p *crystal.Prototype, elems []crystal.Element, ions []ion) (float64, []ion, bool) {
	byEl := map[crystal.Element]ion{}
	for _, in := range ions {
		byEl[in.el] = in
	}
	placed := make([]ion, len(elems))
	for k, e := range elems {
		in, ok := byEl[e]
		if !ok {
			return 0, nil, false
		}
		placed[k] = in
	}
	return siteFit(p, placed), placed, true
}

// buildMove is a move that builds comp in prototype p.
func buildMove(op string, p *crystal.Prototype, comp crystal.Composition, w float64, explain func() string) move {
	return move{
		op: op, comp: comp, proto: p.Name, weight: w, explain: explain,
		recipe: buildRecipe(p, comp),
		build: func() (*crystal.Structure, error) {
			b, err := crystal.Build(p, comp)
			if err != nil {
				return nil, err
			}
			return b.Structure, nil
		},
	}
}

// placement writes "Sr2+ (A, XII), Ti4+ (B, VI), O2- (X)" for rationales.
func placement(p *crystal.Prototype, ions []ion) string {
	parts := make([]string, len(ions))
	for k, in := range ions {
		s := p.Sites[k]
		if s.Role == crystal.Anion {
			parts[k] = fmt.Sprintf("%s (%s)", in, s.Label)
		} else {
			parts[k] = fmt.Sprintf("%s (%s, CN %s)", in, s.Label, s.Coordination)
		}
	}
	return strings.Join(parts, ", ")
}

// anionSite returns the index of p's anion site.
func anionSite(p *crystal.Prototype) int {
	for k, s := range p.Sites {
		if s.Role == crystal.Anion {
			return k
		}
	}
	return -1
}

// chargeTuples returns every assignment of positive states (1–7) to the
// cation sites of p whose charge balances `anionCharge` (the anion site's
// total charge, positive).
func chargeTuples(p *crystal.Prototype, anionCharge int) [][]int {
	var sites []int
	for k, s := range p.Sites {
		if s.Role == crystal.Cation {
			sites = append(sites, k)
		}
	}
	var out [][]int
	cur := make([]int, len(p.Sites))
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(sites) {
			if left == 0 {
				out = append(out, slices.Clone(cur))
			}
			return
		}
		n := p.Sites[sites[i]].Count
		for q := 1; q <= 7 && n*q <= left; q++ {
			cur[sites[i]] = q
			rec(i+1, left-n*q)
		}
	}
	rec(0, anionCharge)
	return out
}

// siteCandidates returns the palette cations in state q for a site of the
// given coordination next to anion x, weighted by the radius-ratio fit
// (Pauling's first rule), excluding the elements in used. The candidates
// before the exclusion are remembered for the task.
//
// The slices are the generation's scratch space, valid until the next call.
func (g *generation) siteCandidates(q int, coord string, x ion, used []crystal.Element) ([]crystal.Element, []float64) {
	all := g.ts.siteCandidates(g.gen, siteKey{q, coord, x})
	els, ws := g.scratchEls[:0], g.scratchWs[:0]
	for i, e := range all.els {
		if !slices.Contains(used, e) {
			els = append(els, e)
			ws = append(ws, all.ws[i])
		}
	}
	g.scratchEls, g.scratchWs = els, ws
	return els, ws
}

// siteKey is the site and anion of siteCandidates.
type siteKey struct {
	q     int
	coord string
	x     ion
}

// siteCands are the candidates of a siteKey, excluding nothing.
type siteCands struct {
	els []crystal.Element
	ws  []float64
}

// siteCandidates returns the candidates for k among the task's cations,
// from memory after the first time.
func (ts *taskState) siteCandidates(gen *Generator, k siteKey) siteCands {
	gen.mu.Lock()
	c, ok := ts.sites[k]
	gen.mu.Unlock()
	if ok {
		return c
	}
	rx, okx := radius(k.x.el, k.x.q, "VI")
	lo, hi := radiusRatioWindow(coordinationNumber(k.coord))
	for _, e := range ts.cations {
		if !hasState(e, k.q) || e.X() >= k.x.el.X() {
			continue
		}
		w := 0.3
		if r, ok := radius(e, k.q, k.coord); ok && okx {
			w = windowFit(r/rx, lo, hi, 0.12)
		}
		if w < 0.01 {
			continue
		}
		c.els = append(c.els, e)
		c.ws = append(c.ws, w)
	}
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if ts.sites == nil {
		ts.sites = map[siteKey]siteCands{}
	}
	ts.sites[k] = c
	return c
}

// fill draws ions for the sites of p: the sites with an ion in keep (an
// element other than 0) take it, the others a charge-balancing state and
// an element by site fit. ok is false when no balancing choice exists. The
// ions are the generation's scratch space, valid until the next call.
func (g *generation) fill(p *crystal.Prototype, x ion, keep []ion) ([]ion, bool) {
	ax := anionSite(p)
	if ax < 0 {
		return nil, false
	}
	total := -x.q * p.Sites[ax].Count
	all := g.gen.chargeTuples(p, total)
	fits := func(t []int) bool {
		for k, in := range keep {
			if in.el != 0 && t[k] != in.q {
				return false
			}
		}
		return true
	}
	n := 0
	for _, t := range all {
		if fits(t) {
			n++
		}
	}
	if n == 0 {
		return nil, false
	}
	// The r-th balancing tuple, r drawn uniformly.
	var t []int
	r := g.rng.IntN(n)
	for _, c := range all {
		if fits(c) {
			if r == 0 {
				t = c
				break
			}
			r--
		}
	}
	ions := resized(&g.scratchIons, len(p.Sites))
	ions[ax] = x
	used := append(g.scratchUsed[:0], x.el)
	for _, in := range keep {
		if in.el != 0 {
			used = append(used, in.el)
		}
	}
	defer func() { g.scratchUsed = used }()
	for k, s := range p.Sites {
		if s.Role != crystal.Cation {
			continue
		}
		if k < len(keep) && keep[k].el != 0 {
			ions[k] = keep[k]
			continue
		}
		els, ws := g.siteCandidates(t[k], s.Coordination, x, used)
		if len(els) == 0 {
			return nil, false
		}
		e := els[weightedIndex(g.rng, ws)]
		ions[k] = ion{e, t[k]}
		used = append(used, e)
	}
	return ions, true
}

// resized returns *buf with length n, zeroed, growing it when needed.
func resized[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// fillMoves samples fills of prototype p and returns them as moves,
// weighted by site fit, by the trends (towards the parent's needs when
// there is a parent, towards the task otherwise) and deduplicated by
// composition.
//
// draw returns the anion and the ions to keep (see fill); keep may be the
// generation's scratch keep (keepFor).
func (g *generation) fillMoves(op string, parent *parentInfo, protos []*crystal.Prototype, draw func(p *crystal.Prototype) (x ion, keep []ion, ok bool), describe func(p *crystal.Prototype, ions []ion) string) []move {
	if len(protos) == 0 {
		return nil
	}
	seen := map[fillSeen]bool{}
	var out []move
	for range fillSamples {
		p := protos[g.rng.IntN(len(protos))]
		x, keep, ok := draw(p)
		if !ok {
			continue
		}
		ions, ok := g.fill(p, x, keep)
		if !ok {
			continue
		}
		f := g.gen.filling(p, ions)
		if !f.balanced {
			continue
		}
		key := fillSeen{p, f.formula}
		if seen[key] || (parent != nil && f.formula == parent.formula) {
			continue
		}
		seen[key] = true
		if !f.fits || f.fit <= 0 {
			continue
		}
		placed := f.placed
		amounts := resized(&g.scratchAmounts, len(placed))
		for k, in := range placed {
			amounts[k] = ionAmount{in, float64(p.Sites[k].Count)}
		}
		w := f.fit
		if parent != nil {
			w *= math.Exp(mildSteering * directionFrom(parent.needs, parent.desc, parent.described, amounts))
		} else {
			w *= math.Exp(mildSteering * prior(g.in.Task, amounts))
		}
		out = append(out, move{op: op, comp: f.comp, formula: f.formula, proto: p.Name, weight: w, recipe: f.recipe, build: f.build,
			explain: func() string { return describe(p, placed) }})
	}
	return out
}

// sameGroupAnion returns x or, with probability pSwap, another palette
// anion of x's group in the same state.
func (g *generation) sameGroupAnion(x ion, pSwap float64) ion {
	if g.rng.Float64() >= pSwap {
		return x
	}
	var alts []crystal.Element
	for _, e := range g.anions {
		if e != x.el && e.Group() == x.el.Group() && hasState(e, x.q) {
			alts = append(alts, e)
		}
	}
	if len(alts) == 0 {
		return x
	}
	return ion{alts[g.rng.IntN(len(alts))], x.q}
}

// prototypeFillMoves: LLEMA rule 5, the parent's prototype kept (the
// library prototype its structure is) and refilled: one or more of its
// cation sites get new ions whose charges still balance (possibly
// redistributed between sites, as SrTiO3 → LaAlO3), chosen by the site's
// radius-ratio window and, for perovskites, the tolerance factor; the
// anion is kept or, one time in four, swapped within its group.
func prototypeFillMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	if p.proto == nil || !p.ionic || len(p.protoElems) != len(p.proto.Sites) {
		return nil
	}
	proto := p.proto
	ax := anionSite(proto)
	rule, _ := RuleByNumber(5)
	var cationSites []int
	for k, s := range proto.Sites {
		if s.Role == crystal.Cation {
			cationSites = append(cationSites, k)
		}
	}
	return g.fillMoves(OpPrototypeFill, p, []*crystal.Prototype{proto}, func(*crystal.Prototype) (ion, []ion, bool) {
		x := g.sameGroupAnion(p.ionOf(p.protoElems[ax]), 0.25)
		keep := resized(&g.scratchKeep, len(proto.Sites))
		if len(cationSites) > 1 {
			// Keep a random proper subset of the cation sites.
			kept := 0
			for _, k := range cationSites {
				if g.rng.IntN(2) == 0 {
					keep[k] = p.ionOf(p.protoElems[k])
					kept++
				}
			}
			if kept == len(cationSites) {
				keep[cationSites[g.rng.IntN(len(cationSites))]] = ion{}
			}
		}
		return x, keep, true
	}, func(pr *crystal.Prototype, ions []ion) string {
		return fmt.Sprintf("%s (LLEMA rule %d): %s kept as %s and refilled: %s%s",
			rule.Name, rule.Number, p.formula, pr.CommonName, placement(pr, ions), toleranceNote(pr, ions))
	})
}

// toleranceNote writes the tolerance factor of a perovskite fill.
func toleranceNote(p *crystal.Prototype, ions []ion) string {
	if p.Name != "perovskite" || len(ions) != 3 {
		return ""
	}
	t, mu, ok := toleranceFactor(ions[0], ions[1], ions[2])
	if !ok {
		return ""
	}
	return fmt.Sprintf("; t = %.3f, μ = %.3f", t, mu)
}

// templateFillMoves: LLEMA rule 9, the parent's anonymous formula (AX,
// AX2, ABX3 …) taken as a template: a library prototype with that formula
// (another than the parent's own) filled with new, charge-balanced ions
// fitted to its sites; the anion is kept half of the time, otherwise any
// anion of the palette.
func templateFillMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	var protos []*crystal.Prototype
	for _, q := range p.matching {
		if p.proto == nil || q.Name != p.proto.Name {
			protos = append(protos, q)
		}
	}
	if p.proto != nil && len(protos) == 0 {
		protos = []*crystal.Prototype{p.proto}
	}
	x0, hasAnion := p.anion()
	rule, _ := RuleByNumber(9)
	return g.fillMoves(OpTemplateFill, p, protos, func(*crystal.Prototype) (ion, []ion, bool) {
		if hasAnion && g.rng.IntN(2) == 0 {
			return x0.ion, nil, true
		}
		x, ok := g.randomAnion()
		return x, nil, ok
	}, func(pr *crystal.Prototype, ions []ion) string {
		return fmt.Sprintf("%s (LLEMA rule %d): the template %s of %s filled as %s with %s%s",
			rule.Name, rule.Number, pr.Stoichiometry, p.formula, pr.CommonName, placement(pr, ions), toleranceNote(pr, ions))
	})
}

// randomAnion draws a palette anion, by its common negative state.
func (g *generation) randomAnion() (ion, bool) {
	if len(g.anions) == 0 {
		return ion{}, false
	}
	e := g.anions[g.rng.IntN(len(g.anions))]
	q, _ := anionState(e)
	return ion{e, q}, true
}

// scratchMoves: LLEMA rule 9 without a parent, for empty pools: a random
// library prototype filled with charge-balanced ions fitted to its sites,
// the anion drawn from the palette, weighted towards the task by the
// property trends. When the task requires elements, one of them is placed
// first.
func scratchMoves(g *generation, _ []*parentInfo, _ *moveList) []move {
	protos := crystal.Prototypes()
	rule, _ := RuleByNumber(9)
	required := g.requiredElements()
	return g.fillMoves(OpScratch, nil, protos, func(p *crystal.Prototype) (ion, []ion, bool) {
		keep := resized(&g.scratchKeep, len(p.Sites))
		var x ion
		if len(required) > 0 {
			r := required[g.rng.IntN(len(required))]
			if q, ok := anionState(r); ok && !cationLike(r) {
				x = ion{r, q}
			} else if states := cationStates(r); len(states) > 0 {
				var sites []int
				for k, s := range p.Sites {
					if s.Role == crystal.Cation {
						sites = append(sites, k)
					}
				}
				keep[sites[g.rng.IntN(len(sites))]] = ion{r, states[g.rng.IntN(len(states))]}
			}
		}
		if x.el == 0 {
			var ok bool
			if x, ok = g.randomAnion(); !ok {
				return ion{}, nil, false
			}
		}
		return x, keep, true
	}, func(pr *crystal.Prototype, ions []ion) string {
		return fmt.Sprintf("%s (LLEMA rule %d), from scratch: %s filled with %s%s",
			rule.Name, rule.Number, pr.CommonName, placement(pr, ions), toleranceNote(pr, ions))
	})
}

// requiredElements returns the palette elements the task's must-contain
// rules ask for (all of MustContainAll, else the MustContainOneOf set).
func (g *generation) requiredElements() []crystal.Element {
	syms := g.in.Task.Elements.MustContainAll
	if len(syms) == 0 {
		syms = g.in.Task.Elements.MustContainOneOf
	}
	var out []crystal.Element
	for _, s := range syms {
		if e, err := crystal.ElementBySymbol(s); err == nil && g.allows(e) {
			out = append(out, e)
		}
	}
	return out
}

// prototypeMoves returns moves building comp (of the given ions, one per
// element) in every library prototype that accepts it, weighted by site
// fit times w.
func prototypeMoves(op string, comp crystal.Composition, ions []ion, w float64, why func(p *crystal.Prototype, placed []ion) string) []move {
	var out []move
	for _, p := range crystal.Matching(comp) {
		fit, placed, ok := protoFit(p, comp, ions)
		if !ok || fit <= 0 {
			continue
		}
		out = append(out, buildMove(op, p, comp, w*fit, func() string { return why(p, placed) }))
	}
	return out
}

// anionExchangeMoves: LLEMA rule 4 for ionic solids, where the anion is the
// functional group: the parent's anion exchanged for one of another group
// (oxide → nitride, fluoride, sulfide …; same-group swaps are rule 1) with
// the cation-to-anion ratio rebalanced for neutrality (MgO → MgF2, Al2O3 →
// AlN), built in each prototype that accepts the new formula.
func anionExchangeMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	x, ok := p.anion()
	if !ok || !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(4)
	cationCharge := 0
	for _, si := range p.ions {
		if si.q > 0 {
			cationCharge += si.n * si.q
		}
	}
	var out []move
	for _, y := range g.anions {
		if y == x.el || y.Group() == x.el.Group() || p.comp.Contains(y) {
			continue
		}
		qy, _ := anionState(y)
		// n_cation × (−qy) and cationCharge anions, then reduced.
		var items []crystal.ElementAmount
		var ions []ion
		for _, si := range p.ions {
			if si.q > 0 {
				items = append(items, crystal.ElementAmount{Element: si.el, Amount: float64(si.n * -qy)})
				ions = append(ions, si.ion)
			}
		}
		items = append(items, crystal.ElementAmount{Element: y, Amount: float64(cationCharge)})
		yi := ion{y, qy}
		ions = append(ions, yi)
		if !paulingOrdered(ions) {
			continue
		}
		comp, err := crystal.NewComposition(items...)
		if err != nil {
			continue
		}
		comp = comp.ReducedComposition()
		var amounts []ionAmount
		for i, it := range items {
			amounts = append(amounts, ionAmount{ions[i], it.Amount})
		}
		w := math.Exp(mildSteering * direction(p.needs, p.ionList(), amounts))
		out = append(out, prototypeMoves(OpAnionExchange, comp, ions, w, func(pr *crystal.Prototype, placed []ion) string {
			return fmt.Sprintf("%s (LLEMA rule %d): the %s anion of %s exchanged for %s, stoichiometry rebalanced to %s, built as %s",
				rule.Name, rule.Number, x.ion, p.formula, yi, comp.ReducedFormula(), pr.CommonName)
		})...)
	}
	return out
}

// coordinationChangeMoves: LLEMA rule 6, the parent's composition rebuilt
// in a prototype of the same formula whose cation coordination differs
// (rock salt VI ↔ CsCl VIII ↔ zinc blende / wurtzite IV; rutile VI ↔
// fluorite VIII ↔ CdI2 layered VI), preferring the coordination the
// radius ratio favours (Pauling's first rule): weight fit(new) / (fit(old)
// + 0.1).
func coordinationChangeMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	if !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(6)
	ions := ionsOf(p.ionList())
	oldFit, oldCN := 1.0, ""
	if p.proto != nil {
		oldFit, _, _ = protoFit(p.proto, p.comp, ions)
		oldCN = cationCoordination(p.proto)
	}
	var out []move
	for _, q := range crystal.Matching(p.comp) {
		if p.proto != nil && (q.Name == p.proto.Name || cationCoordination(q) == oldCN) {
			continue
		}
		fit, placed, ok := protoFit(q, p.comp, ions)
		if !ok || fit <= 0 {
			continue
		}
		from := "its structure"
		if p.proto != nil {
			from = p.proto.CommonName + " (cation CN " + oldCN + ")"
		}
		out = append(out, buildMove(OpCoordinationChange, q, p.comp, fit/(oldFit+0.1), func() string {
			return fmt.Sprintf("%s (LLEMA rule %d): %s rebuilt from %s as %s (cation CN %s): %s",
				rule.Name, rule.Number, p.formula, from, q.CommonName, cationCoordination(q), placement(q, placed))
		}))
	}
	return out
}

// cationCoordination lists the coordinations of p's cation sites: "VI",
// "XII/VI".
func cationCoordination(p *crystal.Prototype) string {
	var cs []string
	for _, s := range p.Sites {
		if s.Role == crystal.Cation {
			cs = append(cs, s.Coordination)
		}
	}
	return strings.Join(cs, "/")
}

// redoxMoves: LLEMA rule 7. A binary compound of a multivalent cation
// takes another of its common states, with the stoichiometry that
// balances it, in each prototype that accepts it (FeO → Fe2O3 corundum,
// SnO → SnO2 rutile, CeO2 → Ce2O3). In compounds of several cations the
// multivalent one changes state by one and a cation with the same count
// changes by one the other way, replaced by an ion of similar size in its
// new state (LiFeO2 → MgFeO2: Fe³⁺ → Fe²⁺ with Li⁺ → Mg²⁺), when the
// product's best oxidation assignment indeed has the new state.
func redoxMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	x, ok := p.anion()
	if !ok || !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(7)
	var out []move
	cations := 0
	for _, si := range p.ions {
		if si.q > 0 {
			cations++
		}
	}
	for _, m := range p.ions {
		if m.q <= 0 {
			continue
		}
		for _, q2 := range cationStates(m.el) {
			if q2 == m.q {
				continue
			}
			if cations == 1 {
				// M_a X_b with a·q2 = b·|x.q|.
				k := crystal.GCD(q2, -x.q)
				comp, err := crystal.NewComposition(
					crystal.ElementAmount{Element: m.el, Amount: float64(-x.q / k)},
					crystal.ElementAmount{Element: x.el, Amount: float64(q2 / k)})
				if err != nil {
					continue
				}
				ions := []ion{{m.el, q2}, x.ion}
				verb := "oxidised"
				if q2 < m.q {
					verb = "reduced"
				}
				out = append(out, prototypeMoves(OpRedox, comp, ions, 1, func(pr *crystal.Prototype, placed []ion) string {
					return fmt.Sprintf("%s (LLEMA rule %d): %s %s from %s to %s, giving %s as %s",
						rule.Name, rule.Number, m.el, verb, m.ion, ion{m.el, q2}, comp.ReducedFormula(), pr.CommonName)
				})...)
				continue
			}
			delta := q2 - m.q
			if delta != 1 && delta != -1 {
				continue
			}
			for _, n := range p.ions {
				if n.el == m.el || n.q <= 0 || n.n != m.n {
					continue
				}
				subs, sims := g.nearestIons(n.ion, n.coord, n.q-delta, p.comp, 4)
				for i, n2 := range subs {
					repl := map[crystal.Element]ion{m.el: {m.el, q2}, n.el: n2}
					child := p.replaced(repl)
					if !paulingOrdered(ionsOf(child)) {
						continue
					}
					comp := substituted(p.comp, n.el, n2.el)
					if !assignedAs(comp, m.el, q2) {
						// The product reads otherwise (La → Ce in
						// LaFeO3 gives Ce³⁺Fe³⁺O3, not Ce⁴⁺Fe²⁺O3):
						// not a redox variant.
						continue
					}
					fit := p.fitAfter(repl)
					if fit <= 0 {
						continue
					}
					from, to := []crystal.Element{n.el}, []crystal.Element{n2.el}
					out = append(out, move{
						op: OpRedox, comp: comp, proto: protoName(p.proto),
						build:  p.replacing(comp, from, to),
						recipe: replaceRecipe(p, comp, from, to),
						weight: sims[i] * fit,
						explain: func() string {
							return fmt.Sprintf("%s (LLEMA rule %d): %s → %s in %s, compensated by %s → %s",
								rule.Name, rule.Number, m.ion, ion{m.el, q2}, p.inWhat(), n.ion, n2)
						},
					})
				}
			}
		}
	}
	return out
}

// assignedAs reports whether the best neutral assignment of c (as
// validation finds it) gives e the state q.
func assignedAs(c crystal.Composition, e crystal.Element, q int) bool {
	ions, ok := parentIons(c)
	if !ok {
		return false
	}
	for _, si := range ions {
		if si.el == e {
			return si.q == q
		}
	}
	return false
}
