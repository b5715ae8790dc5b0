package evolve

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Substitution operators: they keep the parent's structure and change the
// element on some of its sites. A parent that is a library prototype is
// rebuilt in it with the new ions (bond lengths from their radii, which
// is what the prototype library does); any other parent keeps its cell
// and fractional coordinates, rescaled by crystal.SubstituteSites'
// sum-of-ionic-volumes rule. Whole-element substitutions in ionic solids
// change every bond, which the volume rule underestimates (MgO → CaO: a =
// 4.51 Å by the rule, 4.80 Å rebuilt, 4.81 Å measured).

// replacing returns a builder of the parent with each element from[i]
// replaced by to[i] (composition comp), as the comment above describes.
func (p *parentInfo) replacing(comp crystal.Composition, from, to []crystal.Element) func() (*crystal.Structure, error) {
	s, proto := p.Structure, p.proto
	return func() (*crystal.Structure, error) {
		if proto != nil {
			if b, err := crystal.Build(proto, comp); err == nil {
				return b.Structure, nil
			}
		}
		out := s
		for i := range from {
			var err error
			if out, err = crystal.Substitute(out, from[i], to[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// Steering strength of the property trends (rule 10): a move of trend
// direction d (see direction) is weighted by exp(steering·d). The
// operators lean towards what the parent's evaluation asks for; the
// property-directed operator leans harder and takes only moves with d > 0.
const (
	mildSteering   = 1.0
	strongSteering = 1.5
)

// replaced returns the parent's ions with the replacements applied.
func (p *parentInfo) replaced(repl map[crystal.Element]ion) []ionAmount {
	out := p.ionList()
	for i := range out {
		if r, ok := repl[out[i].el]; ok {
			out[i].ion = r
		}
	}
	return out
}

// fitAfter is the site fit (siteFit) of the parent's prototype after the
// replacements, 1 when the parent is in no library prototype.
func (p *parentInfo) fitAfter(repl map[crystal.Element]ion) float64 {
	if p.proto == nil {
		return 1
	}
	ions := make([]ion, len(p.protoElems))
	for k, e := range p.protoElems {
		ions[k] = p.ionOf(e)
		if r, ok := repl[e]; ok {
			ions[k] = r
		}
	}
	return siteFit(p.proto, ions)
}

// ionOf returns the parent's ion of element e.
func (p *parentInfo) ionOf(e crystal.Element) ion {
	for _, si := range p.ions {
		if si.el == e {
			return si.ion
		}
	}
	return ion{e, 0}
}

// inWhat describes the parent for rationales: "MgO (rock salt (NaCl))".
func (p *parentInfo) inWhat() string {
	if p.proto != nil {
		return p.formula + " (" + p.proto.CommonName + ")"
	}
	return p.formula
}

// ionsOf drops the amounts.
func ionsOf(xs []ionAmount) []ion {
	out := make([]ion, len(xs))
	for i, x := range xs {
		out[i] = x.ion
	}
	return out
}

// substitutionScore weighs replacing from by to (0 refuses it) and says
// why in a few words (written when asked); d is the trend direction of the
// change (see direction).
type substitutionScore func(from siteIon, to ion, d float64) (w float64, why func() string)

// wholeSubstitutions enumerates the replacement of one element of p on all
// its sites by a palette element in the same oxidation state, as score
// weighs it, times the site fit of p's prototype and the mild pull of the
// property trends.
func (g *generation) wholeSubstitutions(p *parentInfo, op string, score substitutionScore, steering float64) []move {
	if !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(ruleOf(op))
	parentIons := p.ionList()
	var out []move
	for _, si := range p.ions {
		for _, e := range g.palette {
			if p.comp.Contains(e) || !hasState(e, si.q) {
				continue
			}
			to := ion{e, si.q}
			repl := map[crystal.Element]ion{si.el: to}
			child := p.replaced(repl)
			if !paulingOrdered(ionsOf(child)) {
				continue
			}
			d := direction(p.needs, parentIons, child)
			w, why := score(si, to, d)
			if w <= 0 {
				continue
			}
			fit := p.fitAfter(repl)
			if fit <= 0 {
				continue
			}
			w *= fit * math.Exp(steering*d)
			comp := substituted(p.comp, si.el, e)
			from, tos := []crystal.Element{si.el}, []crystal.Element{e}
			out = append(out, move{
				op: op, comp: comp, proto: protoName(p.proto),
				build:  p.replacing(comp, from, tos),
				recipe: replaceRecipe(p, comp, from, tos),
				weight: w,
				explain: func() string {
					return fmt.Sprintf("%s (LLEMA rule %d): %s → %s on every %s site of %s; %s", rule.Name, rule.Number, si.ion, to, si.el, p.inWhat(), why())
				},
			})
		}
	}
	return out
}

// sameGroupMoves: LLEMA rule 1, an element of the same periodic group in
// the same oxidation state (Na → K, Cl → Br), nearer periods preferred.
func sameGroupMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	return g.wholeSubstitutions(p, OpSameGroup, func(from siteIon, to ion, _ float64) (float64, func() string) {
		if to.el.Group() != from.el.Group() {
			return 0, nil
		}
		r1, ok1 := radius(from.el, from.q, from.coord)
		r2, ok2 := radius(to.el, to.q, from.coord)
		w := 0.3
		if ok1 && ok2 {
			w = 0.05 + radiusSimilarity(r1, r2, 0.3)
		}
		return w, func() string { return fmt.Sprintf("both in group %d", to.el.Group()) }
	}, mildSteering)
}

// oxidationStateMoves: LLEMA rule 3, any element whose common oxidation
// states include the state the replaced one has in the parent's best
// assignment (Mg²⁺ → Ca²⁺, Zn²⁺, Ni²⁺), with a broad preference for
// similar size: the widest of the substitutions.
func oxidationStateMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	return g.wholeSubstitutions(p, OpOxidationState, func(from siteIon, to ion, _ float64) (float64, func() string) {
		r1, ok1 := radius(from.el, from.q, from.coord)
		r2, ok2 := radius(to.el, to.q, from.coord)
		w := 0.2
		if ok1 && ok2 {
			w = 0.03 + radiusSimilarity(r1, r2, 0.35)
		}
		return w, func() string { return fmt.Sprintf("same oxidation state %+d", to.q) }
	}, mildSteering)
}

// similarElementMoves: LLEMA rule 2, the formula ratios kept and one
// element replaced by a chemically similar one: Gaussian kernels on the
// Shannon radius (σ 12 %) and Pauling electronegativity (σ 0.3).
func similarElementMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	return g.wholeSubstitutions(p, OpSimilarElement, func(from siteIon, to ion, _ float64) (float64, func() string) {
		s := ionSimilarity(from.ion, to, from.coord, 0.12, 0.3)
		if s < 0.05 {
			return 0, nil
		}
		return s, func() string {
			r1, _ := radius(from.el, from.q, from.coord)
			r2, _ := radius(to.el, to.q, from.coord)
			return fmt.Sprintf("similar ion: r %.2f → %.2f Å (CN %s), χ %.2f → %.2f", r1, r2, from.coord, from.el.X(), to.el.X())
		}
	}, mildSteering)
}

// ionicRadiusTolerance is the largest relative difference of Shannon radii
// of an isomorphous substitution (Goldschmidt's 15 % rule).
const ionicRadiusTolerance = 0.15

// ionicRadiusMoves: LLEMA rule 13, an ion of the same charge whose Shannon
// radius at the site's coordination is within 15 % of the replaced one,
// and, in a perovskite, a tolerance factor and octahedral factor in the
// formable range (siteFit).
func ionicRadiusMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	return g.wholeSubstitutions(p, OpIonicRadius, func(from siteIon, to ion, _ float64) (float64, func() string) {
		r1, ok1 := radius(from.el, from.q, from.coord)
		r2, ok2 := radius(to.el, to.q, from.coord)
		if !ok1 || !ok2 {
			return 0, nil
		}
		dr := math.Abs(r2-r1) / r1
		if dr > ionicRadiusTolerance {
			return 0, nil
		}
		return 1 - 0.5*dr/ionicRadiusTolerance, func() string {
			why := fmt.Sprintf("r %.2f → %.2f Å at CN %s (%.0f %%)", r1, r2, from.coord, 100*dr)
			if p.proto != nil && p.proto.Name == "perovskite" {
				if t, ok := p.toleranceAfter(from.el, to); ok {
					why += fmt.Sprintf(", tolerance factor t = %.3f", t)
				}
			}
			return why
		}
	}, mildSteering)
}

// toleranceAfter returns the perovskite parent's tolerance factor after
// replacing e by to.
func (p *parentInfo) toleranceAfter(e crystal.Element, to ion) (float64, bool) {
	if p.proto == nil || p.proto.Name != "perovskite" || len(p.protoElems) != 3 {
		return 0, false
	}
	ions := make([]ion, 3)
	for k, x := range p.protoElems {
		ions[k] = p.ionOf(x)
		if x == e {
			ions[k] = to
		}
	}
	t, _, ok := toleranceFactor(ions[0], ions[1], ions[2])
	return t, ok
}

// propertyDirectedMoves: LLEMA rule 10, conditioned on the target: among
// substitutions in the same oxidation state (broadly similar in size),
// those the property trends say move the parent's missed properties
// towards their bounds, strongly preferred. Only for parents with
// evaluated properties that miss, or barely meet, a constraint.
func propertyDirectedMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	var wants []string
	for _, n := range p.needs {
		if n.weight < 0.3 {
			continue // comfortably met
		}
		verb := "raise"
		if n.dir < 0 {
			verb = "lower"
		}
		wants = append(wants, verb+" "+n.prop)
	}
	if len(wants) == 0 {
		return nil
	}
	goal := strings.Join(wants, ", ")
	return g.wholeSubstitutions(p, OpPropertyDirected, func(from siteIon, to ion, d float64) (float64, func() string) {
		if d <= 0 {
			return 0, nil
		}
		r1, ok1 := radius(from.el, from.q, from.coord)
		r2, ok2 := radius(to.el, to.q, from.coord)
		w := 0.2
		if ok1 && ok2 {
			w = 0.05 + radiusSimilarity(r1, r2, 0.3)
		}
		return w, func() string {
			return fmt.Sprintf("to %s: χ %.2f → %.2f, %s", goal, from.el.X(), to.el.X(), shellWord(to))
		}
	}, strongSteering)
}

