package reflection

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// elementEvidence is why an element is excluded (or would be).
type elementEvidence struct {
	Symbol       string
	Queries      int
	Compositions []string // by formula
}

// systemEvidence is why a chemical system is avoided.
type systemEvidence struct {
	System string
	Capped []string // capped formulas of the system, sorted
}

// directives applies the rules (MADE §5.2–5.3: enforce, don't advise):
//
//   - revoke: a directive of the bank that a success now contradicts — a
//     cap on a composition, an exclusion of an element or an avoided
//     system that produced a hit or a stable candidate — is revoked;
//   - exclude_element: an element whose compositions were queried at
//     least ExcludeAfter times in total, over at least
//     ExcludeMinCompositions compositions, none with a hit or a stable
//     candidate, while some composition without it succeeded (unless
//     ExcludeWithoutContrast) — never an element the task requires
//     (MustContainAll), nor one whose exclusion would leave no allowed
//     element of MustContainOneOf, nor fewer than two of AllowedOnly; at
//     most MaxExclusions per reflection, chosen greedily (see exclusions);
//   - avoid_system: a chemical system with at least AvoidAfterCaps capped
//     compositions (the bank's caps and this reflection's) and no success,
//     unless an exclusion already covers it;
//   - cap_composition: a composition queried at least CapAfter times with
//     no hit and no stable candidate, capped at its current count (Limit
//     = queries), unless already capped, or blocked by an exclusion, an
//     avoided system or the task's own element rules.
//
// A success is never contradicted: a composition with a hit or a stable
// candidate is never capped, an element in one never excluded, its system
// never avoided. Directives already in the bank are not emitted again. At
// most MaxDirectives are emitted: exclusions, then avoided systems, then
// caps, each in order of evidence, then by name.
func (r *reflection) directives() {
	r.bankCaps = map[string]messages.Directive{}
	r.bankExcluded, r.bankAvoided = map[string]bool{}, map[string]bool{}
	bank := slices.Clone(r.in.Directives)
	sort.SliceStable(bank, func(i, j int) bool { return bank[i].Key() < bank[j].Key() })
	for _, d := range bank {
		if d.Validate() != nil {
			continue
		}
		switch d.Kind {
		case messages.DirectiveCapComposition:
			if c := r.byF[d.Formula]; c != nil && c.success() {
				r.revoke(d)
				continue
			}
			r.bankCaps[d.Formula] = d
		case messages.DirectiveExcludeElement:
			if r.okElem[d.Element] {
				r.revoke(d)
				continue
			}
			r.bankExcluded[d.Element] = true
		case messages.DirectiveAvoidSystem:
			if r.okSys[d.System] {
				r.revoke(d)
				continue
			}
			r.bankAvoided[d.System] = true
		}
	}

	// Caps by the rule, before redundancy is known.
	var capCandidates []*comp
	for _, c := range r.comps {
		if c.Queries >= r.opt.CapAfter && !c.success() {
			if _, done := r.bankCaps[c.Formula]; !done {
				capCandidates = append(capCandidates, c)
			}
		}
	}
	// The budget goes to the broadest rules first; a cap is dropped only
	// for an exclusion or avoided system actually emitted.
	budget := r.opt.MaxDirectives
	exclusions := r.exclusions()
	exclusions = exclusions[:min(len(exclusions), budget)]
	avoids := r.avoids(capCandidates, exclusions)
	avoids = avoids[:min(len(avoids), budget-len(exclusions))]

	blocked := func(c *comp) bool {
		if r.bankAvoided[c.system] {
			return true
		}
		for _, a := range avoids {
			if a.System == c.system {
				return true
			}
		}
		for _, e := range c.elements {
			if r.bankExcluded[e] || !r.allowedByTask(e) {
				return true
			}
			for _, x := range exclusions {
				if x.Symbol == e {
					return true
				}
			}
		}
		return false
	}
	var caps []*comp
	for _, c := range capCandidates {
		if !blocked(c) {
			caps = append(caps, c)
		}
	}
	sort.SliceStable(caps, func(i, j int) bool {
		if caps[i].Queries != caps[j].Queries {
			return caps[i].Queries > caps[j].Queries
		}
		return caps[i].Formula < caps[j].Formula
	})

	for _, x := range exclusions {
		r.excluded = append(r.excluded, x)
		r.emitted = append(r.emitted, messages.Directive{
			Kind: messages.DirectiveExcludeElement, Element: x.Symbol,
			Reason: fmt.Sprintf("%s: %d queries over %d compositions (%s), none feasible or stable",
				x.Symbol, x.Queries, len(x.Compositions), list(x.Compositions, 4)),
		})
	}
	for _, a := range avoids {
		r.avoided = append(r.avoided, a)
		r.emitted = append(r.emitted, messages.Directive{
			Kind: messages.DirectiveAvoidSystem, System: a.System,
			Reason: fmt.Sprintf("%s: %d compositions capped (%s), none feasible or stable",
				a.System, len(a.Capped), list(a.Capped, 4)),
		})
	}
	for _, c := range caps {
		if len(r.emitted) == budget {
			break
		}
		r.caps = append(r.caps, c)
		r.emitted = append(r.emitted, messages.Directive{
			Kind: messages.DirectiveCapComposition, Formula: c.Formula, Limit: c.Queries,
			Reason: fmt.Sprintf("%s: %d queries, none feasible or stable%s", c.Formula, c.Queries, energyRange(c)),
		})
	}
	r.capped = map[string]bool{}
	for f := range r.bankCaps {
		r.capped[f] = true
	}
	for _, c := range r.caps {
		r.capped[c.Formula] = true
	}
}

