package task

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Sentinel errors, so callers can tell bad input from other failures.
var (
	ErrUnknownProperty = errors.New("unknown property")
	ErrUnknownTask     = errors.New("unknown task")
	ErrNoConstraint    = errors.New("no constraint")
	ErrBadConstraint   = errors.New("bad constraint")
	ErrBadElementRule  = errors.New("bad element rule")
	ErrBadTask         = errors.New("bad task")
)

// FieldError is a validation error of one field, named by its path in the
// task's JSON form ("constraints[1].upper", "elements.exclude[2]").
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field string, err error) error { return &FieldError{Field: field, Err: err} }

// Kind is the type of a property constraint (LLEMA Eq. 2).
type Kind string

// The constraint kinds.
const (
	Lower    Kind = "lower"    // f ≥ l
	Upper    Kind = "upper"    // f ≤ u
	Interval Kind = "interval" // l ≤ f ≤ u
)

// Constraint bounds one property. Strict and non-strict inequalities are
// the same constraint: LLEMA's feasibility (Φ ≥ 0, App. B.2) accepts the
// bound itself.
type Constraint struct {
	// Property is a canonical property name (see Properties).
	Property string `json:"property"`
	// Kind is lower, upper or interval.
	Kind Kind `json:"kind"`
	// Lower is l, given for lower and interval constraints only.
	Lower *float64 `json:"lower,omitempty"`
	// Upper is u, given for upper and interval constraints only.
	Upper *float64 `json:"upper,omitempty"`
	// Weight is w_i in the score; absent means 1, so that a task's
	// constraints weigh equally (LLEMA App. B.2). Must be positive.
	Weight *float64 `json:"weight,omitempty"`
}

// AtLeast is the constraint property ≥ l.
func AtLeast(property string, l float64) Constraint {
	return Constraint{Property: property, Kind: Lower, Lower: &l}
}

// AtMost is the constraint property ≤ u.
func AtMost(property string, u float64) Constraint {
	return Constraint{Property: property, Kind: Upper, Upper: &u}
}

// Between is the constraint l ≤ property ≤ u.
func Between(property string, l, u float64) Constraint {
	return Constraint{Property: property, Kind: Interval, Lower: &l, Upper: &u}
}

// WithWeight returns c with weight w.
func (c Constraint) WithWeight(w float64) Constraint {
	c.Weight = &w
	return c
}

// EffectiveWeight is the weight, 1 when none is given.
func (c Constraint) EffectiveWeight() float64 {
	if c.Weight == nil {
		return 1
	}
	return *c.Weight
}

// Bounds returns l and u, −Inf and +Inf for a bound the kind does not use.
func (c Constraint) Bounds() (l, u float64) {
	l, u = math.Inf(-1), math.Inf(1)
	if c.Lower != nil && c.Kind != Upper {
		l = *c.Lower
	}
	if c.Upper != nil && c.Kind != Lower {
		u = *c.Upper
	}
	return l, u
}

// String writes the constraint with its canonical name: "band_gap ≥ 2.5
// eV", "bulk_modulus 100–300 GPa", with " (weight 2)" when weighted.
func (c Constraint) String() string { return c.describe(c.Property) }

// Describe writes the constraint with the property's label: "Band gap ≥
// 2.5 eV".
func (c Constraint) Describe() string {
	label := c.Property
	if p, ok := canonicalProperty(c.Property); ok {
		label = p.Label
	}
	return c.describe(label)
}

func (c Constraint) describe(name string) string {
	unit := ""
	if p, ok := canonicalProperty(c.Property); ok && p.Unit != "" {
		unit = " " + p.Unit
	}
	var s string
	l, u := c.Bounds()
	switch c.Kind {
	case Lower:
		s = name + " ≥ " + formatNumber(l) + unit
	case Upper:
		s = name + " ≤ " + formatNumber(u) + unit
	case Interval:
		s = name + " " + formatNumber(l) + "–" + formatNumber(u) + unit
	default:
		s = name + " (kind " + strconv.Quote(string(c.Kind)) + ")"
	}
	if c.Weight != nil {
		s += " (weight " + formatNumber(*c.Weight) + ")"
	}
	return s
}