func shellWord(i ion) string {
	if closedShell(i.el, i.q) {
		return "closed shell"
	}
	return "open d/f shell"
}

// supercellFor returns p's structure, doubled along its shortest lattice
// vector when e has fewer than two sites, so that part of e's sites can be
// replaced; nil when the cell would exceed maxCellAtoms. id names the cell
// (the parent's uid and the axis doubled) for recipes.
func (p *parentInfo) supercellFor(e crystal.Element) (cell *crystal.Structure, id string) {
	s := p.Structure
	id = strconv.FormatUint(p.uid, 10)
	if len(sitesOf(s, e)) >= 2 {
		return s, id
	}
	if 2*len(s.Species) > maxCellAtoms {
		return nil, ""
	}
	a, b, c, _, _, _ := s.Lattice.Parameters()
	n := [3]int{1, 1, 1}
	switch {
	case a <= b && a <= c:
		n[0] = 2
	case b <= c:
		n[1] = 2
	default:
		n[2] = 2
	}
	sc, err := s.Supercell(n[0], n[1], n[2])
	if err != nil {
		return nil, ""
	}
	return sc, fmt.Sprintf("%s×%d%d%d", id, n[0], n[1], n[2])
}

// cellWith returns the composition of s with the given sites occupied by
// the given elements.
func cellWith(s *crystal.Structure, sites []int, to []crystal.Element) crystal.Composition {
	species := slices.Clone(s.Species)
	for i, k := range sites {
		species[k] = to[i]
	}
	counts := map[crystal.Element]float64{}
	for _, e := range species {
		counts[e]++
	}
	items := make([]crystal.ElementAmount, 0, len(counts))
	for _, e := range sortedElements(counts) {
		items = append(items, crystal.ElementAmount{Element: e, Amount: counts[e]})
	}
	c, _ := crystal.NewComposition(items...)
	return c
}

