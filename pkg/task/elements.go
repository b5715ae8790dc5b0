package task

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Allows reports whether e may appear in a candidate at all: it is not
// excluded, it is in the allowed set when there is one, and it is
// earth-abundant and non-toxic when the rules ask. The must-contain rules
// concern a whole composition; see Check.
func (r ElementRules) Allows(e crystal.Element) bool {
	sym := e.Symbol()
	switch {
	case slices.Contains(r.Exclude, sym):
		return false
	case r.AllowedOnly != nil && !slices.Contains(r.AllowedOnly, sym):
		return false
	case r.EarthAbundant && !e.EarthAbundant():
		return false
	case r.NonToxic && e.Toxic():
		return false
	}
	return true
}

// Check returns why the composition breaks the rules, one reason per
// broken rule naming the offending elements; nil when it meets them all.
func (r ElementRules) Check(c crystal.Composition) []string {
	return r.CheckElements(c.Elements())
}

// CheckElements is Check on a set of elements.
func (r ElementRules) CheckElements(els []crystal.Element) []string {
	var reasons []string
	var excluded, outside, rare, toxic []string
	for _, e := range els {
		sym := e.Symbol()
		if slices.Contains(r.Exclude, sym) {
			excluded = append(excluded, sym)
		}
		if r.AllowedOnly != nil && !slices.Contains(r.AllowedOnly, sym) {
			outside = append(outside, sym)
		}
		if r.EarthAbundant && !e.EarthAbundant() {
			rare = append(rare, fmt.Sprintf("%s (%s mg/kg)", sym, formatNumber(e.CrustalAbundance())))
		}
		if r.NonToxic && e.Toxic() {
			toxic = append(toxic, sym)
		}
	}
	if len(excluded) > 0 {
		reasons = append(reasons, "contains excluded "+strings.Join(excluded, ", "))
	}
	if len(outside) > 0 {
		reasons = append(reasons, "contains "+strings.Join(outside, ", ")+", outside the allowed elements "+strings.Join(r.AllowedOnly, ", "))
	}
	if len(rare) > 0 {
		reasons = append(reasons, fmt.Sprintf("contains elements that are not earth-abundant (below %s mg/kg in the crust): %s",
			formatNumber(crystal.EarthAbundanceThreshold), strings.Join(rare, ", ")))
	}
	if len(toxic) > 0 {
		reasons = append(reasons, "contains toxic "+strings.Join(toxic, ", "))
	}
	if len(r.MustContainOneOf) > 0 && !containsAny(els, r.MustContainOneOf) {
		reasons = append(reasons, "contains none of "+strings.Join(r.MustContainOneOf, ", "))
	}
	var absent []string
	for _, s := range r.MustContainAll {
		if !containsAny(els, []string{s}) {
			absent = append(absent, s)
		}
	}
	if len(absent) > 0 {
		reasons = append(reasons, "does not contain required "+strings.Join(absent, ", "))
	}
	return reasons
}

// Check checks a composition against the task's element, formula and
// anion rules (CompositionViolations), one reason per broken rule; nil
// when it meets them all.
func (t Task) Check(c crystal.Composition) []string {
	var out []string
	for _, v := range t.CompositionViolations(c) {
		out = append(out, v.Detail)
	}
	return out
}

func containsAny(els []crystal.Element, syms []string) bool {
	for _, e := range els {
		if slices.Contains(syms, e.Symbol()) {
			return true
		}
	}
	return false
}