func (r *reflection) revoke(d messages.Directive) {
	d.Reason = "revoked: " + r.contradiction(d)
	r.revoked = append(r.revoked, d)
}

// contradiction names the success that contradicts a directive.
func (r *reflection) contradiction(d messages.Directive) string {
	for _, c := range r.comps {
		if !c.success() {
			continue
		}
		if (d.Kind == messages.DirectiveCapComposition && c.Formula == d.Formula) ||
			(d.Kind == messages.DirectiveExcludeElement && slices.Contains(c.elements, d.Element)) ||
			(d.Kind == messages.DirectiveAvoidSystem && c.system == d.System) {
			return fmt.Sprintf("%s now has %s", c.Formula, outcome(c))
		}
	}
	return "contradicted by a success"
}

// exclusions returns the elements to exclude, chosen greedily: the
// eligible element with the most queries is excluded, the compositions it
// explains are set aside, and the evidence of the others is counted again
// over the rest — so that NaCl3, Na2Cl5 and NaCl5 failing exclude one of
// Na and Cl, not both. Elements the task's rules name (MustContainOneOf)
// are considered after the others: the task cares about them.
func (r *reflection) exclusions() []elementEvidence {
	anySuccess := false
	for _, c := range r.comps {
		anySuccess = anySuccess || c.success()
	}
	if !anySuccess && !r.opt.ExcludeWithoutContrast {
		return nil
	}
	rules := r.in.Task.Elements
	excluded := map[string]bool{}
	for e := range r.bankExcluded {
		excluded[e] = true
	}
	for _, e := range rules.Exclude {
		excluded[e] = true
	}
	blocked := func(c *comp) bool {
		if r.bankAvoided[c.system] {
			return true
		}
		for _, e := range c.elements {
			if excluded[e] || !r.allowedByTask(e) {
				return true
			}
		}
		return false
	}
	protected := map[string]bool{}
	var out []elementEvidence
	for len(out) < r.opt.MaxExclusions {
		cands := r.elementEvidence(blocked)
		sort.Slice(cands, func(i, j int) bool {
			a, b := cands[i], cands[j]
			na, nb := slices.Contains(rules.MustContainOneOf, a.Symbol), slices.Contains(rules.MustContainOneOf, b.Symbol)
			if na != nb {
				return nb
			}
			if a.Queries != b.Queries {
				return a.Queries > b.Queries
			}
			return a.Symbol < b.Symbol
		})
		picked := false
		for _, x := range cands {
			if excluded[x.Symbol] || protected[x.Symbol] || !r.allowedByTask(x.Symbol) {
				continue
			}
			if !r.mayExclude(x.Symbol, excluded) {
				protected[x.Symbol] = true
				r.protected = append(r.protected, x)
				continue
			}
			excluded[x.Symbol] = true
			out = append(out, x)
			picked = true
			break
		}
		if !picked {
			break
		}
	}
	return out
}

