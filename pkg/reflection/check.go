package reflection

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Dropped is a proposed directive or memory edit refused, with why.
type Dropped struct {
	What   string
	Reason string
}

// CheckDirectives checks directives proposed for an episode (by an LLM
// reflector) against its evidence, MADE's guardrails made mechanical:
//
//   - the directive is well formed, its formula, element or system named
//     in a form this build reads (formulas are reduced, systems sorted);
//   - exclude_element never names an element of a composition with a hit
//     or a stable candidate, nor one the task's element rules need;
//     avoid_system never names the system of a success; cap_composition
//     never caps a success;
//   - every directive has support: at least MinSupport queries of the
//     composition, element or system it restricts (caps at least
//     CapAfter), so a single observation never becomes a rule;
//   - a cap is never below the composition's queries so far;
//   - a directive already in the bank, or a repeat, is dropped.
//
// It returns the directives kept, normalised, and those dropped with the
// reason, in the order given.
func CheckDirectives(in Input, proposed []messages.Directive) (kept []messages.Directive, dropped []messages.DroppedDirective) {
	r := newReflection(in)
	bank := map[string]bool{}
	for _, d := range in.Directives {
		bank[d.Key()] = true
	}
	seen := map[string]bool{}
	for _, d := range proposed {
		n, err := r.checkDirective(d)
		if err == nil && (bank[n.Key()] || seen[n.Key()]) {
			err = fmt.Errorf("already in force")
		}
		if err != nil {
			dropped = append(dropped, messages.DroppedDirective{Directive: d, Reason: err.Error()})
			continue
		}
		seen[n.Key()] = true
		kept = append(kept, n)
	}
	return kept, dropped
}

func (r *reflection) checkDirective(d messages.Directive) (messages.Directive, error) {
	d.Reason = strings.TrimSpace(d.Reason)
	switch d.Kind {
	case messages.DirectiveExcludeElement:
		e, err := crystal.ElementBySymbol(strings.TrimSpace(d.Element))
		if err != nil {
			return d, fmt.Errorf("element %q: %v", d.Element, err)
		}
		sym := e.Symbol()
		n := messages.Directive{Kind: d.Kind, Element: sym, Reason: d.Reason}
		if r.okElem[sym] {
			return n, fmt.Errorf("%s is in a success of the campaign (%s)", sym, r.successWith(func(c *comp) bool { return slices.Contains(c.elements, sym) }))
		}
		if !r.allowedByTask(sym) {
			return n, fmt.Errorf("the task already excludes %s", sym)
		}
		if !r.mayExclude(sym, map[string]bool{}) {
			return n, fmt.Errorf("the task's element rules need %s", sym)
		}
		q := 0
		for _, c := range r.comps {
			if slices.Contains(c.elements, sym) {
				q += c.Queries
			}
		}
		if q < r.opt.MinSupport {
			return n, fmt.Errorf("support %d: %s has %s in the campaign, a rule needs at least %d", q, sym, plural(q, "query"), r.opt.MinSupport)
		}
		return n, nil
	case messages.DirectiveAvoidSystem:
		sys, err := normalSystem(d.System)
		if err != nil {
			return d, err
		}
		n := messages.Directive{Kind: d.Kind, System: sys, Reason: d.Reason}
		if r.okSys[sys] {
			return n, fmt.Errorf("%s holds a success of the campaign (%s)", sys, r.successWith(func(c *comp) bool { return c.system == sys }))
		}
		if q := r.systemQueries(sys); q < r.opt.MinSupport {
			return n, fmt.Errorf("support %d: %s has %s in the campaign, a rule needs at least %d", q, sys, plural(q, "query"), r.opt.MinSupport)
		}
		return n, nil
	case messages.DirectiveCapComposition:
		c, err := crystal.ParseFormula(strings.TrimSpace(d.Formula))
		if err != nil {
			return d, fmt.Errorf("formula %q: %v", d.Formula, err)
		}
		f := c.ReducedFormula()
		n := messages.Directive{Kind: d.Kind, Formula: f, Limit: d.Limit, Reason: d.Reason}
		st := r.byF[f]
		q := 0
		if st != nil {
			q = st.Queries
		}
		switch {
		case st != nil && st.success():
			return n, fmt.Errorf("%s is a success of the campaign (%s)", f, outcome(st))
		case q < max(r.opt.CapAfter, r.opt.MinSupport):
			return n, fmt.Errorf("support %d: %s has %s in the campaign, a cap needs at least %d", q, f, plural(q, "query"), max(r.opt.CapAfter, r.opt.MinSupport))
		case d.Limit < q:
			n.Limit = q
		}
		return n, nil
	}
	return d, fmt.Errorf("unknown kind %q, want %s, %s or %s", d.Kind,
		messages.DirectiveExcludeElement, messages.DirectiveAvoidSystem, messages.DirectiveCapComposition)
}