// formatNumber writes x in the shortest form that reads back exactly.
func formatNumber(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// validate checks the constraint on its own; field is its path.
func (c Constraint) validate(field string) []error {
	var errs []error
	if c.Property == "" {
		errs = append(errs, fieldErr(field+".property", fmt.Errorf("%w: missing", ErrUnknownProperty)))
	} else if _, ok := canonicalProperty(c.Property); !ok {
		if p, err := PropertyByName(c.Property); err == nil {
			errs = append(errs, fieldErr(field+".property", fmt.Errorf("%w %q: use the canonical name %q", ErrUnknownProperty, c.Property, p.Name)))
		} else {
			errs = append(errs, fieldErr(field+".property", err))
		}
	}
	finite := func(name string, v *float64) {
		if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
			errs = append(errs, fieldErr(field+"."+name, fmt.Errorf("%w: %v is not finite", ErrBadConstraint, *v)))
		}
	}
	need := func(name string, v *float64, want bool) {
		switch {
		case want && v == nil:
			errs = append(errs, fieldErr(field+"."+name, fmt.Errorf("%w: kind %s needs the %s bound", ErrBadConstraint, c.Kind, name)))
		case !want && v != nil:
			errs = append(errs, fieldErr(field+"."+name, fmt.Errorf("%w: kind %s takes no %s bound", ErrBadConstraint, c.Kind, name)))
		}
	}
	switch c.Kind {
	case Lower:
		need("lower", c.Lower, true)
		need("upper", c.Upper, false)
	case Upper:
		need("lower", c.Lower, false)
		need("upper", c.Upper, true)
	case Interval:
		need("lower", c.Lower, true)
		need("upper", c.Upper, true)
	case "":
		errs = append(errs, fieldErr(field+".kind", fmt.Errorf("%w: missing (lower, upper or interval)", ErrBadConstraint)))
	default:
		errs = append(errs, fieldErr(field+".kind", fmt.Errorf("%w: %q is not lower, upper or interval", ErrBadConstraint, c.Kind)))
	}
	finite("lower", c.Lower)
	finite("upper", c.Upper)
	if c.Kind == Interval && c.Lower != nil && c.Upper != nil && *c.Lower > *c.Upper {
		errs = append(errs, fieldErr(field+".lower", fmt.Errorf("%w: lower bound %s is above upper bound %s", ErrBadConstraint, formatNumber(*c.Lower), formatNumber(*c.Upper))))
	}
	if c.Weight != nil && !(*c.Weight > 0 && !math.IsInf(*c.Weight, 1)) {
		errs = append(errs, fieldErr(field+".weight", fmt.Errorf("%w: weight %v must be positive and finite", ErrBadConstraint, *c.Weight)))
	}
	return errs
}

// ElementRules restrict which elements a candidate may contain. The zero
// value allows everything.
type ElementRules struct {
	// MustContainOneOf: at least one of these elements ("Must contain
	// Li/Na/K/Mg/Ca/Al", LLEMA Table 2).
	MustContainOneOf []string `json:"must_contain_one_of,omitempty"`
	// MustContainAll: every one of these elements.
	MustContainAll []string `json:"must_contain_all,omitempty"`
	// Exclude: none of these elements.
	Exclude []string `json:"exclude,omitempty"`
	// AllowedOnly: no element outside this set.
	AllowedOnly []string `json:"allowed_only,omitempty"`
	// EarthAbundant: every element earth-abundant
	// (crystal.Element.EarthAbundant: crustal abundance at least
	// crystal.EarthAbundanceThreshold mg/kg).
	EarthAbundant bool `json:"earth_abundant,omitempty"`
	// NonToxic: no toxic or radioactive element (crystal.Element.Toxic).
	NonToxic bool `json:"non_toxic,omitempty"`
}

// IsZero reports whether the rules allow every composition.
func (r ElementRules) IsZero() bool {
	return r.MustContainOneOf == nil && r.MustContainAll == nil && r.Exclude == nil &&
		r.AllowedOnly == nil && !r.EarthAbundant && !r.NonToxic
}

// Describe writes each rule in words, for listings and prompts.
func (r ElementRules) Describe() []string {
	var out []string
	if len(r.MustContainOneOf) > 0 {
		out = append(out, "must contain at least one of "+strings.Join(r.MustContainOneOf, ", "))
	}
	if len(r.MustContainAll) > 0 {
		out = append(out, "must contain "+strings.Join(r.MustContainAll, ", "))
	}
	if len(r.Exclude) > 0 {
		out = append(out, "must not contain "+strings.Join(r.Exclude, ", "))
	}
	if len(r.AllowedOnly) > 0 {
		out = append(out, "only elements from "+strings.Join(r.AllowedOnly, ", "))
	}
	if r.EarthAbundant {
		out = append(out, fmt.Sprintf("earth-abundant elements only (crustal abundance ≥ %s mg/kg)", formatNumber(crystal.EarthAbundanceThreshold)))
	}
	if r.NonToxic {
		out = append(out, "non-toxic elements only")
	}
	return out
}

