package evolve

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// SeedSource is a known compound offered as a seed: a formula from the
// reference tables and its known property values by canonical name
// (missing properties are unknown).
type SeedSource struct {
	Formula    string
	Properties map[string]float64
}

// Seed is a chosen seed material with a structure built from the prototype
// library (the reference tables hold compositions, not structures).
type Seed struct {
	Structure *crystal.Structure
	// Formula is the reduced formula.
	Formula string
	// Prototype is the library prototype it was built in.
	Prototype string
	// Properties are the source's known values.
	Properties map[string]float64
	Rationale  string
}

// minSeedFit is the least site fit of a seed's prototype: a compound
// whose ions fit no prototype of the library (ErLuO3 as a cubic
// perovskite, t = 0.75) would seed its island with a structure it does
// not have, and its children would inherit it.
const minSeedFit = 0.1

// seedCandidate is a source that passed the cheap filters, with its rank.
type seedCandidate struct {
	src       SeedSource
	comp      crystal.Composition
	formula   string
	cations   []crystal.Element
	anion     crystal.Element
	violated  int     // constraints known to be missed (and known instability)
	knownN    int     // constraints with a known value
	shortfall float64 // sum of the known constraints' negative margins (≤ 0)
	score     float64 // mean margin over the known constraints
	margins   []string
}

// Seeds chooses up to n seed materials for a task from known compounds,
// as LLEMA seeds its islands with known materials (App. D.2):
//
//  1. Sources whose elements the task's rules and the operators' palette
//     allow and whose anonymous formula is one of the prototype library's
//     (AX, AX2, A2X, A2X3, ABX2, ABX3, AB2X4) are kept, one per reduced
//     formula (the best-ranked polymorph).
//  2. They are ranked by the task's constraints evaluated on their known
//     values, unknown values counting as unknown rather than failing: first
//     by the number of constraints known to be missed (a known energy above
//     the hull over 0.1 eV/atom counts as one), then by the number of
//     constraints known, then by how far they miss them (the sum of the
//     negative margins Φ, in steps of 0.05), then by the mean margin Φ over
//     the known ones (in steps of 0.05, ties broken by rng). The shortfall
//     comes before the mean: a compound far short of one bound (a 20 GPa
//     chloride for a 200 GPa bulk modulus) is a worse start than one just
//     short of it (AlN at 195 GPa), however comfortably the first meets
//     the other constraints.
//  3. They are taken in that order for diversity across chemical systems:
//     a first pass admits no cation already used and no anion more than
//     ⌈n/2⌉ times, a second any new chemical system, a third the rest.
//  4. Each is built in the library prototype its ions fit best (radius
//     ratios, tolerance factor) among those that accept it and pass
//     crystal.Validate; a source that cannot be built, or fits no
//     prototype well (site fit below 0.1), is passed over.
//
// The result is deterministic for a given rng seed; nil rng uses a fixed
// seed.
func Seeds(t task.Task, sources []SeedSource, n int, rng *rand.Rand) []Seed {
	if n <= 0 || len(sources) == 0 {
		return nil
	}
	if rng == nil {
		rng = rand.New(rand.NewPCG(0x5eed, 0xc0ffee))
	}
	allowed := map[crystal.Element]bool{}
	for _, e := range palette(t.Elements.Allows) {
		allowed[e] = true
	}
	templates := map[string]bool{}
	for _, p := range crystal.Prototypes() {
		templates[anonymousOf(p)] = true
	}
	best := map[string]*seedCandidate{}
	var order []string
	for _, src := range sources {
		c, ok := seedCandidateOf(t, src, allowed, templates)
		if !ok {
			continue
		}
		if old, ok := best[c.formula]; ok {
			if seedLess(c, old) {
				best[c.formula] = c
			}
			continue
		}
		best[c.formula] = c
		order = append(order, c.formula)
	}
	cands := make([]*seedCandidate, len(order))
	for i, f := range order {
		cands[i] = best[f]
	}
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	slices.SortStableFunc(cands, func(a, b *seedCandidate) int {
		if seedLess(a, b) {
			return -1
		}
		if seedLess(b, a) {
			return 1
		}
		return 0
	})

	var out []Seed
	usedCation := map[crystal.Element]bool{}
	usedAnion := map[crystal.Element]int{}
	usedSystem := map[string]bool{}
	taken := map[string]bool{}
	maxAnion := (n + 1) / 2
	for pass := 0; pass < 3 && len(out) < n; pass++ {
		for _, c := range cands {
			if len(out) >= n {
				break
			}
			if taken[c.formula] {
				continue
			}
			system := c.comp.ChemicalSystem()
			switch pass {
			case 0:
				if usedSystem[system] || usedAnion[c.anion] >= maxAnion || slices.ContainsFunc(c.cations, func(e crystal.Element) bool { return usedCation[e] }) {
					continue
				}
			case 1:
				if usedSystem[system] {
					continue
				}
			}
			seed, ok := buildSeed(t, c)
			taken[c.formula] = true // built or not, it is settled
			if !ok {
				continue
			}
			out = append(out, seed)
			usedSystem[system] = true
			usedAnion[c.anion]++
			for _, e := range c.cations {
				usedCation[e] = true
			}
		}
	}
	return out
}