// partialSubstitutionMoves: LLEMA rule 2 as an ordered solid solution:
// half (or a quarter) of one element's sites replaced by a similar ion of
// the same charge (Hf0.5Zr0.5O2, Mg0.5Zn0.5O), the parent's cell doubled
// when the element has one site. Isovalent ions of similar size mix at a
// small enthalpy cost, so the child stays close to its parent's stability
// while its composition is new.
//
// The sites that change are drawn at random (siteDraw) when a generation
// uses the moves.
func partialSubstitutionMoves(g *generation, ps []*parentInfo, ml *moveList) []move {
	p := ps[0]
	if !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(2)
	parentIons := p.ionList()
	var out []move
	for _, si := range p.ions {
		cell, cellID := p.supercellFor(si.el)
		if cell == nil {
			continue
		}
		sites := sitesOf(cell, si.el)
		fractions := []int{2}
		if len(sites) >= 4 {
			fractions = append(fractions, 4)
		}
		for _, e := range g.palette {
			if p.comp.Contains(e) || !hasState(e, si.q) {
				continue
			}
			to := ion{e, si.q}
			sim := ionSimilarity(si.ion, to, si.coord, 0.15, 0.4)
			if sim < 0.05 {
				continue
			}
			child := append(p.ionList(), ionAmount{to, 0})
			for i := range child {
				if child[i].el == si.el {
					child[i].n /= 2
					child[len(child)-1].n = child[i].n
				}
			}
			if !paulingOrdered(ionsOf(child)) {
				continue
			}
			d := direction(p.needs, parentIons, child)
			for _, f := range fractions {
				if len(sites)%f != 0 {
					continue
				}
				k := len(sites) / f
				// Which k sites is drawn with the generation's RNG; the
				// composition does not depend on it.
				tos := slices.Repeat([]crystal.Element{e}, k)
				comp := cellWith(cell, sites[:k], tos)
				w := sim * math.Exp(mildSteering*d)
				if f == 4 {
					w *= 0.5
				}
				ml.draws = append(ml.draws, len(sites))
				out = append(out, move{
					op: OpPartialSubstitution, comp: comp,
					draw:   &siteDraw{group: len(ml.draws) - 1, cell: cell, cellID: cellID, sites: sites, counts: []int{k}, els: []crystal.Element{e}},
					weight: w,
					explain: func() string {
						return fmt.Sprintf("%s (LLEMA rule %d), as an ordered solid solution: 1/%d of the %s sites of %s → %s (same charge, r %s)",
							rule.Name, rule.Number, f, si.ion, p.inWhat(), to, radiusChange(si, to))
					},
				})
			}
		}
	}
	return out
}