// validate checks symbols, empty sets and rules no composition can meet.
func (r ElementRules) validate(field string) []error {
	var errs []error
	lists := []struct {
		name string
		syms []string
	}{
		{"must_contain_one_of", r.MustContainOneOf},
		{"must_contain_all", r.MustContainAll},
		{"exclude", r.Exclude},
		{"allowed_only", r.AllowedOnly},
	}
	for _, l := range lists {
		if l.syms != nil && len(l.syms) == 0 {
			errs = append(errs, fieldErr(field+"."+l.name, fmt.Errorf("%w: empty element set", ErrBadElementRule)))
		}
		for i, s := range l.syms {
			if _, err := crystal.ElementBySymbol(s); err != nil {
				errs = append(errs, fieldErr(fmt.Sprintf("%s.%s[%d]", field, l.name, i), err))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	// Rules that no composition can satisfy.
	if len(r.MustContainOneOf) > 0 {
		possible := false
		for _, s := range r.MustContainOneOf {
			if r.Allows(crystal.MustElement(s)) {
				possible = true
				break
			}
		}
		if !possible {
			errs = append(errs, fieldErr(field+".must_contain_one_of", fmt.Errorf("%w: every element is forbidden by the other rules", ErrBadElementRule)))
		}
	}
	for i, s := range r.MustContainAll {
		if !r.Allows(crystal.MustElement(s)) {
			errs = append(errs, fieldErr(fmt.Sprintf("%s.must_contain_all[%d]", field, i), fmt.Errorf("%w: %s is required but forbidden by the other rules", ErrBadElementRule, s)))
		}
	}
	if len(r.AllowedOnly) > 0 {
		possible := false
		for _, s := range r.AllowedOnly {
			if r.Allows(crystal.MustElement(s)) {
				possible = true
				break
			}
		}
		if !possible {
			errs = append(errs, fieldErr(field+".allowed_only", fmt.Errorf("%w: every allowed element is forbidden by the other rules", ErrBadElementRule)))
		}
	}
	return errs
}

// Task is a discovery task: a goal in words, the property constraints a
// candidate must meet (LLEMA Eq. 2), rules on its elements, and notes for
// the proposer's prompt. It is the task part of a campaign spec.
type Task struct {
	// Name identifies the task ("Photovoltaic Absorbers").
	Name string `json:"name"`
	// Domain is the application domain (LLEMA Table 2), informational.
	Domain string `json:"domain,omitempty"`
	// Description is the application context, for the prompt.
	Description string `json:"description,omitempty"`
	// Goal is the natural-language statement of the task.
	Goal string `json:"goal,omitempty"`
	// Constraints are scored with LLEMA's margins (see Evaluate).
	Constraints []Constraint `json:"constraints"`
	// Elements restrict the composition; checked apart from the score.
	Elements ElementRules `json:"elements,omitzero"`
	// Properties are further properties to predict and report, not scored
	// (canonical names; LLEMA's CSV "Properties" column beyond the
	// constrained ones).
	Properties []string `json:"properties,omitempty"`
	// Notes are preferences and goal clauses kept as text for the prompt
	// ("prefer thermodynamically stable ABO₃ oxides").
	Notes []string `json:"notes,omitempty"`
	// Structure is a structure family every candidate must belong to
	// (crystal.Families: "perovskite"); see crystal.InFamily.
	Structure string `json:"structure,omitempty"`
	// Formula is a stoichiometry every candidate must have, in the
	// prototypes' notation: letters A–W for cations and X–Z for anions,
	// each with its count ("ABX3", "AB2X4", "A2X3"); see CheckFormula.
	Formula string `json:"formula,omitempty"`
	// Anions are the only anions a candidate may have, and it must have
	// one (crystal.Anions: the elements with a negative oxidation state).
	Anions []string `json:"anions,omitempty"`
}

// Validate checks every field and returns all problems, each a *FieldError
// naming the field ("constraints[1].upper: ..."), joined; nil when the task
// is valid.
func (t Task) Validate() error {
	var errs []error
	if strings.TrimSpace(t.Name) == "" {
		errs = append(errs, fieldErr("name", fmt.Errorf("%w: empty", ErrBadTask)))
	}
	if len(t.Constraints) == 0 {
		errs = append(errs, fieldErr("constraints", fmt.Errorf("%w: a task needs at least one property constraint", ErrNoConstraint)))
	}
	for i, c := range t.Constraints {
		errs = append(errs, c.validate(fmt.Sprintf("constraints[%d]", i))...)
	}
	errs = append(errs, t.Elements.validate("elements")...)
	for i, p := range t.Properties {
		if _, ok := canonicalProperty(p); !ok {
			errs = append(errs, fieldErr(fmt.Sprintf("properties[%d]", i), fmt.Errorf("%w %q", ErrUnknownProperty, p)))
		}
	}
	errs = append(errs, t.validateFamily()...)
	return errors.Join(errs...)
}

// Required lists the properties the task needs predicted: those of the
// constraints, then the reported Properties, each once.
func (t Task) Required() []string {
	names := make([]string, 0, len(t.Constraints)+len(t.Properties))
	for _, c := range t.Constraints {
		names = append(names, c.Property)
	}
	return unique(append(names, t.Properties...))
}

// Unsupported lists the required properties nothing in Crucible provides.
// A constraint on one is never met, so a task with an unsupported
// constrained property has no feasible candidate; it is still a valid task
// (LLEMA's piezoelectric tasks), reported as such.
func (t Task) Unsupported() []string { return t.withSupport(SupportUnsupported) }

// ReferenceOnly lists the required properties known only for compounds in
// the reference tables.
func (t Task) ReferenceOnly() []string { return t.withSupport(SupportReference) }

func (t Task) withSupport(s Support) []string {
	var out []string
	for _, name := range t.Required() {
		if p, ok := canonicalProperty(name); ok && p.Support == s {
			out = append(out, name)
		}
	}
	return out
}

// Support is the weakest support among the constrained properties:
// SupportUnsupported if any is unsupported, then SupportReference, then
// SupportSurrogate, SupportHull, SupportStructure. Unknown properties count
// as unsupported.
func (t Task) Support() Support {
	weakest := SupportStructure
	for _, c := range t.Constraints {
		s := SupportUnsupported
		if p, ok := canonicalProperty(c.Property); ok {
			s = p.Support
		}
		if s.rank() < weakest.rank() {
			weakest = s
		}
	}
	return weakest
}

// SupportText says in words whether Crucible can evaluate the task: which
// constrained properties nothing provides, and which only the reference
// tables do.
func (t Task) SupportText() string {
	var parts []string
	if u := t.Unsupported(); len(u) > 0 {
		parts = append(parts, fmt.Sprintf("unsupported: %s (no oracle in Crucible; no candidate can be feasible)", strings.Join(u, ", ")))
	}
	if r := t.ReferenceOnly(); len(r) > 0 {
		parts = append(parts, fmt.Sprintf("reference only: %s (known for compounds in the reference table, none for novel ones)", strings.Join(r, ", ")))
	}
	if len(parts) == 0 {
		return "support: every property from surrogates, the structure or the hull"
	}
	return "support: " + strings.Join(parts, "; ")
}

// Clone returns a deep copy of t.
func (t Task) Clone() Task {
	c := t
	c.Constraints = make([]Constraint, len(t.Constraints))
	for i, k := range t.Constraints {
		c.Constraints[i] = k.clone()
	}
	if t.Constraints == nil {
		c.Constraints = nil
	}
	c.Elements = ElementRules{
		MustContainOneOf: cloneStrings(t.Elements.MustContainOneOf),
		MustContainAll:   cloneStrings(t.Elements.MustContainAll),
		Exclude:          cloneStrings(t.Elements.Exclude),
		AllowedOnly:      cloneStrings(t.Elements.AllowedOnly),
		EarthAbundant:    t.Elements.EarthAbundant,
		NonToxic:         t.Elements.NonToxic,
	}
	c.Properties = cloneStrings(t.Properties)
	c.Notes = cloneStrings(t.Notes)
	c.Anions = cloneStrings(t.Anions)
	return c
}

func (c Constraint) clone() Constraint {
	cp := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	c.Lower, c.Upper, c.Weight = cp(c.Lower), cp(c.Upper), cp(c.Weight)
	return c
}

func cloneStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append(make([]string, 0, len(s)), s...)
}
