package reflection

import (
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Relevant orders a bank's lessons for a prompt whose island holds
// parents of the given formulas (SciMem's retrieval by context: the bank
// is the campaign's context; within it, by chemical-system similarity):
// a lesson's relevance is the largest Jaccard similarity between the
// elements of its subject (a composition, an element, a chemical system)
// and those of a parent, and for a composition family FamilyRelevance
// when a parent is of the family; the most relevant first, then the best
// supported, then by key. Lessons on nothing a parent shares come last,
// the best supported first; at most n are returned (n ≤ 0: all).
func Relevant(lessons []Experience, formulas []string, n int) []Experience {
	var parents []map[string]bool
	families := map[string]bool{}
	for _, f := range formulas {
		if c, err := crystal.ParseFormula(f); err == nil {
			set := map[string]bool{}
			for _, e := range c.Elements() {
				set[e.Symbol()] = true
			}
			parents = append(parents, set)
			families[c.AnonymousFormula()] = true
		}
	}
	type scored struct {
		e   Experience
		sim float64
	}
	var out []scored
	for _, e := range lessons {
		els := subjectElements(e.Key)
		best := 0.0
		if fam, ok := strings.CutPrefix(e.Key, "fam:"); ok && families[fam] {
			best = FamilyRelevance
		}
		for _, p := range parents {
			inter := 0
			for _, x := range els {
				if p[x] {
					inter++
				}
			}
			if union := len(els) + len(p) - inter; union > 0 {
				best = max(best, float64(inter)/float64(union))
			}
		}
		out = append(out, scored{e, best})
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.sim != b.sim {
			return a.sim > b.sim
		}
		if a.e.Support != b.e.Support {
			return a.e.Support > b.e.Support
		}
		return a.e.Key < b.e.Key
	})
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	res := make([]Experience, len(out))
	for i, s := range out {
		res[i] = s.e
	}
	return res
}

// FamilyRelevance is the relevance of a composition family's lesson to a
// prompt with a parent of the family: the stoichiometry is shared, the
// chemistry not, so it ranks with a system sharing half its elements.
const FamilyRelevance = 0.5

// subjectElements are the element symbols of a lesson key's subject, none
// for a key this build does not read.
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
		return []string{name}
	case "sys":
		return strings.Split(name, "-")
	}
	return nil
}
