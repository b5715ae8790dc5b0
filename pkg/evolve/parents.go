package evolve

import (
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// StableHull is the energy above the hull (eV/atom) up to which a material
// counts as stable (LLEMA §3.2).
const StableHull = 0.1

// parentInfo is a parent analysed for the operators.
type parentInfo struct {
	Parent
	// analysis is what the structure alone determines, shared between
	// generations: read only.
	*analysis
	index   int // position among the generation's parents
	success bool
	weight  float64
	// needs are the property changes the parent's evaluation asks for.
	needs []need
}

// siteIon is an ion of a parent with its count per formula unit and the
// coordination of its site.
type siteIon struct {
	ion
	n     int
	coord string
}

// analyseParent prepares p, with gen's memory of structures; nil when it
// has no usable structure. Its Structure is the analysis' copy, which the
// moves build from.
func analyseParent(gen *Generator, p Parent, success bool, rank int, t task.Task) *parentInfo {
	s := p.Structure
	if s == nil || len(s.Species) == 0 || len(s.Species) != len(s.Frac) || s.Volume() <= 0 {
		return nil
	}
	pi := &parentInfo{Parent: p, analysis: gen.analyse(s), success: success}
	pi.Structure = pi.s
	pi.weight = 1 / float64(1+rank)
	if !success {
		pi.weight *= 0.35
	}
	if e, ok := p.Properties["e_above_hull"]; ok && e > StableHull {
		pi.weight *= 0.5
	}
	pi.needs = needs(t, p.Properties)
	return pi
}

// parentIons returns the ions of c: the best single-valence neutral
// assignment of common oxidation states, else of ICSD states. Coordination
// defaults to VI.
func parentIons(c crystal.Composition) ([]siteIon, bool) {
	for _, set := range []crystal.OxidationStateSet{crystal.CommonStates, crystal.ICSDStates} {
		a, err := crystal.AssignOxidationStates(c, crystal.OxidationOptions{States: set, NoAlloys: true})
		if err != nil {
			break
		}
		best, ok := a.Best()
		if !ok {
			continue
		}
		counts := map[crystal.Element]int{}
		for _, it := range a.Formula.Items() {
			counts[it.Element] = int(math.Round(it.Amount))
		}
		var out []siteIon
		hasAnion := false
		for _, e := range sortedElements(counts) {
			q, _ := best.State(e)
			if q != math.Trunc(q) {
				return nil, false
			}
			out = append(out, siteIon{ion{e, int(q)}, counts[e], "VI"})
			hasAnion = hasAnion || q < 0
		}
		return out, hasAnion
	}
	// No neutral assignment: the elements with state 0, for the operators
	// that need no charges.
	var out []siteIon
	for _, it := range c.ReducedComposition().Items() {
		out = append(out, siteIon{ion{it.Element, 0}, int(math.Max(1, math.Round(it.Amount))), "VI"})
	}
	return out, false
}

// identifyPrototype returns the library prototype in which c, built, has
// fingerprint fp; nil when none has. The fingerprints of the builds are
// gen's: a parent the generator proposed was built in its prototype, so
// that build's fingerprint is usually remembered.
func (gen *Generator) identifyPrototype(c crystal.Composition, fp string) *crystal.Prototype {
	for _, p := range crystal.Matching(c) {
		if f, ok := gen.builtFingerprint(p, c); ok && f == fp {
			return p
		}
	}
	return nil
}

// anion returns the parent's anion (the single one of a simple ionic
// compound), and ok false for compounds with no anion or several.
func (p *parentInfo) anion() (siteIon, bool) {
	var out siteIon
	n := 0
	for _, si := range p.ions {
		if si.q < 0 {
			out = si
			n++
		}
	}
	return out, n == 1
}

// ionList returns the parent's ions with their counts, for descriptors.
func (a *analysis) ionList() []ionAmount {
	out := make([]ionAmount, len(a.ions))
	for i, si := range a.ions {
		out[i] = ionAmount{si.ion, float64(si.n)}
	}
	return out
}

// sitesOf returns the indices of the cell's sites holding e.
func sitesOf(s *crystal.Structure, e crystal.Element) []int {
	var out []int
	for i, x := range s.Species {
		if x == e {
			out = append(out, i)
		}
	}
	return out
}

// protoName is p's name, "" for nil.
func protoName(p *crystal.Prototype) string {
	if p == nil {
		return ""
	}
	return p.Name
}
