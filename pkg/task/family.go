package task

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrBadFamilyRule is returned for a structure, formula or anion rule that
// cannot be read or that no composition can meet.
var ErrBadFamilyRule = errors.New("bad structure rule")

// Rule codes of a Violation, the stable codes proposals and evaluations
// record their failures under.
const (
	RuleElements  = "element_rule"
	RuleFormula   = "formula_rule"
	RuleAnions    = "anion_rule"
	RuleStructure = "structure_family"
)

// Violation is one rule of the task a candidate breaks.
type Violation struct {
	Rule   string // one of the Rule codes
	Detail string
}

// Stoichiometry is a formula pattern in the prototypes' notation: each
// letter one element, A–W cations and X–Z anions, with its count.
type Stoichiometry struct {
	Cations []int // counts, in the pattern's order
	Anions  []int
	text    string
}

// String is the pattern as written ("ABX3").
func (s Stoichiometry) String() string { return s.text }

// ParseStoichiometry reads a pattern such as "ABX3", "AB2X4", "A2X3" or
// "ABX2Y": each letter once, each followed by an optional positive count.
func ParseStoichiometry(p string) (Stoichiometry, error) {
	st := Stoichiometry{text: p}
	seen := map[rune]bool{}
	rs := []rune(p)
	if len(rs) == 0 {
		return st, fmt.Errorf("%w: empty formula pattern", ErrBadFamilyRule)
	}
	for i := 0; i < len(rs); {
		r := rs[i]
		if r < 'A' || r > 'Z' {
			return st, fmt.Errorf("%w: formula pattern %q: %q is not a site letter A–Z", ErrBadFamilyRule, p, r)
		}
		if seen[r] {
			return st, fmt.Errorf("%w: formula pattern %q: %c appears twice", ErrBadFamilyRule, p, r)
		}
		seen[r] = true
		j := i + 1
		for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
			j++
		}
		n := 1
		if j > i+1 {
			v, err := strconv.Atoi(string(rs[i+1 : j]))
			if err != nil || v < 1 || v > 1000 {
				return st, fmt.Errorf("%w: formula pattern %q: count %q of %c is not in [1, 1000]", ErrBadFamilyRule, p, string(rs[i+1:j]), r)
			}
			n = v
		}
		if r >= 'X' {
			st.Anions = append(st.Anions, n)
		} else {
			st.Cations = append(st.Cations, n)
		}
		i = j
	}
	return st, nil
}

// stoichiometryOf writes a composition in the pattern notation given its
// anions: cations A, B, … then anions X, Y, Z, each group by increasing
// count ("ABX3" for SrTiO3, "ABX2Y" for SrTiO2F); ok is false for a
// composition without a small integer formula.
func stoichiometryOf(c crystal.Composition, anions []crystal.Element) (cations, anionCounts []int, text string, ok bool) {
	for _, it := range c.ReducedComposition().Items() {
		n := math.Round(it.Amount)
		if math.Abs(n-it.Amount) > 1e-6 || n < 1 {
			return nil, nil, "", false
		}
		if slices.Contains(anions, it.Element) {
			anionCounts = append(anionCounts, int(n))
		} else {
			cations = append(cations, int(n))
		}
	}
	slices.Sort(cations)
	slices.Sort(anionCounts)
	var b strings.Builder
	write := func(letter byte, k int) {
		b.WriteByte(letter)
		if k != 1 {
			b.WriteString(strconv.Itoa(k))
		}
	}
	for i, k := range cations {
		write(byte('A'+i), k)
	}
	for i, k := range anionCounts {
		write(byte('X'+min(i, 2)), k)
	}
	return cations, anionCounts, b.String(), true
}

