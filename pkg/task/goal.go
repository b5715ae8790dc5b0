package task

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ParsedGoal is what ParseGoal understood of a natural-language goal.
type ParsedGoal struct {
	Constraints []Constraint
	Elements    ElementRules
	// Notes are the clauses kept as text: preferences ("prefer stable ABO₃
	// oxides", "if ranking, use FoM d²/κ") and clauses not understood.
	Notes []string
	// Issues report the clauses not understood (each also in Notes).
	Issues []string
}

// ClauseError is an error in one clause of a goal.
type ClauseError struct {
	Clause string
	Err    error
}

func (e *ClauseError) Error() string { return fmt.Sprintf("clause %q: %v", e.Clause, e.Err) }

func (e *ClauseError) Unwrap() error { return e.Err }

// ParseGoal reads a goal written as in LLEMA's task CSV (LLEMA §2.5,
// Table 2): clauses separated by ';', ',' or "and", each one of
//
//	Band gap ≥ 2.5 eV            property, comparison, number, unit
//	2.0 eV ≤ Band gap            number, comparison, property
//	10 ≤ piezo_max_dielectric ≤ 8000
//	Bulk modulus 100–300 GPa     a range ('–', '—', '-', "to")
//	Band gap between 0.7 and 2 eV
//	Must contain Li/Na/K/Mg/Ca/Al        (at least one of; "Li and O": all)
//	exclude Pb, Cd, Hg, Tl                (also "excluding", "without", "no")
//	only Li, Fe, P, O                     (also "allowed elements …", "Li/Fe/P/O only")
//	Earth-abundant and non-toxic elements only
//	prefer …, if ranking …, maximize …, discard …   (kept as notes)
//
// Comparisons may be written ≥ >= > ≤ <= < or in words ("at least", "at
// most", "above", "below", "more than", "less than", "up to"); strict and
// non-strict are the same constraint. Numbers may use the Unicode minus.
// Units must measure the property (GPa for moduli, eV/atom for formation
// energy and energy above hull, g/cm³ or g/cm3 for density, pC/N, S/cm …)
// and are converted to its unit (meV/atom, MPa, kg/m³ …); a number without
// a unit is in the property's unit. Property names are canonical names or
// aliases (see Properties).
//
// A clause it cannot read is kept as a note and reported in Issues, never
// dropped. Errors — an unknown property or element, a unit that does not
// fit, an inverted range, a number written with a comma — are
// *ClauseError values joined into the returned error, alongside what was
// understood; a goal without errors that states no constraint at all is an
// error wrapping ErrNoConstraint.
func ParseGoal(goal string) (ParsedGoal, error) {
	p := goalParser{src: goal}
	if m := commaNumberRe.FindString(goal); m != "" {
		p.errs = append(p.errs, &ClauseError{Clause: m, Err: fmt.Errorf("%w: a number written with a comma is ambiguous (thousands or decimal?): write it without", ErrBadConstraint)})
	}
	for _, c := range splitClauses(goal) {
		p.clause(c)
	}
	p.closeRule()
	p.finishNotes()
	if len(p.out.Constraints) == 0 && len(p.errs) == 0 {
		p.errs = append(p.errs, fmt.Errorf("%w: the goal %q states no property constraint", ErrNoConstraint, goal))
	}
	return p.out, errors.Join(p.errs...)
}

const numPattern = `[-+−]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`

const opSymbols = `≥|>=|=>|⩾|≧|>|≤|<=|=<|⩽|≦|<`

// opWords are comparisons in words, longest first (alternation is
// leftmost-first).
const opWords = `greater than or equal to|less than or equal to|no less than|not less than|no more than|not more than|greater than|higher than|more than|at least|exceeding|above|over|less than|lower than|at most|below|under|up to`