// successWith names the first success matching f.
func (r *reflection) successWith(f func(*comp) bool) string {
	for _, c := range r.comps {
		if c.success() && f(c) {
			return c.Formula + ": " + outcome(c)
		}
	}
	return "a success"
}

// normalSystem writes a chemical system as the store does: element
// symbols sorted, joined by '-'.
func normalSystem(s string) (string, error) {
	var syms []string
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' || r == ',' }) {
		e, err := crystal.ElementBySymbol(p)
		if err != nil {
			return "", fmt.Errorf("system %q: %v", s, err)
		}
		syms = append(syms, e.Symbol())
	}
	if len(syms) < 2 {
		return "", fmt.Errorf("system %q: want two or more elements, as Li-O-P", s)
	}
	sort.Strings(syms)
	return strings.Join(slices.Compact(syms), "-"), nil
}

// Edit is a memory edit proposed by an LLM (SciMem App. E, Figs. 15–16).
type Edit struct {
	// Op is EditAdd, EditModify, EditMerge or EditDelete.
	Op string `json:"op"`
	// Key is the lesson edited, or the lesson a merge writes:
	// "comp:<formula>", "elem:<symbol>", "sys:<A-B-…>" or
	// "fam:<anonymous formula>".
	Key string `json:"key"`
	// Text is the lesson (add, modify, merge).
	Text string `json:"text,omitempty"`
	// From are the lessons a merge replaces.
	From []string `json:"from,omitempty"`
	// Outcome is OutcomeProductive, OutcomeUnproductive or "" (the
	// model's reading; anything else counts as unknown).
	Outcome string `json:"outcome,omitempty"`
	// Reason says why.
	Reason string `json:"reason,omitempty"`
}

// ApplyEdits turns memory edits proposed by an LLM into operations on the
// bank, checked as the rules' own are kept: a key names a composition,
// element or system (normalised); add needs a key not in the bank (else
// it is a modify), modify and delete one that is, merge at least one
// lesson of the bank to replace; a lesson's text is non-empty, at most
// maxLessonText bytes and no verbatim copy of another lesson; a lesson's
// support is the campaign's evaluations behind its subject plus the
// other campaigns' evidence it replaces, never typed by the model; a new
// lesson needs MinSupport. A delete may only remove a lesson whose
// support the campaign's queries of its subject cover, so that one
// episode's reading never throws away other campaigns' evidence.
// Beyond MaxLessons the least supported lessons go, as with the rules.
// Edits that fail a check are dropped with the reason.
func ApplyEdits(in Input, edits []Edit) ([]ExperienceOp, []Dropped) {
	r := newReflection(in)
	r.directives()
	old := map[string]*Experience{}
	for i := range in.Existing {
		if in.Existing[i].Key != "" {
			old[in.Existing[i].Key] = &in.Existing[i]
		}
	}
	b := newBankEdit(old)
	work, why, del := b.work, b.why, b.del
	var dropped []Dropped
	drop := func(e Edit, format string, args ...any) {
		dropped = append(dropped, Dropped{What: e.Op + " " + e.Key, Reason: fmt.Sprintf(format, args...)})
	}
	reason := map[string]string{}
	texts := func(except ...string) map[string]bool {
		m := map[string]bool{}
		for k, e := range work {
			if !slices.Contains(except, k) {
				m[e.Text] = true
			}
		}
		return m
	}
	for _, e := range edits {
		key, kind, q, err := r.subject(e.Key)
		if err != nil {
			drop(e, "%v", err)
			continue
		}
		e.Key = key
		text := strings.TrimSpace(e.Text)
		_, inBank := work[key]
		switch e.Op {
		case EditDelete:
			switch {
			case !inBank:
				drop(e, "no such lesson in the bank")
			case work[key].Support > q:
				drop(e, "the lesson has support %d, more than the campaign's %s of its subject: other campaigns' evidence is kept", work[key].Support, plural(q, "query"))
			default:
				del(key, EditDelete, strings.TrimSpace(e.Reason))
			}
			continue
		case EditAdd, EditModify, EditMerge:
		default:
			drop(e, "unknown operation %q, want add, modify, merge or delete", e.Op)
			continue
		}
		switch {
		case text == "":
			drop(e, "no text")
			continue
		case len(text) > maxLessonText:
			drop(e, "text of %d bytes, at most %d", len(text), maxLessonText)
			continue
		case texts(append([]string{key}, e.From...)...)[text]:
			drop(e, "the text repeats another lesson verbatim")
			continue
		}
		others := r.others(old[key], q)
		from := []*Experience{old[key]}
		switch e.Op {
		case EditAdd:
			if inBank {
				drop(e, "already in the bank: modify or merge it")
				continue
			}
			if q < r.opt.MinSupport {
				drop(e, "support %d: the campaign has %s of its subject, a lesson needs at least %d", q, plural(q, "query"), r.opt.MinSupport)
				continue
			}
		case EditModify:
			if !inBank {
				drop(e, "no such lesson in the bank: add it")
				continue
			}
		case EditMerge:
			var sources []string
			for _, f := range e.From {
				fk, _, fq, err := r.subject(f)
				if err != nil || fk == key {
					continue
				}
				if o, ok := work[fk]; ok {
					sources = append(sources, fk)
					addEvidence(others, r.others(old[fk], fq))
					from = append(from, &o)
				}
			}
			if len(sources) == 0 {
				drop(e, "merges no lesson of the bank (from %v)", e.From)
				continue
			}
			for _, fk := range sources {
				b.remove(fk, EditMerge, "merged into "+key)
			}
		}
		outcome := e.Outcome
		if outcome != OutcomeProductive && outcome != OutcomeUnproductive {
			outcome = ""
		}
		work[key] = r.withEvidence(Experience{Key: key, Kind: kind, Text: text, Outcome: outcome, Campaigns: r.campaigns(from...)}, others, q)
		why[key], reason[key] = e.Op, strings.TrimSpace(e.Reason)
	}
	b.bound(r.opt.MaxLessons)
	return b.ops(func(k string) string { return reason[k] }), dropped
}

