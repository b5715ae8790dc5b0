package evolve

import (
	"fmt"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// crossoverMoves: LLEMA rule 11 ("Suggest plausible products from
// precursors") as crossover of two parents. The parents are read as
// precursors and their ions pooled; the children are the library
// compounds a solid-state reaction of the two could give, each taking ions
// from both parents:
//
//   - binary: the cation of one parent with the anion of the other (MgO +
//     ZnS → MgS, ZnO), in the prototypes of the balanced formula;
//   - ternary: one cation of each parent on the two cation sites of a
//     double-cation prototype whose charges balance with a shared anion —
//     perovskite ABX3 (q_A + q_B = 3|q_X|), spinel AB2X4 (q_A + 2q_B =
//     4|q_X|), α-NaFeO2 ABX2 (q_A + q_B = 2|q_X|): MgO + Al2O3 → MgAl2O4,
//     SrO + TiO2 → SrTiO3, Li2O + Al2O3 → LiAlO2.
//
// Children are weighted by site fit (tolerance factor for perovskites,
// radius ratios otherwise) and, mildly, by the task's trends; the parents'
// own formulas are excluded.
func crossoverMoves(g *generation, ps []*parentInfo, _ *moveList) []move {
	a, b := ps[0], ps[1]
	if !a.ionic || !b.ionic || a.formula == b.formula {
		return nil
	}
	rule, _ := RuleByNumber(11)
	type pooled struct {
		ion
		from int // 0: a, 1: b
	}
	var cations, anions []pooled
	add := func(list []pooled, in ion, from int) []pooled {
		for _, x := range list {
			if x.el == in.el && x.q == in.q {
				return list
			}
		}
		return append(list, pooled{in, from})
	}
	for k, p := range []*parentInfo{a, b} {
		for _, si := range p.ions {
			if si.q > 0 {
				cations = add(cations, si.ion, k)
			} else if si.q < 0 {
				anions = add(anions, si.ion, k)
			}
		}
	}
	seen := map[string]bool{a.formula: true, b.formula: true}
	var out []move
	consider := func(p *crystal.Prototype, ions []ion) {
		if !g.allowsAll(ions) || !paulingOrdered(ions) {
			return
		}
		comp, ok := protoComposition(p, ions)
		if !ok {
			return
		}
		key := p.Name + "/" + comp.ReducedFormula()
		if seen[key] || seen[comp.ReducedFormula()] {
			return
		}
		seen[key] = true
		fit, placed, ok := protoFit(p, comp, ions)
		if !ok || fit <= 0 {
			return
		}
		amounts := make([]ionAmount, len(placed))
		for k, in := range placed {
			amounts[k] = ionAmount{in, float64(p.Sites[k].Count)}
		}
		w := fit * math.Exp(0.3*prior(g.in.Task, amounts))
		out = append(out, buildMove(OpCrossover, p, comp, w, func() string {
			return fmt.Sprintf("%s (LLEMA rule %d): %s + %s → %s as %s: %s%s",
				rule.Name, rule.Number, a.formula, b.formula, comp.ReducedFormula(), p.CommonName, placement(p, placed), toleranceNote(p, placed))
		}))
	}
	for _, p := range crystal.Prototypes() {
		ax := anionSite(p)
		if ax < 0 {
			continue
		}
		var cationSites []int
		for k, s := range p.Sites {
			if s.Role == crystal.Cation {
				cationSites = append(cationSites, k)
			}
		}
		for _, x := range anions {
			switch len(cationSites) {
			case 1:
				for _, c := range cations {
					if c.from == x.from {
						continue
					}
					ions := make([]ion, len(p.Sites))
					ions[cationSites[0]], ions[ax] = c.ion, x.ion
					consider(p, ions)
				}
			case 2:
				for _, c1 := range cations {
					for _, c2 := range cations {
						if c1.from == c2.from || c1.el == c2.el {
							continue
						}
						ions := make([]ion, len(p.Sites))
						ions[cationSites[0]], ions[cationSites[1]], ions[ax] = c1.ion, c2.ion, x.ion
						consider(p, ions)
					}
				}
			}
		}
	}
	return out
}

// allowsAll reports whether every ion's element is in the palette.
func (g *generation) allowsAll(ions []ion) bool {
	for _, in := range ions {
		if !g.allows(in.el) {
			return false
		}
	}
	return true
}