var (
	// 10 ≤ piezo_max_dielectric ≤ 8000; 65 GPa ≤ shear_modulus ≤ 195 GPa
	doubleRe = regexp.MustCompile(`^(` + numPattern + `)\s*([^\s≤≥<>=⩾⩽≧≦]*)\s*(` + opSymbols + `)\s*(.+?)\s*(` + opSymbols + `)\s*(` + numPattern + `)\s*(.*?)$`)
	// 2.0 eV ≤ Band gap
	leftRe = regexp.MustCompile(`^(` + numPattern + `)\s*([^\s≤≥<>=⩾⩽≧≦]*)\s*(` + opSymbols + `)\s*(.+?)$`)
	// Band gap ≥ 2.5 eV; Band gap at least 2.5 eV
	rightRe = regexp.MustCompile(`(?i)^(.+?)\s*(` + opSymbols + `|\b(?:` + opWords + `)\b)\s*(` + numPattern + `)\s*(.*?)$`)
	// Bulk modulus 100–300 GPa; Band gap between 0.7 and 2.0 eV
	rangeRe = regexp.MustCompile(`(?i)^(.+?)\s*(?::|\bbetween\b|\bfrom\b)?\s*(` + numPattern + `)\s*((?:[^\d\s–—\-+−.][^\s–—]*)?)\s*(–|—|-|\bto\b|\band\b)\s*(` + numPattern + `)\s*(.*?)$`)
	// 8,000 or 2,5: a comma inside a number.
	commaNumberRe = regexp.MustCompile(`\d,\d`)
	andRe         = regexp.MustCompile(`(?i)\s+and\s+`)
	// Property names may end with a connective: "Band gap of", "Density:".
	propTailRe = regexp.MustCompile(`(?i)\s*(?::|\bshould be\b|\bmust be\b|\bis\b|\bof\b|\bwithin\b|\bin the range(?: of)?\b|\bin range\b|\brange\b|\bin\b|\bbetween\b|\bfrom\b)\s*$`)
	flagsRe    = regexp.MustCompile(`(?i)^(?:(?:use|must be|all|only)\s+)?(earth[- ]?abundant|non[- ]?toxic)(?:\s*(?:and|,|&)\s*(earth[- ]?abundant|non[- ]?toxic))?(?:\s+elements?)?(?:\s+only)?$`)
)

// preferencePrefixes start clauses that are preferences, kept as notes for
// the prompt without an issue.
var preferencePrefixes = []string{
	"prefer", "preferably", "ideally", "if ranking", "rank", "ranking", "use fom", "fom",
	"maximize", "maximise", "minimize", "minimise", "optimize", "optimise",
	"favor", "favour", "discard", "avoid", "target",
	"must be thermodynamically stable", "must be stable", "thermodynamically stable",
}

// Element-rule keywords, longest first within each kind.
var (
	mustContainPrefixes = []string{"must contain", "must include", "must have", "contains", "containing", "contain", "includes", "including", "include"}
	excludePrefixes     = []string{"must not contain", "must exclude", "excluding", "excludes", "exclude", "without", "free of", "no"}
	allowedPrefixes     = []string{"only elements from", "elements only from", "elements limited to", "composed only of", "allowed elements", "only elements", "limited to", "restricted to", "only from", "allowed", "only"}
)

// clause is a piece of the goal, with its byte range so that neighbouring
// notes can be merged back into the original text.
type clause struct {
	start, end int
	segment    int
}

// splitClauses splits the goal at ';', then ',', then " and " — the last
// only after a complete comparison ("Band gap ≥ 2 eV and …"), so "between
// 1 and 2 eV", "Earth-abundant and non-toxic" and "must contain Li and O"
// stay whole.
func splitClauses(goal string) []clause {
	var out []clause
	segment := 0
	for segStart := 0; segStart <= len(goal); segment++ {
		segEnd := indexFrom(goal, ';', segStart)
		for pieceStart := segStart; pieceStart <= segEnd; {
			pieceEnd := indexFrom(goal[:segEnd], ',', pieceStart)
			out = append(out, splitAnd(goal, pieceStart, pieceEnd, segment)...)
			pieceStart = pieceEnd + 1
		}
		segStart = segEnd + 1
	}
	return out
}

// indexFrom returns the index of b in s at or after from, or len(s).
func indexFrom(s string, b byte, from int) int {
	if i := strings.IndexByte(s[from:], b); i >= 0 {
		return from + i
	}
	return len(s)
}

func splitAnd(goal string, start, end, segment int) []clause {
	var out []clause
	piece := goal[start:end]
	matches := andRe.FindAllStringIndex(piece, -1)
	cur := 0
	for _, m := range matches {
		left := strings.TrimSpace(piece[cur:m[0]])
		if isComparison(left) {
			out = append(out, clause{start + cur, start + m[0], segment})
			cur = m[1]
		}
	}
	return append(out, clause{start + cur, end, segment})
}