// elementEvidence returns, for every element of the compositions not set
// aside by skip, its queries and compositions, keeping the elements that
// meet the exclusion evidence: at least ExcludeAfter queries over at least
// ExcludeMinCompositions compositions, none with a hit or a stable
// candidate.
func (r *reflection) elementEvidence(skip func(*comp) bool) []elementEvidence {
	ev := map[string]*elementEvidence{}
	failed := map[string]bool{}
	for _, c := range r.comps {
		if skip(c) {
			continue
		}
		for _, e := range c.elements {
			x := ev[e]
			if x == nil {
				x = &elementEvidence{Symbol: e}
				ev[e] = x
				failed[e] = true
			}
			x.Queries += c.Queries
			x.Compositions = append(x.Compositions, c.Formula)
			if c.success() {
				failed[e] = false
			}
		}
	}
	var out []elementEvidence
	for e, x := range ev {
		if failed[e] && !r.okElem[e] && x.Queries >= r.opt.ExcludeAfter && len(x.Compositions) >= r.opt.ExcludeMinCompositions {
			out = append(out, *x)
		}
	}
	return out
}

func (r *reflection) allowedByTask(sym string) bool {
	e, err := crystal.ElementBySymbol(sym)
	return err == nil && r.in.Task.Elements.Allows(e)
}

// mayExclude reports whether excluding sym, on top of the exclusions
// already decided, leaves the task's element rules satisfiable: no
// required element, at least one allowed element of MustContainOneOf,
// at least two of AllowedOnly (a compound needs two elements).
func (r *reflection) mayExclude(sym string, excluded map[string]bool) bool {
	rules := r.in.Task.Elements
	if slices.Contains(rules.MustContainAll, sym) {
		return false
	}
	remaining := func(set []string) int {
		n := 0
		for _, s := range set {
			if s != sym && !excluded[s] && r.allowedByTask(s) {
				n++
			}
		}
		return n
	}
	if slices.Contains(rules.MustContainOneOf, sym) && remaining(rules.MustContainOneOf) == 0 {
		return false
	}
	if slices.Contains(rules.AllowedOnly, sym) && remaining(rules.AllowedOnly) < 2 {
		return false
	}
	return true
}

// avoids returns the systems to avoid, most capped first.
func (r *reflection) avoids(newCaps []*comp, exclusions []elementEvidence) []systemEvidence {
	excluded := map[string]bool{}
	for e := range r.bankExcluded {
		excluded[e] = true
	}
	for _, e := range r.in.Task.Elements.Exclude {
		excluded[e] = true
	}
	for _, x := range exclusions {
		excluded[x.Symbol] = true
	}
	coveredByExclusion := func(system string) bool {
		for _, e := range strings.Split(system, "-") {
			if excluded[e] || !r.allowedByTask(e) {
				return true
			}
		}
		return false
	}
	bySys := map[string][]string{}
	for f := range r.bankCaps {
		if s := systemOf(f); s != "" {
			bySys[s] = append(bySys[s], f)
		}
	}
	for _, c := range newCaps {
		if c.system != "" {
			bySys[c.system] = append(bySys[c.system], c.Formula)
		}
	}
	var out []systemEvidence
	for s, fs := range bySys {
		if len(fs) >= r.opt.AvoidAfterCaps && !r.okSys[s] && !r.bankAvoided[s] && !coveredByExclusion(s) {
			sort.Strings(fs)
			out = append(out, systemEvidence{System: s, Capped: fs})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].Capped) != len(out[j].Capped) {
			return len(out[i].Capped) > len(out[j].Capped)
		}
		return out[i].System < out[j].System
	})
	return out
}

// energyRange writes " (E_hull 0.41 to 1.2 eV/atom)", or "" when unknown.
func energyRange(c *comp) string {
	switch {
	case c.EMin == nil:
		return ""
	case c.EMax == nil || *c.EMax == *c.EMin:
		return fmt.Sprintf(" (E_hull %.3g eV/atom)", *c.EMin)
	}
	return fmt.Sprintf(" (E_hull %.3g to %.3g eV/atom)", *c.EMin, *c.EMax)
}

// outcome writes "2 hits and 1 stable of 4 queries".
func outcome(c *comp) string {
	return fmt.Sprintf("%s and %d stable of %s", plural(c.Hits, "hit"), c.Stable, plural(c.Queries, "query"))
}

// list writes at most n names, then "…".
func list(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + ", …"
}
