package reflection

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Lesson kinds: what a lesson is about.
const (
	KindComposition = "composition"
	KindElement     = "element"
	KindSystem      = "system"
	// KindFamily: a composition family, one stoichiometry across
	// chemical systems (the anonymous formula, "ABC3").
	KindFamily = "family"
)

// SciMem's memory edits (App. E, Figs. 15–16).
const (
	EditAdd    = "add"
	EditModify = "modify"
	EditMerge  = "merge"
	EditDelete = "delete"
)

// Lesson outcomes (Experience.Outcome).
const (
	// OutcomeProductive: its subject gave hits or stable candidates.
	OutcomeProductive = "productive"
	// OutcomeUnproductive: its subject gave neither, with support.
	OutcomeUnproductive = "unproductive"
)

// CompositionKey is the key of the lesson about a reduced formula
// ("comp:Li3PO4").
func CompositionKey(formula string) string { return "comp:" + formula }

// ElementKey is the key of the lesson about an element ("elem:Tl").
func ElementKey(symbol string) string { return "elem:" + symbol }

// SystemKey is the key of the lesson about a chemical system
// ("sys:Li-O-P").
func SystemKey(system string) string { return "sys:" + system }

// FamilyKey is the key of the lesson about a composition family, an
// anonymous formula ("fam:ABC3").
func FamilyKey(family string) string { return "fam:" + family }

// lessonIn is a lesson drafted from this campaign's evidence.
type lessonIn struct {
	key, kind, text, outcome string
	evidence                 int // this campaign's evaluations behind it
}

// others is the evidence behind e that is not the current campaign's, by
// campaign. With e.Evidence it is exact: every entry but the campaign's
// own. A lesson without it (written before it was kept) is split as well
// as its fields allow: all of it belongs to its one campaign when it names
// one other campaign; when it names the current one, the campaign's
// statistics are cumulative, so its earlier share was at most cur and the
// rest, e.Support − cur, is someone else's; what cannot be attributed is
// kept under the key "". The support of the updated lesson, the sum of
// others and cur, thus never falls and never counts a campaign's
// evaluations twice.
func (r *reflection) others(e *Experience, cur int) map[string]int {
	out := map[string]int{}
	if e == nil {
		return out
	}
	if e.Evidence != nil {
		for c, n := range e.Evidence {
			if c != r.in.Campaign && n > 0 {
				out[c] = n
			}
		}
		return out
	}
	n := max(0, e.Support)
	mine := slices.Contains(e.Campaigns, r.in.Campaign)
	if mine {
		n = max(0, n-cur)
	}
	switch {
	case n == 0:
	case !mine && len(e.Campaigns) == 1:
		out[e.Campaigns[0]] = n
	default:
		out[""] = n
	}
	return out
}

// withEvidence returns e with Evidence = others + the campaign's cur and
// Support their sum.
func (r *reflection) withEvidence(e Experience, others map[string]int, cur int) Experience {
	ev := make(map[string]int, len(others)+1)
	for c, n := range others {
		ev[c] += n
	}
	ev[r.in.Campaign] += cur
	e.Evidence, e.Support = ev, 0
	for _, n := range ev {
		e.Support += n
	}
	return e
}

func addEvidence(to, from map[string]int) {
	for c, n := range from {
		to[c] += n
	}
}