// anonymousOf is the anonymous formula of a prototype's stoichiometry
// ("AB2" for AX2), as crystal.Composition.AnonymousFormula writes it.
func anonymousOf(p *crystal.Prototype) string {
	amts := make([]int, len(p.Sites))
	for k, s := range p.Sites {
		amts[k] = s.Count
	}
	slices.Sort(amts)
	var b strings.Builder
	for i, a := range amts {
		b.WriteByte(byte('A' + i))
		if a != 1 {
			fmt.Fprintf(&b, "%d", a)
		}
	}
	return b.String()
}

// seedCandidateOf applies the cheap filters to a source and ranks it.
func seedCandidateOf(t task.Task, src SeedSource, allowed map[crystal.Element]bool, templates map[string]bool) (*seedCandidate, bool) {
	comp, err := crystal.ParseFormula(src.Formula)
	if err != nil || comp.Len() < 2 || comp.Len() > 3 {
		return nil, false
	}
	comp = comp.ReducedComposition()
	if !templates[comp.AnonymousFormula()] || len(t.Check(comp)) > 0 {
		return nil, false
	}
	c := &seedCandidate{src: src, comp: comp, formula: comp.ReducedFormula()}
	for _, e := range comp.Elements() {
		if !allowed[e] {
			return nil, false
		}
	}
	// The anion is the most electronegative element; it must be one.
	els := comp.Elements()
	an := els[0]
	for _, e := range els {
		if e.X() > an.X() {
			an = e
		}
	}
	if _, ok := anionState(an); !ok {
		return nil, false
	}
	c.anion = an
	for _, e := range els {
		if e != an {
			if !cationLike(e) {
				return nil, false
			}
			c.cations = append(c.cations, e)
		}
	}
	sum := 0.0
	for _, con := range t.Constraints {
		f, ok := src.Properties[con.Property]
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		phi := con.Margin(f)
		c.knownN++
		sum += phi
		mark := "✓"
		if phi < 0 {
			c.violated++
			c.shortfall += phi
			mark = "✗"
		}
		c.margins = append(c.margins, fmt.Sprintf("%s = %.3g (%s %s)", con.Property, f, con.String(), mark))
	}
	if c.knownN > 0 {
		c.score = sum / float64(c.knownN)
	}
	if e, ok := src.Properties["e_above_hull"]; ok && e > StableHull {
		c.violated++
		c.margins = append(c.margins, fmt.Sprintf("e_above_hull = %.3g eV/atom (unstable)", e))
	}
	return c, true
}

// seedLess orders candidates: fewer known violations, more known
// constraints, a smaller shortfall, then a higher mean margin, both in
// steps of 0.05.
func seedLess(a, b *seedCandidate) bool {
	if a.violated != b.violated {
		return a.violated < b.violated
	}
	if a.knownN != b.knownN {
		return a.knownN > b.knownN
	}
	if sa, sb := math.Floor(a.shortfall/0.05), math.Floor(b.shortfall/0.05); sa != sb {
		return sa > sb
	}
	return math.Floor(a.score/0.05) > math.Floor(b.score/0.05)
}

// buildSeed builds c in its best-fitting prototype that passes validation.
func buildSeed(t task.Task, c *seedCandidate) (Seed, bool) {
	ions, ionic := parentIons(c.comp)
	if !ionic {
		return Seed{}, false
	}
	plain := make([]ion, len(ions))
	for i, si := range ions {
		plain[i] = si.ion
	}
	type option struct {
		p   *crystal.Prototype
		fit float64
	}
	var opts []option
	for _, p := range crystal.Matching(c.comp) {
		if fit, _, ok := protoFit(p, c.comp, plain); ok && fit > 0 {
			opts = append(opts, option{p, fit})
		}
	}
	slices.SortStableFunc(opts, func(a, b option) int { return cmp.Compare(b.fit, a.fit) })
	if len(opts) > 0 && opts[0].fit < minSeedFit {
		return Seed{}, false
	}
	for _, o := range opts {
		b, err := crystal.Build(o.p, c.comp)
		if err != nil {
			continue
		}
		rep, err := crystal.Validate(b.Structure, crystal.ValidityOptions{})
		if err != nil || !rep.Valid() {
			continue
		}
		why := "known compound"
		if len(c.margins) > 0 {
			why += ": " + strings.Join(c.margins, ", ")
		}
		return Seed{
			Structure: b.Structure, Formula: c.formula, Prototype: o.p.Name, Properties: c.src.Properties,
			Rationale: fmt.Sprintf("seed for %q, %s; built as %s from the prototype library (site fit %.2f)", t.Name, why, o.p.CommonName, o.fit),
		}, true
	}
	return Seed{}, false
}

// BuildKnown builds a known compound exactly as Seeds builds a seed: the
// same filters on its composition (two or three elements, a prototype's
// anonymous formula, the operators' palette, an anion and cation-like
// cations) and the library prototype its ions fit best that passes
// crystal.Validate. ok is false where Seeds would pass it over. It is how
// known compounds are built for measuring the surrogates' error on
// structures made as candidates are.
func BuildKnown(formula string) (Seed, bool) {
	allowed := map[crystal.Element]bool{}
	for _, e := range palette(task.ElementRules{}.Allows) {
		allowed[e] = true
	}
	templates := map[string]bool{}
	for _, p := range crystal.Prototypes() {
		templates[anonymousOf(p)] = true
	}
	c, ok := seedCandidateOf(task.Task{}, SeedSource{Formula: formula}, allowed, templates)
	if !ok {
		return Seed{}, false
	}
	return buildSeed(task.Task{}, c)
}