// radiusChange writes "0.72 → 0.74 Å" for rationales.
func radiusChange(from siteIon, to ion) string {
	r1, ok1 := radius(from.el, from.q, from.coord)
	r2, ok2 := radius(to.el, to.q, from.coord)
	if !ok1 || !ok2 {
		return "not tabulated"
	}
	return fmt.Sprintf("%.2f → %.2f Å", r1, r2)
}

// nearestIons returns up to n palette ions in state q, excluding the
// elements of exclude, most similar first to the ion `like` at the given
// coordination (σr 15 %, σχ 0.5), with their similarities.
func (g *generation) nearestIons(like ion, coord string, q int, exclude crystal.Composition, n int) ([]ion, []float64) {
	type cand struct {
		in ion
		s  float64
	}
	var cs []cand
	for _, e := range g.palette {
		if exclude.Contains(e) || !hasState(e, q) {
			continue
		}
		r1, ok1 := radius(like.el, like.q, coord)
		r2, ok2 := radius(e, q, coord)
		if !ok1 || !ok2 {
			continue
		}
		s := radiusSimilarity(r1, r2, 0.15) * gaussian((like.el.X()-e.X())/0.5)
		if s < 0.02 {
			continue
		}
		cs = append(cs, cand{ion{e, q}, s})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return int(a.in.el) - int(b.in.el)
	})
	if len(cs) > n {
		cs = cs[:n]
	}
	ions := make([]ion, len(cs))
	sims := make([]float64, len(cs))
	for i, c := range cs {
		ions[i], sims[i] = c.in, c.s
	}
	return ions, sims
}