func (r *reflection) campaigns(es ...*Experience) []string {
	var out []string
	for _, e := range es {
		if e != nil {
			out = append(out, e.Campaigns...)
		}
	}
	if r.in.Campaign != "" {
		out = append(out, r.in.Campaign)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// memory drafts this reflection's lessons and returns the edits that take
// the bank there (SciMem §3.2, App. E):
//
//   - delete a lesson contradicted by new evidence: the lesson about the
//     subject of a revoked directive (a capped composition, an excluded
//     element or an avoided system that now has a success);
//   - add a lesson with its evidence (Support = this campaign's queries,
//     Evidence = {campaign: queries}):
//     a composition with a hit (productive), a newly capped composition
//     (unproductive), a newly excluded element, a required element whose
//     compositions all failed, a newly avoided system;
//   - modify an existing lesson whose evidence changed: new text, the
//     campaign's evidence replaced by its current count (the statistics
//     are cumulative), the other campaigns' kept (see others), the
//     campaign added to its campaigns;
//   - merge: once MergeAt composition lessons share a chemical system, or
//     the system already has a lesson, they are replaced by one system
//     lesson (prefer merge over add); the composition lessons left are
//     merged by composition family (anonymous formula) likewise, so that
//     the bank is keyed by element, system and family rather than by
//     composition;
//   - bound: beyond MaxLessons, the least supported lessons are deleted
//     (ties by key).
//
// Deletes come before puts, each group by key, so that a deleted and
// re-added key ends as the new lesson.
func (r *reflection) memory() []ExperienceOp {
	// The bank; of two lessons with one key (a store keeps one) the better
	// supported counts, whatever their order.
	old := map[string]*Experience{}
	for i := range r.in.Existing {
		e := r.in.Existing[i]
		if e.Key == "" {
			continue
		}
		if o := old[e.Key]; o == nil || e.Support > o.Support || (e.Support == o.Support && e.Text > o.Text) {
			old[e.Key] = &e
		}
	}
	b := newBankEdit(old)
	work, why, del := b.work, b.why, b.del

	// Contradictions.
	for _, d := range r.revoked {
		key := ""
		switch {
		case d.Formula != "":
			key = CompositionKey(d.Formula)
		case d.Element != "":
			key = ElementKey(d.Element)
		case d.System != "":
			key = SystemKey(d.System)
		}
		if _, ok := work[key]; ok {
			del(key, EditDelete, "contradicted: "+strings.TrimPrefix(d.Reason, "revoked: "))
			// Gone, with its evidence: nothing below carries it over.
			delete(old, key)
		}
	}

	// Adds and modifications.
	r.draftLessons()
	keys := make([]string, 0, len(r.lessons))
	for k := range r.lessons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		l := r.lessons[k]
		prev, had := work[k]
		var base *Experience
		if had {
			base = old[k] // the bank's version (a contradicted one is gone)
		}
		e := r.withEvidence(Experience{Key: k, Kind: l.kind, Text: r.withEarlier(l.text, base), Outcome: l.outcome, Campaigns: r.campaigns(base)},
			r.others(base, l.evidence), l.evidence)
		switch {
		case !had:
			work[k], why[k] = e, EditAdd
		case !sameLesson(prev, e):
			work[k], why[k] = e, EditModify
		}
	}

	// Merges: composition lessons into system lessons, then those left
	// into family lessons (one stoichiometry across systems).
	merge := func(kind string, groupOf func(formula string) string, key func(string) string,
		queries func(string) int, text func(string, []string) string, outcome func(string) string) {
		groups := map[string][]string{}
		for k, e := range work {
			if e.Kind != KindComposition || !strings.HasPrefix(k, "comp:") {
				continue
			}
			if g := groupOf(strings.TrimPrefix(k, "comp:")); g != "" {
				groups[g] = append(groups[g], k)
			}
		}
		names := make([]string, 0, len(groups))
		for g := range groups {
			names = append(names, g)
		}
		sort.Strings(names)
		for _, g := range names {
			members := groups[g]
			gk := key(g)
			_, hasGroup := work[gk]
			if len(members) < r.opt.MergeAt && !hasGroup {
				continue
			}
			sort.Strings(members)
			var base *Experience
			if hasGroup {
				base = old[gk]
			}
			cur := queries(g)
			ev := r.others(base, cur)
			from := []*Experience{base}
			var earlier []string
			if e := earlierOf(base, r.in.Campaign); e != "" {
				earlier = append(earlier, e)
			}
			for _, k := range members {
				f := strings.TrimPrefix(k, "comp:")
				c := r.byF[f]
				o := old[k]
				if o == nil {
					continue // drafted now: the campaign's evidence speaks for it
				}
				q := 0
				if c != nil {
					q = c.Queries
				}
				addEvidence(ev, r.others(o, q))
				from = append(from, o)
				if c == nil || !slices.Contains(o.Campaigns, r.in.Campaign) {
					// Evidence the campaign's statistics do not hold: keep its
					// gist.
					earlier = append(earlier, firstSentence(o.Text))
				} else if e := earlierOf(o, r.in.Campaign); e != "" {
					earlier = append(earlier, e)
				}
			}
			e := r.withEvidence(Experience{Key: gk, Kind: kind, Text: text(g, earlier), Outcome: outcome(g), Campaigns: r.campaigns(from...)}, ev, cur)
			for _, k := range members {
				b.remove(k, EditMerge, "merged into "+gk)
			}
			if prev, ok := work[gk]; !ok || !sameLesson(prev, e) {
				work[gk], why[gk] = e, EditMerge
			}
		}
	}
	merge(KindSystem, systemOf, SystemKey, r.systemQueries, r.systemText, r.systemOutcome)
	merge(KindFamily, familyOf, FamilyKey, r.familyQueries, r.familyText, r.familyOutcome)

	b.bound(r.opt.MaxLessons)
	return b.ops(func(k string) string { return r.editReason(why[k], k) })
}

func deleted(ops []ExperienceOp, key string) bool {
	for _, op := range ops {
		if op.Delete && op.Experience.Key == key {
			return true
		}
	}
	return false
}

// sameLesson reports whether the bank's lesson a already says b. A lesson
// stored without Evidence is not rewritten for the split alone: a store
// that does not keep the field would otherwise be rewritten every time.
func sameLesson(a, b Experience) bool {
	return a.Text == b.Text && a.Kind == b.Kind && a.Support == b.Support &&
		slices.Equal(a.Campaigns, b.Campaigns) && (a.Evidence == nil || maps.Equal(a.Evidence, b.Evidence))
}

func (r *reflection) editReason(edit, key string) string {
	switch edit {
	case EditAdd:
		return "new evidence in campaign " + r.in.Campaign
	case EditModify:
		return "evidence changed in campaign " + r.in.Campaign
	case EditMerge:
		_, name, _ := strings.Cut(key, ":")
		return "composition lessons of " + name + " merged into one"
	}
	return ""
}

// systemQueries sums the campaign's queries in a chemical system.
func (r *reflection) systemQueries(s string) int {
	n := 0
	for _, c := range r.comps {
		if c.system == s {
			n += c.Queries
		}
	}
	return n
}

// familyQueries sums the campaign's queries of a composition family.
func (r *reflection) familyQueries(f string) int {
	n := 0
	for _, c := range r.comps {
		if c.family == f {
			n += c.Queries
		}
	}
	return n
}

// familyText summarises a composition family as systemText does a
// chemical system: this campaign's compositions of the stoichiometry, the
// productive and the capped ones, and the lessons merged into it.
func (r *reflection) familyText(f string, earlier []string) string {
	var b strings.Builder
	b.WriteString(f + " compositions:")
	if r.tally(&b, func(c *comp) bool { return c.family == f }, func(x string) bool { return familyOf(x) == f }) {
		b.WriteString(" Keep the " + f + " stoichiometry and substitute the elements of the productive ones.")
	}
	return withEarlier(&b, earlier)
}

// tally writes what the summaries of a group of compositions share (the
// group: the compositions in accepts, and the formulas inFormula accepts
// among those the campaign never queried):
// the campaign's compositions, queries, hits and stable candidates in it,
// its productive compositions and its capped ones, queried or not. It
// reports whether one was productive.
func (r *reflection) tally(b *strings.Builder, in func(*comp) bool, inFormula func(string) bool) bool {
	var productive, capped []string
	n, q, hits, stable := 0, 0, 0, 0
	for _, c := range r.comps {
		if !in(c) {
			continue
		}
		n++
		q += c.Queries
		hits += c.Hits
		stable += c.Stable
		switch {
		case c.Hits > 0:
			productive = append(productive, fmt.Sprintf("%s (%d/%d/%d)", c.Formula, c.Hits, c.Stable, c.Queries))
		case r.capped[c.Formula]:
			capped = append(capped, c.Formula)
		}
	}
	for formula := range r.capped {
		if r.byF[formula] == nil && inFormula(formula) {
			capped = append(capped, formula)
		}
	}
	sort.Strings(capped)
	if n > 0 {
		fmt.Fprintf(b, " %s, %s, %s, %d stable in campaign %s.", plural(n, "composition"), plural(q, "query"), plural(hits, "hit"), stable, r.in.Campaign)
	}
	if len(productive) > 0 {
		b.WriteString(" Productive (hits/stable/queries): " + list(productive, 4) + ".")
	}
	if len(capped) > 0 {
		b.WriteString(" Unproductive, capped: " + list(capped, 6) + ".")
	}
	return len(productive) > 0
}

// withEarlier ends a lesson's text with what the earlier lessons merged
// into it said that it does not, and clips it.
func withEarlier(b *strings.Builder, earlier []string) string {
	if e := novel(strings.Join(earlier, " "), b.String()); e != "" {
		b.WriteString(earlierMarker + e)
	}
	return clip(b.String())
}

// familyOutcome is productive when a composition of the family has a hit
// in the campaign; unproductive when none has a hit or a stable candidate
// and the family has capped compositions, or ExcludeAfter queries over at
// least two compositions; else unknown.
func (r *reflection) familyOutcome(f string) string {
	capped, stable, n, q := false, false, 0, 0
	for _, c := range r.comps {
		if c.family != f {
			continue
		}
		if c.Hits > 0 {
			return OutcomeProductive
		}
		capped = capped || r.capped[c.Formula]
		stable = stable || c.Stable > 0
		n++
		q += c.Queries
	}
	if !stable && (capped || n >= 2 && q >= r.opt.ExcludeAfter) {
		return OutcomeUnproductive
	}
	return ""
}

// draftLessons writes the lessons this campaign's evidence supports.
func (r *reflection) draftLessons() {
	r.lessons = map[string]*lessonIn{}
	sign := OutcomeUnproductive
	add := func(key, kind, text string, evidence int) {
		r.lessons[key] = &lessonIn{key: key, kind: kind, text: text, evidence: evidence, outcome: sign}
	}
	for _, c := range r.comps {
		if c.Hits > 0 && r.supported(c) {
			sign = OutcomeProductive
			add(CompositionKey(c.Formula), KindComposition, fmt.Sprintf(
				"%s%s: %s%s. Productive: explore its neighbours (isovalent substitutions, nearby stoichiometries) rather than repeat it.",
				c.Formula, inSystem(c), outcome(c), energyRange(c)), c.Queries)
		}
	}
	sign = OutcomeUnproductive
	for _, c := range r.caps {
		add(CompositionKey(c.Formula), KindComposition, fmt.Sprintf(
			"%s%s: %s, none feasible or stable%s. Unproductive: capped at %d queries.",
			c.Formula, inSystem(c), plural(c.Queries, "query"), energyRange(c), c.Queries), c.Queries)
	}
	for _, x := range r.excluded {
		add(ElementKey(x.Symbol), KindElement, fmt.Sprintf(
			"%s: %s over %d compositions (%s), none feasible or stable while other compositions succeeded. Excluded.",
			x.Symbol, plural(x.Queries, "query"), len(x.Compositions), list(x.Compositions, 4)), x.Queries)
	}
	for _, x := range r.protected {
		add(ElementKey(x.Symbol), KindElement, fmt.Sprintf(
			"%s: %s over %d compositions (%s) without a hit or a stable candidate, but the task requires it: keep %s and change its partners and stoichiometry.",
			x.Symbol, plural(x.Queries, "query"), len(x.Compositions), list(x.Compositions, 4), x.Symbol), x.Queries)
	}
	for _, a := range r.avoided {
		add(SystemKey(a.System), KindSystem, r.systemText(a.System, nil), r.systemQueries(a.System))
	}
	// Families: one stoichiometry over several compositions gathers the
	// evidence single compositions rarely do (a generator seldom repeats
	// a composition).
	counts := map[string]int{}
	for _, c := range r.comps {
		if c.family != "" {
			counts[c.family]++
		}
	}
	fams := make([]string, 0, len(counts))
	for f, n := range counts {
		if n >= 2 && r.familyQueries(f) >= r.opt.MinSupport {
			fams = append(fams, f)
		}
	}
	sort.Strings(fams)
	for _, f := range fams {
		if sign = r.familyOutcome(f); sign != "" {
			add(FamilyKey(f), KindFamily, r.familyText(f, nil), r.familyQueries(f))
		}
	}
}

// earlierMarker introduces what a lesson keeps of evidence from other
// campaigns or lessons it absorbed.
const earlierMarker = " Earlier: "

// maxLessonText bounds a lesson's text (SciMem asks for concise
// experiences, at most about 100 words).
const maxLessonText = 700

// withEarlier appends to a lesson drafted from this campaign what its
// previous version knew from elsewhere: the whole of it when the campaign
// had not contributed, else its own earlier part.
func (r *reflection) withEarlier(text string, base *Experience) string {
	if e := novel(earlierOf(base, r.in.Campaign), text); e != "" {
		text += earlierMarker + e
	}
	return clip(text)
}

// novel is what earlier says that text does not: its sentences, less
// those text already holds (with or without an earlier part of its own),
// so that a lesson never repeats itself.
func novel(earlier, text string) string {
	var keep []string
	for _, s := range sentences(earlier) {
		if !strings.Contains(text, s) && !slices.Contains(keep, s) {
			keep = append(keep, s)
		}
	}
	return strings.Join(keep, " ")
}

// sentences splits a text at full stops followed by a space, and at the
// earlier marker.
func sentences(text string) []string {
	var out []string
	for _, part := range strings.Split(text, earlierMarker) {
		for part != "" {
			i := strings.Index(part, ". ")
			if i < 0 {
				out = append(out, strings.TrimSpace(part))
				break
			}
			out = append(out, strings.TrimSpace(part[:i+1]))
			part = part[i+2:]
		}
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// earlierOf is what e knows apart from the campaign's current statistics:
// all its text when the campaign has not contributed to it, else the part
// after earlierMarker.
func earlierOf(e *Experience, campaign string) string {
	if e == nil {
		return ""
	}
	if !slices.Contains(e.Campaigns, campaign) {
		return e.Text
	}
	if i := strings.Index(e.Text, earlierMarker); i >= 0 {
		return e.Text[i+len(earlierMarker):]
	}
	return ""
}

// firstSentence is the text up to its first full stop followed by a space.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// clip cuts a text to maxLessonText bytes at a rune boundary, marking the
// cut with "…".
func clip(s string) string {
	if len(s) <= maxLessonText {
		return s
	}
	cut := maxLessonText - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// systemText summarises a chemical system: this campaign's compositions in
// it (productive, capped, others), the lessons merged into it, and whether
// it is avoided.
func (r *reflection) systemText(s string, earlier []string) string {
	var b strings.Builder
	b.WriteString(s + ":")
	productive := r.tally(&b, func(c *comp) bool { return c.system == s }, func(x string) bool { return systemOf(x) == s })
	switch {
	case r.isAvoided(s):
		b.WriteString(" Avoided.")
	case productive:
		b.WriteString(" Vary the productive stoichiometries; skip the capped ones.")
	}
	return withEarlier(&b, earlier)
}

// systemOutcome is productive when a composition of the system has a hit
// in the campaign, unproductive when it has capped compositions, else
// unknown.
func (r *reflection) systemOutcome(s string) string {
	capped := false
	for _, c := range r.comps {
		if c.system != s {
			continue
		}
		if c.Hits > 0 {
			return OutcomeProductive
		}
		capped = capped || r.capped[c.Formula]
	}
	if capped || r.isAvoided(s) {
		return OutcomeUnproductive
	}
	return ""
}

func (r *reflection) isAvoided(s string) bool {
	if r.bankAvoided[s] {
		return true
	}
	for _, a := range r.avoided {
		if a.System == s {
			return true
		}
	}
	return false
}

func inSystem(c *comp) string {
	if c.system == "" {
		return ""
	}
	return " (" + c.system + ")"
}

// bankEdit is a memory bank being edited: old is the bank as it was,
// work the bank as edited, why the edit of each key put, deletes the keys
// taken out of the bank.
type bankEdit struct {
	old     map[string]*Experience
	work    map[string]Experience
	why     map[string]string
	deletes []ExperienceOp
}

func newBankEdit(old map[string]*Experience) *bankEdit {
	b := &bankEdit{old: old, work: make(map[string]Experience, len(old)), why: map[string]string{}}
	for k, e := range old {
		b.work[k] = *e
	}
	return b
}

// del deletes key from the bank with the edit and its reason.
func (b *bankEdit) del(key, edit, reason string) {
	b.deletes = append(b.deletes, ExperienceOp{Delete: true, Experience: Experience{Key: key}, Edit: edit, Reason: reason})
	b.discard(key)
}

// discard forgets a key that is not to be put.
func (b *bankEdit) discard(key string) {
	delete(b.work, key)
	delete(b.why, key)
}

// remove deletes key from the bank if the bank had it, and otherwise only
// discards it.
func (b *bankEdit) remove(key, edit, reason string) {
	if _, wasOld := b.old[key]; wasOld {
		b.del(key, edit, reason)
	} else {
		b.discard(key)
	}
}

// bound takes the least supported lessons (ties by key) out until at most
// maxLessons remain.
func (b *bankEdit) bound(maxLessons int) {
	extra := len(b.work) - maxLessons
	if extra <= 0 {
		return
	}
	all := make([]Experience, 0, len(b.work))
	for _, e := range b.work {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Support != all[j].Support {
			return all[i].Support < all[j].Support
		}
		return all[i].Key < all[j].Key
	})
	for _, e := range all[:extra] {
		if deleted(b.deletes, e.Key) {
			b.discard(e.Key)
		} else {
			b.remove(e.Key, EditDelete, fmt.Sprintf("bank bound: %d lessons at most, support %d among the lowest", maxLessons, e.Support))
		}
	}
}

// ops are the edits: the deletes, then the puts, each group by key, so
// that a deleted and re-added key ends as the new lesson. reason gives a
// put's reason.
func (b *bankEdit) ops(reason func(key string) string) []ExperienceOp {
	sort.SliceStable(b.deletes, func(i, j int) bool { return b.deletes[i].Experience.Key < b.deletes[j].Experience.Key })
	puts := make([]string, 0, len(b.why))
	for k := range b.why {
		puts = append(puts, k)
	}
	sort.Strings(puts)
	ops := b.deletes
	for _, k := range puts {
		ops = append(ops, ExperienceOp{Experience: b.work[k], Edit: b.why[k], Reason: reason(k)})
	}
	return ops
}