// subject reads a lesson key: its normal form, kind, and the campaign's
// queries of its subject.
func (r *reflection) subject(key string) (string, string, int, error) {
	prefix, name, ok := strings.Cut(strings.TrimSpace(key), ":")
	if !ok {
		return "", "", 0, fmt.Errorf("key %q: want comp:<formula>, elem:<symbol>, sys:<A-B-…> or fam:<anonymous formula>", key)
	}
	switch prefix {
	case "comp":
		c, err := crystal.ParseFormula(name)
		if err != nil {
			return "", "", 0, fmt.Errorf("key %q: %v", key, err)
		}
		f := c.ReducedFormula()
		q := 0
		if st := r.byF[f]; st != nil {
			q = st.Queries
		}
		return CompositionKey(f), KindComposition, q, nil
	case "elem":
		e, err := crystal.ElementBySymbol(name)
		if err != nil {
			return "", "", 0, fmt.Errorf("key %q: %v", key, err)
		}
		q := 0
		for _, c := range r.comps {
			if slices.Contains(c.elements, e.Symbol()) {
				q += c.Queries
			}
		}
		return ElementKey(e.Symbol()), KindElement, q, nil
	case "sys":
		s, err := normalSystem(name)
		if err != nil {
			return "", "", 0, fmt.Errorf("key %q: %v", key, err)
		}
		return SystemKey(s), KindSystem, r.systemQueries(s), nil
	case "fam":
		// An anonymous formula ("ABC3"), or a formula of the family
		// ("SrTiO3").
		f := strings.TrimSpace(name)
		if !isAnonymous(f) {
			if f = familyOf(f); f == "" {
				return "", "", 0, fmt.Errorf("key %q: not an anonymous formula (ABC3) or a formula", key)
			}
		}
		return FamilyKey(f), KindFamily, r.familyQueries(f), nil
	}
	return "", "", 0, fmt.Errorf("key %q: want comp:<formula>, elem:<symbol>, sys:<A-B-…> or fam:<anonymous formula>", key)
}

// isAnonymous reports whether s is an anonymous formula as
// crystal.Composition.AnonymousFormula writes it for up to 26 elements:
// the labels A, B, C, … in order, each with an integer amount (1 left
// out), the amounts not decreasing.
func isAnonymous(s string) bool {
	next, last := 'A', 0
	for s != "" {
		if rune(s[0]) != next || next > 'Z' {
			return false
		}
		s = s[1:]
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n := 1
		if j > 0 {
			var err error
			if n, err = strconv.Atoi(s[:j]); err != nil || n < 2 {
				return false
			}
		}
		if n < last {
			return false
		}
		next, last, s = next+1, n, s[j:]
	}
	return next > 'A'
}