// chargeCoupledMoves: LLEMA rule 12, a functional analog by coupled
// aliovalent substitution: two cations with equal counts change charge in
// opposite directions, each replaced by an ion of similar size in its new
// state, so the compound stays neutral in the same structure (SrTiO3 →
// LaAlO3, KNbO3; the classic route to substrate and dielectric analogs);
// or, for a single cation, half its sites go up and half down (MgO →
// LiScO2-type ordered rock salt, ZnO → LiGaO2-type).
func chargeCoupledMoves(g *generation, ps []*parentInfo, ml *moveList) []move {
	p := ps[0]
	if !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(12)
	parentIons := p.ionList()
	var out []move
	const perSite = 6
	for i, a := range p.ions {
		if a.q <= 0 {
			continue
		}
		for j := i + 1; j < len(p.ions); j++ {
			b := p.ions[j]
			if b.q <= 0 || a.n != b.n {
				continue
			}
			for _, delta := range []int{1, -1} {
				as, asims := g.nearestIons(a.ion, a.coord, a.q+delta, p.comp, perSite)
				bs, bsims := g.nearestIons(b.ion, b.coord, b.q-delta, p.comp, perSite)
				for x, a2 := range as {
					for y, b2 := range bs {
						if a2.el == b2.el {
							continue
						}
						repl := map[crystal.Element]ion{a.el: a2, b.el: b2}
						child := p.replaced(repl)
						if !paulingOrdered(ionsOf(child)) {
							continue
						}
						fit := p.fitAfter(repl)
						if fit <= 0 {
							continue
						}
						d := direction(p.needs, parentIons, child)
						comp := substituted(substituted(p.comp, a.el, a2.el), b.el, b2.el)
						from, to := []crystal.Element{a.el, b.el}, []crystal.Element{a2.el, b2.el}
						out = append(out, move{
							op: OpChargeCoupled, comp: comp, proto: protoName(p.proto),
							build:  p.replacing(comp, from, to),
							recipe: replaceRecipe(p, comp, from, to),
							weight: asims[x] * bsims[y] * fit * math.Exp(mildSteering*d),
							explain: func() string {
								return fmt.Sprintf("%s (LLEMA rule %d): coupled substitution %s → %s and %s → %s in %s keeps the total charge",
									rule.Name, rule.Number, a.ion, a2, b.ion, b2, p.inWhat())
							},
						})
					}
				}
			}
		}
		// One cation split over two: half its sites up one charge, half
		// down, which half drawn at random (siteDraw) when a generation
		// uses the moves.
		cell, cellID := p.supercellFor(a.el)
		if cell == nil {
			continue
		}
		sites := sitesOf(cell, a.el)
		if len(sites)%2 != 0 {
			continue
		}
		ups, upSims := g.nearestIons(a.ion, a.coord, a.q+1, p.comp, 4)
		downs, downSims := g.nearestIons(a.ion, a.coord, a.q-1, p.comp, 4)
		ml.draws = append(ml.draws, len(sites))
		group := len(ml.draws) - 1
		half := len(sites) / 2
		for x, up := range ups {
			for y, down := range downs {
				if up.el == down.el {
					continue
				}
				child := append(p.ionList(), ionAmount{up, float64(a.n) / 2}, ionAmount{down, float64(a.n) / 2})
				for k := range child {
					if child[k].el == a.el {
						child[k].n = 0
					}
				}
				if !paulingOrdered(ionsOf(child)) {
					continue
				}
				tos := make([]crystal.Element, len(sites))
				for k := range sites {
					tos[k] = up.el
					if k >= half {
						tos[k] = down.el
					}
				}
				d := direction(p.needs, parentIons, child)
				out = append(out, move{
					op: OpChargeCoupled, comp: cellWith(cell, sites, tos),
					draw: &siteDraw{group: group, cell: cell, cellID: cellID, sites: sites,
						counts: []int{half, len(sites) - half}, els: []crystal.Element{up.el, down.el}},
					weight: 0.7 * upSims[x] * downSims[y] * math.Exp(mildSteering*d),
					explain: func() string {
						return fmt.Sprintf("%s (LLEMA rule %d): the %s sites of %s split between %s and %s, an ordered analog with the same total charge",
							rule.Name, rule.Number, a.ion, p.inWhat(), up, down)
					},
				})
			}
		}
	}
	return out
}