// isComparison reports whether s has the shape of a property constraint.
func isComparison(s string) bool {
	return doubleRe.MatchString(s) || leftRe.MatchString(s) || rightRe.MatchString(s) || rangeRe.MatchString(s)
}

type noteSpan struct {
	start, end int
	segment    int
	preference bool
}

// pendingRule is an element rule whose list may continue in the next
// comma-separated clauses ("exclude Pb, Cd, Hg").
type pendingRule struct {
	kind    string // "contain", "exclude", "allowed"
	segment int
	text    []string // clause texts, for errors
	syms    []string
	list    listForm
}

type goalParser struct {
	src   string
	out   ParsedGoal
	errs  []error
	rule  *pendingRule
	notes []noteSpan
	// lastNote is true when the previous clause became a note.
	lastNote bool
}

func (p *goalParser) fail(text string, err error) {
	p.errs = append(p.errs, &ClauseError{Clause: text, Err: err})
}

func (p *goalParser) clause(c clause) {
	text := strings.TrimSpace(p.src[c.start:c.end])
	text = strings.TrimSpace(strings.TrimSuffix(text, "."))
	if text == "" {
		return
	}
	// A bare element list continues the rule of the previous clause.
	if p.rule != nil && p.rule.segment == c.segment {
		syms, form, ok, err := elementList(text)
		if err != nil {
			p.fail(text, err)
			p.lastNote = false
			return
		}
		if ok {
			p.rule.text = append(p.rule.text, text)
			p.rule.syms = append(p.rule.syms, syms...)
			p.rule.list = p.rule.list.merge(form)
			return
		}
	}
	p.closeRule()
	wasNote := p.lastNote
	p.lastNote = false
	lower := strings.ToLower(text)
	switch {
	case hasPrefixWord(lower, preferencePrefixes) != "":
		p.note(c, true, wasNote)
	case p.flags(text):
	case p.elementRule(text, lower, c.segment):
	default:
		ok, err := p.comparison(text)
		switch {
		case err != nil:
			p.fail(text, err)
		case !ok:
			p.note(c, false, wasNote)
		}
	}
}

// note keeps a clause as text; it extends the previous note when that was
// the clause just before in the same segment ("if ranking, use FoM d²/κ").
func (p *goalParser) note(c clause, preference, afterNote bool) {
	p.lastNote = true
	if n := len(p.notes); n > 0 && afterNote && p.notes[n-1].segment == c.segment {
		p.notes[n-1].end = c.end
		return
	}
	p.notes = append(p.notes, noteSpan{start: c.start, end: c.end, segment: c.segment, preference: preference})
}

func (p *goalParser) finishNotes() {
	for _, n := range p.notes {
		text := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p.src[n.start:n.end]), "."))
		p.out.Notes = append(p.out.Notes, text)
		if !n.preference {
			p.out.Issues = append(p.out.Issues, fmt.Sprintf("not understood, kept as a note: %q", text))
		}
	}
}

// flags reads "Earth-abundant and non-toxic elements only".
func (p *goalParser) flags(text string) bool {
	m := flagsRe.FindStringSubmatch(text)
	if m == nil {
		return false
	}
	for _, f := range m[1:] {
		switch f := strings.ToLower(f); {
		case strings.HasPrefix(f, "earth"):
			p.out.Elements.EarthAbundant = true
		case strings.HasPrefix(f, "non"):
			p.out.Elements.NonToxic = true
		}
	}
	return true
}

// elementRule reads a must-contain, exclude or allowed-only clause; false
// when the clause is not one (the list after the keyword is not elements).
func (p *goalParser) elementRule(text, lower string, segment int) bool {
	kind, rest := "", ""
	for _, k := range []struct {
		kind     string
		prefixes []string
	}{{"exclude", excludePrefixes}, {"contain", mustContainPrefixes}, {"allowed", allowedPrefixes}} {
		if pre := hasPrefixWord(lower, k.prefixes); pre != "" {
			kind, rest = k.kind, text[len(pre):]
			break
		}
	}
	if kind == "" && strings.HasSuffix(lower, " only") {
		kind, rest = "allowed", text[:len(text)-len(" only")]
	}
	if kind == "" {
		return false
	}
	syms, form, ok, err := elementList(rest)
	if err != nil {
		p.fail(text, err)
		return true
	}
	if !ok {
		return false
	}
	p.rule = &pendingRule{kind: kind, segment: segment, text: []string{text}, syms: syms, list: form}
	return true
}

