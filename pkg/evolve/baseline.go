package evolve

import (
	"fmt"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// RandomSubstitution is the unguided baseline against which the chemistry
// operators are measured: it picks a parent uniformly from the pools (or,
// with empty pools, fills a random library prototype with uniformly random
// elements), replaces one of its elements, chosen uniformly, on all its
// sites by an element drawn uniformly from 1–94 among those the task's
// element rules allow, and keeps the result when it passes the same checks
// as Propose: crystal.Validate, the element rules, Allowed, structural
// novelty, and novel compositions before known ones. No chemistry guides
// the choice beyond what validity itself enforces. Operator
// OpRandomSubstitution, Rule 0.
func RandomSubstitution(in Input) ([]Proposal, []Rejection) {
	if in.Slots <= 0 {
		return nil, nil
	}
	g := newGeneration(new(Generator), in)
	var elements []crystal.Element
	for _, e := range crystal.Elements() {
		if in.Task.Elements.Allows(e) {
			elements = append(elements, e)
		}
	}
	if len(elements) == 0 {
		return nil, nil
	}
	next := func() (move, bool) {
		if len(g.parents) == 0 {
			return g.randomPrototypeMove(elements)
		}
		p := g.parents[g.rng.IntN(len(g.parents))]
		from := p.ions[g.rng.IntN(len(p.ions))].el
		to := elements[g.rng.IntN(len(elements))]
		if p.comp.Contains(to) {
			return move{}, false
		}
		s := p.Structure
		return move{
			op: OpRandomSubstitution, parents: []string{p.ID}, comp: substituted(p.comp, from, to), proto: protoName(p.proto),
			build:  func() (*crystal.Structure, error) { return crystal.Substitute(s, from, to) },
			weight: 1,
			explain: func() string {
				return fmt.Sprintf("random substitution (baseline): %s → %s in %s", from, to, p.formula)
			},
		}, true
	}
	g.run(next)
	return g.out, g.rejected
}

// randomPrototypeMove fills a uniformly chosen library prototype with
// distinct uniformly random elements.
func (g *generation) randomPrototypeMove(elements []crystal.Element) (move, bool) {
	protos := crystal.Prototypes()
	p := protos[g.rng.IntN(len(protos))]
	items := make([]crystal.ElementAmount, len(p.Sites))
	used := map[crystal.Element]bool{}
	for k, s := range p.Sites {
		e := elements[g.rng.IntN(len(elements))]
		if used[e] {
			return move{}, false
		}
		used[e] = true
		items[k] = crystal.ElementAmount{Element: e, Amount: float64(s.Count)}
	}
	comp, err := crystal.NewComposition(items...)
	if err != nil {
		return move{}, false
	}
	return buildMove(OpRandomSubstitution, p, comp, 1, func() string {
		return fmt.Sprintf("random substitution (baseline), from scratch: %s filled with random elements, %s", p.CommonName, comp.ReducedFormula())
	}), true
}
