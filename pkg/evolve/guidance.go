package evolve

import (
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Guidance turns what reflection learned into the weights the operators
// are drawn by: a factor on an operator's base weight, and a factor on a
// move's weight for each element of its composition, and a factor on a
// move's weight for its composition's family (anonymous formula, "ABC3").
// Absent entries are 1.
type Guidance struct {
	Operators map[string]float64
	Elements  map[string]float64
	Families  map[string]float64
}

func (g Guidance) operator(name string) float64 {
	if f, ok := g.Operators[name]; ok {
		return f
	}
	return 1
}

// composition is the product of the element factors of c and the factor
// of its family.
func (g Guidance) composition(c crystal.Composition) float64 {
	f := 1.0
	for _, e := range c.Elements() {
		if x, ok := g.Elements[e.Symbol()]; ok {
			f *= x
		}
	}
	if len(g.Families) > 0 {
		if x, ok := g.Families[c.AnonymousFormula()]; ok {
			f *= x
		}
	}
	return f
}

// weighsCompositions reports whether g weighs moves by their composition.
func (g Guidance) weighsCompositions() bool { return len(g.Elements) > 0 || len(g.Families) > 0 }

// The mapping's factors and bounds.
const (
	guideProductive   = 1.3  // an element of a productive lesson's subject
	guideUnproductive = 0.75 // an element of an unproductive lesson's subject
	guideCapped       = 0.9  // an element of a capped composition
	guideElementMax   = 2.0
	guideElementMin   = 0.4
	guideExploit      = 1.25 // substitutions, when lessons name productive subjects
	guideExplore      = 1.25 // fills and crossover, when caps pile up
	guideCapsExplore  = 3    // caps in force that make exploration worth more
)

// exploitOps make small steps from a parent; exploreOps build
// compositions or structures its neighbours do not reach.
var (
	exploitOps = []string{OpSameGroup, OpSimilarElement, OpOxidationState, OpIonicRadius, OpIsoelectronic}
	exploreOps = []string{OpPrototypeFill, OpTemplateFill, OpCrossover}
)

// GuidanceFrom maps a memory bank's lessons and directives to weights
// (documented in docs/architecture.md, "Reflection reaches the
// generators"):
//
//   - every element of a productive lesson's subject (a composition, an
//     element or a chemical system) is weighted ×1.3, of an unproductive
//     one ×0.75, of a capped composition ×0.9, the product kept within
//     [0.4, 2]: moves toward the chemistry that worked are drawn more
//     often, toward what failed less, but nothing is ruled out (exclusions
//     and avoided systems are the proposer's filter, not weights);
//   - a move whose composition is of a productive lesson's family (its
//     anonymous formula, "fam:ABC3") is weighted ×1.3, of an unproductive
//     one ×0.75;
//   - with at least one productive lesson the small-step substitutions
//     (same-group, similar-element, oxidation-state, ionic-radius,
//     isoelectronic) are weighted ×1.25: exploit the neighbours of what
//     worked (MADE's exploit bullets);
//   - with 3 or more caps in force the operators that reach new
//     compositions (prototype fill, template fill, crossover) are weighted
//     ×1.25: the stop-loss bullets' "move on to untried compositions".
//
// Lessons of unknown outcome (written by an LLM without one) weigh
// nothing.
func GuidanceFrom(lessons []reflection.Experience, directives []messages.Directive) Guidance {
	g := Guidance{Operators: map[string]float64{}, Elements: map[string]float64{}, Families: map[string]float64{}}
	scale := func(sym string, f float64) {
		x, ok := g.Elements[sym]
		if !ok {
			x = 1
		}
		g.Elements[sym] = min(max(x*f, guideElementMin), guideElementMax)
	}
	productive := false
	for _, l := range lessons {
		var f float64
		switch l.Outcome {
		case reflection.OutcomeProductive:
			f, productive = guideProductive, true
		case reflection.OutcomeUnproductive:
			f = guideUnproductive
		default:
			continue
		}
		for _, sym := range subjectElements(l.Key) {
			scale(sym, f)
		}
		if fam, ok := strings.CutPrefix(l.Key, "fam:"); ok {
			g.Families[fam] = f
		}
	}
	caps := 0
	for _, d := range directives {
		if d.Kind != messages.DirectiveCapComposition {
			continue
		}
		caps++
		if c, err := crystal.ParseFormula(d.Formula); err == nil {
			for _, e := range c.Elements() {
				scale(e.Symbol(), guideCapped)
			}
		}
	}
	if productive {
		for _, op := range exploitOps {
			g.Operators[op] = guideExploit
		}
	}
	if caps >= guideCapsExplore {
		for _, op := range exploreOps {
			g.Operators[op] = guideExplore
		}
	}
	return g
}

func subjectElements(key string) []string {
	prefix, name, _ := strings.Cut(key, ":")
	switch prefix {
	case "comp":
		c, err := crystal.ParseFormula(name)
		if err != nil {
			return nil
		}
		var out []string
		for _, e := range c.Elements() {
			out = append(out, e.Symbol())
		}
		return out
	case "elem":
		if _, err := crystal.ElementBySymbol(name); err == nil {
			return []string{name}
		}
	case "sys":
		var out []string
		for _, s := range strings.Split(name, "-") {
			if _, err := crystal.ElementBySymbol(s); err == nil {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