// closeRule stores the pending element rule.
func (p *goalParser) closeRule() {
	r := p.rule
	if r == nil {
		return
	}
	p.rule = nil
	el := &p.out.Elements
	syms := unique(r.syms)
	switch r.kind {
	case "exclude":
		el.Exclude = unique(append(el.Exclude, syms...))
	case "allowed":
		if el.AllowedOnly != nil {
			p.fail(strings.Join(r.text, ", "), fmt.Errorf("%w: the allowed elements are given twice", ErrBadElementRule))
			return
		}
		el.AllowedOnly = syms
	case "contain":
		if r.list.all() || len(syms) == 1 {
			el.MustContainAll = unique(append(el.MustContainAll, syms...))
			return
		}
		if el.MustContainOneOf != nil {
			p.fail(strings.Join(r.text, ", "), fmt.Errorf("%w: only one \"must contain one of\" rule per task", ErrBadElementRule))
			return
		}
		el.MustContainOneOf = syms
	}
}

// comparison reads a property constraint; ok is false when the clause has
// no comparison shape, err set when it has one but is wrong.
func (p *goalParser) comparison(text string) (ok bool, err error) {
	var c Constraint
	switch {
	case doubleRe.MatchString(text):
		m := doubleRe.FindStringSubmatch(text)
		c, err = doubleSided(m[1], m[2], m[3], m[4], m[5], m[6], m[7])
	case leftRe.MatchString(text):
		m := leftRe.FindStringSubmatch(text)
		c, err = leftSided(m[1], m[2], m[3], m[4])
	case rightRe.MatchString(text):
		m := rightRe.FindStringSubmatch(text)
		c, err = rightSided(m[1], m[2], m[3], m[4])
	case rangeRe.MatchString(text):
		m := rangeRe.FindStringSubmatch(text)
		c, err = ranged(m[1], m[2], m[3], m[5], m[6])
	default:
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if errs := c.validate("constraint"); len(errs) > 0 {
		// The clause names the constraint; keep only what is wrong with it.
		for i, e := range errs {
			var fe *FieldError
			if errors.As(e, &fe) {
				errs[i] = fe.Err
			}
		}
		return true, errors.Join(errs...)
	}
	p.out.Constraints = append(p.out.Constraints, c)
	return true, nil
}

// direction is +1 for ≥-like comparisons, −1 for ≤-like ones.
func direction(op string) int {
	switch strings.Join(strings.Fields(strings.ToLower(op)), " ") {
	case "≥", ">=", "=>", "⩾", "≧", ">", "greater than or equal to", "no less than", "not less than",
		"greater than", "higher than", "more than", "at least", "exceeding", "above", "over":
		return 1
	}
	return -1
}

func resolveProperty(text string) (Property, error) {
	name := strings.TrimSpace(text)
	for {
		trimmed := strings.TrimSpace(propTailRe.ReplaceAllString(name, ""))
		if trimmed == name {
			break
		}
		name = trimmed
	}
	if name == "" {
		return Property{}, fmt.Errorf("%w: no property named", ErrUnknownProperty)
	}
	return PropertyByName(name)
}

func number(p Property, num, unit string) (float64, error) {
	v, err := strconv.ParseFloat(strings.Replace(num, "−", "-", 1), 64)
	if err != nil {
		return 0, fmt.Errorf("%w: bad number %q", ErrBadConstraint, num)
	}
	return toCanonical(p, v, unit)
}

func rightSided(prop, op, num, unit string) (Constraint, error) {
	pr, err := resolveProperty(prop)
	if err != nil {
		return Constraint{}, err
	}
	v, err := number(pr, num, unit)
	if err != nil {
		return Constraint{}, err
	}
	if direction(op) > 0 {
		return AtLeast(pr.Name, v), nil
	}
	return AtMost(pr.Name, v), nil
}

func leftSided(num, unit, op, prop string) (Constraint, error) {
	pr, err := resolveProperty(prop)
	if err != nil {
		return Constraint{}, err
	}
	v, err := number(pr, num, unit)
	if err != nil {
		return Constraint{}, err
	}
	// "2 ≤ band gap" is a lower bound, "5 ≥ density" an upper one.
	if direction(op) < 0 {
		return AtLeast(pr.Name, v), nil
	}
	return AtMost(pr.Name, v), nil
}

func doubleSided(num1, unit1, op1, prop, op2, num2, unit2 string) (Constraint, error) {
	pr, err := resolveProperty(prop)
	if err != nil {
		return Constraint{}, err
	}
	if direction(op1) != direction(op2) {
		return Constraint{}, fmt.Errorf("%w: %s and %s point in opposite directions", ErrBadConstraint, op1, op2)
	}
	if unit1 == "" {
		unit1 = unit2
	}
	a, err := number(pr, num1, unit1)
	if err != nil {
		return Constraint{}, err
	}
	b, err := number(pr, num2, unit2)
	if err != nil {
		return Constraint{}, err
	}
	if direction(op1) > 0 { // 195 ≥ G ≥ 65
		a, b = b, a
	}
	return Between(pr.Name, a, b), nil
}

func ranged(prop, num1, unit1, num2, unit2 string) (Constraint, error) {
	pr, err := resolveProperty(prop)
	if err != nil {
		return Constraint{}, err
	}
	if unit1 == "" {
		unit1 = unit2
	}
	a, err := number(pr, num1, unit1)
	if err != nil {
		return Constraint{}, err
	}
	b, err := number(pr, num2, unit2)
	if err != nil {
		return Constraint{}, err
	}
	return Between(pr.Name, a, b), nil
}

// hasPrefixWord returns the first prefix that s starts with as whole
// words, or "".
func hasPrefixWord(s string, prefixes []string) string {
	for _, pre := range prefixes {
		if !strings.HasPrefix(s, pre) {
			continue
		}
		if next, _ := utf8.DecodeRuneInString(s[len(pre):]); len(s) == len(pre) || !isWordRune(next) {
			return pre
		}
	}
	return ""
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }

// listForm records how an element list was joined, to tell "one of" from
// "all of".
type listForm struct {
	and, or, oneOf, allOf bool
}

func (f listForm) merge(g listForm) listForm {
	return listForm{f.and || g.and, f.or || g.or, f.oneOf || g.oneOf, f.allOf || g.allOf}
}

// all reports whether a must-contain list means every element: said so
// ("all of", "both") or joined only by "and". Lists joined by '/', "or",
// or commas alone mean at least one (LLEMA: "Li, Na, K, Mg, Ca, or Al").
func (f listForm) all() bool {
	if f.oneOf {
		return false
	}
	return f.allOf || (f.and && !f.or)
}

// word records what a list word says about the list; false when w is not
// a list word.
func (f *listForm) word(w string) bool {
	switch strings.ToLower(w) {
	case "or":
		f.or = true
	case "and", "&":
		f.and = true
	case "one", "any", "either", "least":
		f.oneOf = true
	case "all", "both", "each", "every":
		f.allOf = true
	case "of", "at", "the", "following", "elements", "element", "from", "in":
	default:
		return false
	}
	return true
}

// elementList reads "Li/Na/K", "Pb, Cd and Hg", "one of Li, Na or K". ok is
// false when a word is neither shaped like an element symbol nor a list
// word (the text is not an element list); err is set, wrapping
// crystal.ErrUnknownElement, when the text is list-shaped but a symbol
// names no element ("Pb, Xx").
func elementList(s string) (syms []string, form listForm, ok bool, err error) {
	if strings.Contains(s, "/") {
		form.or = true
	}
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == '/' || r == ':' || r == '(' || r == ')' || r == '{' || r == '}' || r == '[' || r == ']'
	})
	var unknown []string
	for _, w := range fields {
		w = strings.TrimSuffix(w, ".")
		if _, err := crystal.ElementBySymbol(w); err == nil {
			syms = append(syms, w)
			continue
		}
		if form.word(w) {
			continue
		}
		if !symbolShaped(w) {
			return nil, form, false, nil
		}
		unknown = append(unknown, w)
	}
	if len(unknown) > 0 {
		return nil, form, false, fmt.Errorf("%w: %s", crystal.ErrUnknownElement, strings.Join(unknown, ", "))
	}
	return syms, form, len(syms) > 0, nil
}

// symbolShaped reports whether w looks like an element symbol: a capital
// letter and at most one lower-case letter.
func symbolShaped(w string) bool {
	if len(w) == 0 || len(w) > 2 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	return len(w) == 1 || (w[1] >= 'a' && w[1] <= 'z')
}