// sameCounts reports whether two lists of counts are the same multiset.
func sameCounts(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// validateFamily checks the structure, formula and anion rules.
func (t Task) validateFamily() []error {
	var errs []error
	if t.Structure != "" && !slices.Contains(crystal.Families(), t.Structure) {
		errs = append(errs, fieldErr("structure", fmt.Errorf("%w: unknown structure family %q (known: %s)", ErrBadFamilyRule, t.Structure, strings.Join(crystal.Families(), ", "))))
	}
	if t.Formula != "" {
		st, err := ParseStoichiometry(t.Formula)
		switch {
		case err != nil:
			errs = append(errs, fieldErr("formula", err))
		case t.Structure == crystal.FamilyPerovskite && !(sameCounts(st.Cations, []int{1, 1}) && sameCounts(st.Anions, []int{3})):
			errs = append(errs, fieldErr("formula", fmt.Errorf("%w: a perovskite is ABX3, not %s", ErrBadFamilyRule, t.Formula)))
		case len(t.Anions) > 0 && len(st.Anions) > len(t.Anions):
			errs = append(errs, fieldErr("formula", fmt.Errorf("%w: %s needs %d different anions, the task allows %d", ErrBadFamilyRule, t.Formula, len(st.Anions), len(t.Anions))))
		}
	}
	if t.Anions != nil && len(t.Anions) == 0 {
		errs = append(errs, fieldErr("anions", fmt.Errorf("%w: empty anion set", ErrBadFamilyRule)))
	}
	allowed := 0
	for i, s := range t.Anions {
		e, err := crystal.ElementBySymbol(s)
		if err != nil {
			errs = append(errs, fieldErr(fmt.Sprintf("anions[%d]", i), err))
			continue
		}
		if !slices.ContainsFunc(e.ICSDOxidationStates(), func(q int) bool { return q < 0 }) {
			errs = append(errs, fieldErr(fmt.Sprintf("anions[%d]", i), fmt.Errorf("%w: %s takes no negative oxidation state", ErrBadFamilyRule, s)))
			continue
		}
		if t.Elements.Allows(e) {
			allowed++
		}
	}
	if len(t.Anions) > 0 && allowed == 0 && len(errs) == 0 {
		errs = append(errs, fieldErr("anions", fmt.Errorf("%w: every anion is forbidden by the element rules", ErrBadFamilyRule)))
	}
	return errs
}

// CompositionViolations returns the rules of the task a composition
// breaks: the element rules (ElementRules.Check), the formula pattern and
// the anion set. Anions are crystal.Anions: the elements with a negative
// oxidation state in the best charge-balanced assignment.
func (t Task) CompositionViolations(c crystal.Composition) []Violation {
	var out []Violation
	for _, r := range t.Elements.Check(c) {
		out = append(out, Violation{RuleElements, r})
	}
	if t.Formula == "" && len(t.Anions) == 0 {
		return out
	}
	anions := crystal.Anions(c)
	if t.Formula != "" {
		if st, err := ParseStoichiometry(t.Formula); err == nil {
			cat, an, text, ok := stoichiometryOf(c, anions)
			switch {
			case !ok:
				out = append(out, Violation{RuleFormula, fmt.Sprintf("%s has no small integer formula, not %s", c.ReducedFormula(), t.Formula)})
			case !sameCounts(cat, st.Cations) || !sameCounts(an, st.Anions):
				out = append(out, Violation{RuleFormula, fmt.Sprintf("%s is %s, not %s", c.ReducedFormula(), text, t.Formula)})
			}
		}
	}
	if len(t.Anions) > 0 {
		var other []string
		for _, e := range anions {
			if !slices.Contains(t.Anions, e.Symbol()) {
				other = append(other, e.Symbol())
			}
		}
		switch {
		case len(anions) == 0:
			out = append(out, Violation{RuleAnions, fmt.Sprintf("%s has no anion; the task requires %s", c.ReducedFormula(), strings.Join(t.Anions, " or "))})
		case len(other) > 0:
			out = append(out, Violation{RuleAnions, fmt.Sprintf("%s has the anion %s; the task allows only %s", c.ReducedFormula(), strings.Join(other, ", "), strings.Join(t.Anions, ", "))})
		}
	}
	return out
}

// Violations returns the rules of the task a structure breaks: those of
// its composition (CompositionViolations), then the structure family
// (crystal.InFamily).
func (t Task) Violations(s *crystal.Structure) []Violation {
	out := t.CompositionViolations(s.Composition())
	if t.Structure != "" {
		if err := crystal.InFamily(s, t.Structure); err != nil {
			out = append(out, Violation{RuleStructure, err.Error()})
		}
	}
	return out
}

// DescribeStructure writes the structure, formula and anion rules in
// words, for listings and prompts; nil when there are none.
func (t Task) DescribeStructure() []string {
	var out []string
	if t.Structure == crystal.FamilyPerovskite {
		out = append(out, "structure: perovskite — a three-dimensional network of corner-sharing BX6 octahedra with A in the cavities (cubic, tilted or distorted; not hexagonal, face- or edge-sharing)")
	} else if t.Structure != "" {
		out = append(out, "structure family: "+t.Structure)
	}
	if t.Formula != "" {
		out = append(out, "stoichiometry "+t.Formula+" (A–W cations, X–Z anions)")
	}
	if len(t.Anions) > 0 {
		out = append(out, "anions: only "+strings.Join(t.Anions, ", "))
	}
	return out
}
