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
	index   int // position among the generation's parents
	success bool
	weight  float64
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
	// composition has the parent's fingerprint, nil when none does.
	proto *crystal.Prototype
	// protoElems is the element on each of proto's sites.
	protoElems []crystal.Element
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

// analyseParent prepares p; nil when it has no usable structure.
func analyseParent(p Parent, success bool, rank int, t task.Task) *parentInfo {
	s := p.Structure
	if s == nil || len(s.Species) == 0 || len(s.Species) != len(s.Frac) || s.Volume() <= 0 {
		return nil
	}
	pi := &parentInfo{Parent: p, success: success, comp: s.Composition()}
	pi.formula = pi.comp.ReducedFormula()
	pi.weight = 1 / float64(1+rank)
	if !success {
		pi.weight *= 0.35
	}
	if e, ok := p.Properties["e_above_hull"]; ok && e > StableHull {
		pi.weight *= 0.5
	}
	if fp, err := crystal.Fingerprint(s); err == nil {
		pi.fp = fp
	}
	pi.ions, pi.ionic = parentIons(pi.comp)
	if pi.fp != "" {
		pi.proto = identifyPrototype(pi.comp, pi.fp)
	}
	if pi.proto != nil {
		if elems, err := pi.proto.Fit(pi.comp); err == nil {
			pi.protoElems = elems
			for k, e := range elems {
				for i := range pi.ions {
					if pi.ions[i].el == e {
						pi.ions[i].coord = pi.proto.Sites[k].Coordination
					}
				}
			}
		}
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
// fingerprint fp; nil when none has.
func identifyPrototype(c crystal.Composition, fp string) *crystal.Prototype {
	for _, p := range crystal.Matching(c) {
		b, err := crystal.Build(p, c)
		if err != nil {
			continue
		}
		if f, err := crystal.Fingerprint(b.Structure); err == nil && f == fp {
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
func (p *parentInfo) ionList() []ionAmount {
	out := make([]ionAmount, len(p.ions))
	for i, si := range p.ions {
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