// isoelectronicMoves: LLEMA rule 14, a Grimm–Sommerfeld analog: two
// elements with equal counts move one step in opposite directions along
// their period's valence ladder, each ion's charge changing with its
// valence, so the valence-electron count and the charge balance are kept
// (GaN ↔ ZnO, AlP ↔ MgS, ZnSe → CuBr; between two cations SrTiO3 →
// YScO3).
func isoelectronicMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	p := ps[0]
	if !p.ionic {
		return nil
	}
	rule, _ := RuleByNumber(14)
	parentIons := p.ionList()
	var out []move
	for i, a := range p.ions {
		for j, b := range p.ions {
			if i == j || a.n != b.n || a.q == 0 || b.q == 0 {
				continue
			}
			a2e, ok1 := ladderStep(a.el, -1)
			b2e, ok2 := ladderStep(b.el, +1)
			if !ok1 || !ok2 || a2e == b2e {
				continue
			}
			a2, b2 := ion{a2e, a.q - 1}, ion{b2e, b.q + 1}
			if a2.q == 0 || b2.q == 0 || !hasState(a2.el, a2.q) || !hasState(b2.el, b2.q) {
				continue
			}
			if p.comp.Contains(a2.el) || p.comp.Contains(b2.el) || !g.allows(a2.el) || !g.allows(b2.el) {
				continue
			}
			repl := map[crystal.Element]ion{a.el: a2, b.el: b2}
			child := p.replaced(repl)
			if !paulingOrdered(ionsOf(child)) {
				continue
			}
			fit := p.fitAfter(repl)
			if fit <= 0 {
				continue
			}
			d := direction(p.needs, parentIons, child)
			comp := substituted(substituted(p.comp, a.el, a2.el), b.el, b2.el)
			from, to := []crystal.Element{a.el, b.el}, []crystal.Element{a2.el, b2.el}
			out = append(out, move{
				op: OpIsoelectronic, comp: comp, proto: protoName(p.proto),
				build:  p.replacing(comp, from, to),
				recipe: replaceRecipe(p, comp, from, to),
				weight: fit * math.Exp(mildSteering*d),
				explain: func() string {
					return fmt.Sprintf("%s (LLEMA rule %d): isoelectronic (Grimm–Sommerfeld) analog of %s: %s → %s and %s → %s, same valence-electron count",
						rule.Name, rule.Number, p.inWhat(), a.ion, a2, b.ion, b2)
				},
			})
		}
	}
	return out
}

// allows reports whether e is in the generation's palette.
func (g *generation) allows(e crystal.Element) bool {
	_, ok := slices.BinarySearch(g.palette, e)
	return ok
}
