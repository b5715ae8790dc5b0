// Package reflection is what Crucible's reflector learns after each episode
// of a campaign (MADE + Reflexion §4.1–4.2): concise, actionable bullets
// for the proposer's prompt, machine-enforced directives for the
// environment, and edits of the context's memory bank.
//
// The reflector here is rule-based and deterministic — not an LLM. It
// reads the same structured summary MADE's reflector is given
// (per-composition query counts, stability, hits and energy ranges, and
// the campaign's counters), applies MADE's reflection guardrails (App. A:
// interpret the metrics correctly, every bullet actionable through the
// levers the proposer has: which compositions, how many queries each,
// which stoichiometric regions), and turns the advice MADE's actors ignored
// (§5.2: per-composition query caps, element exclusions) into directives
// the proposer enforces (§5.3: "constraints … are better moved out of the
// prompt and into the environment"). The same input always gives the same
// output, so a redelivered episode-end message reflects identically.
//
// Lessons follow SciMem (§3.2, App. E, Figs. 15–16): experiences keyed by
// context — an element ("elem:Tl"), a chemical system ("sys:Li-O-P"), a
// composition family ("fam:ABC3", one stoichiometry across systems) or,
// while no broader lesson covers it, a composition ("comp:Li3PO4") —
// edited by add, modify, merge and delete operations, merging preferred
// over adding, and the bank kept small.
// Reflect returns the operations, not the new bank; the caller applies
// them to its store.
package reflection

import (
	"math"
	"sort"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Experience is one lesson of a memory bank, as the store keeps it.
type Experience struct {
	Key string `json:"key"`
	// Text is the lesson in words.
	Text string `json:"text"`
	// Kind is KindComposition, KindElement or KindSystem.
	Kind string `json:"kind"`
	// Outcome is OutcomeProductive, OutcomeUnproductive or "" (unknown):
	// what the evolve generator's weights read (evolve.GuidanceFrom).
	Outcome string `json:"outcome,omitempty"`
	// Support counts the evaluations behind the lesson.
	Support int `json:"support"`
	// Campaigns that contributed to it.
	Campaigns []string `json:"campaigns,omitempty"`
	// Evidence splits Support by campaign (the key "" holds support of
	// unknown origin), so that a later episode replaces its campaign's
	// share instead of adding to it. A lesson stored without it is split
	// as well as Support and Campaigns allow.
	Evidence map[string]int `json:"evidence,omitempty"`
}

// ExperienceOp is one edit of a bank's experiences: a put of Experience
// (Delete false) or a delete of Experience.Key.
type ExperienceOp struct {
	Delete     bool
	Experience Experience
	// Edit is SciMem's operation: EditAdd, EditModify, EditMerge (the put
	// of a merged lesson and the deletes of the lessons it replaces) or
	// EditDelete.
	Edit string
	// Reason says why, as SciMem's update prompts ask of every edit.
	Reason string
}

// Input is the reflector's view of a campaign at the end of an episode.
type Input struct {
	Campaign string `json:"campaign"`
	// Context keys the memory bank (messages.CampaignSpec.MemoryContext).
	Context            string    `json:"context"`
	Episode            int       `json:"episode"`
	Task               task.Task `json:"task"`
	StabilityThreshold float64   `json:"stability_threshold"`
	// Counters are the campaign's totals so far.
	Counters messages.Counters `json:"counters"`
	// EpisodeEvaluated counts the evaluations of the episode just ended.
	EpisodeEvaluated int `json:"episode_evaluated"`
	// Compositions are the campaign's per-composition statistics so far.
	Compositions []discovery.CompositionStat `json:"compositions"`
	// Log is the episode's chronological log of evaluations (MADE §4.1),
	// possibly only its most recent; the rules do not read it, the LLM
	// reflector shows it.
	Log []Query `json:"log,omitempty"`
	// Existing are the bank's experiences, from earlier episodes and
	// campaigns of the same context.
	Existing []Experience `json:"existing,omitempty"`
	// Directives are the bank's directives.
	Directives []messages.Directive `json:"directives,omitempty"`
	// Previous are the statistics of the previous reflection of the
	// campaign, if any: breadth is judged against them.
	Previous *discovery.EpisodeStats `json:"previous,omitempty"`
	// Recent are the bullets of the bank's most recent reflections: a
	// bullet that would repeat one of them verbatim is left out.
	Recent []string `json:"recent,omitempty"`
	// Options tune the rules; the zero value is the default.
	Options Options `json:"options,omitzero"`
}

// Query is one evaluation of an episode's log: the reduced composition,
// its energy above hull (nil for an invalid candidate), and whether it
// met every constraint (Hit), was stable, is in the reference data
// (Known) or new (Novel).
type Query struct {
	Index      int      `json:"index"`
	Formula    string   `json:"formula"`
	EAboveHull *float64 `json:"e_above_hull,omitempty"`
	Valid      bool     `json:"valid,omitempty"`
	Hit        bool     `json:"hit,omitempty"`
	Stable     bool     `json:"stable,omitempty"`
	Known      bool     `json:"known,omitempty"`
	Novel      bool     `json:"novel,omitempty"`
}

// Output is what the reflector learned.
type Output struct {
	// Bullets are 3–5 concise, actionable lessons for the proposer's
	// prompt (MADE App. A).
	Bullets []string
	// Directives are the new rules for the proposer to enforce, in order
	// of breadth: element exclusions, avoided systems, composition caps.
	Directives []messages.Directive
	// Revoke are directives of the bank that a success now contradicts
	// (a capped composition, an excluded element or an avoided system that
	// produced a hit or a stable candidate); the caller removes them.
	Revoke []messages.Directive
	// Ops edit the bank's experiences, deletes before puts.
	Ops   []ExperienceOp
	Stats discovery.EpisodeStats
}

// Defaults of Options.
const (
	DefaultCapAfter               = 3
	DefaultExcludeAfter           = 8
	DefaultExcludeMinCompositions = 2
	DefaultMaxExclusions          = 3
	DefaultAvoidAfterCaps         = 3
	DefaultMaxDirectives          = 20
	DefaultMergeAt                = 3
	DefaultMaxLessons             = 64
	DefaultMinSupport             = 3
	// DefaultSuspiciousBelowHull (eV/atom): an energy this far below the
	// known hull is about four CGCNN formation-energy MAEs (0.039 eV/atom)
	// and more likely a surrogate error than a new ground state; the judge
	// uses the same default.
	DefaultSuspiciousBelowHull = 0.15
)

// Options tune the rules. A zero field takes its default.
type Options struct {
	// CapAfter is N: a composition queried at least N times with no hit
	// and no stable candidate is capped at its current count.
	CapAfter int `json:"cap_after,omitempty"`
	// ExcludeAfter is M: an element whose compositions were queried at
	// least M times in total, over at least ExcludeMinCompositions
	// compositions, with no hit and no stable candidate, is excluded.
	ExcludeAfter           int `json:"exclude_after,omitempty"`
	ExcludeMinCompositions int `json:"exclude_min_compositions,omitempty"`
	// ExcludeWithoutContrast lets an element be excluded when nothing in
	// the campaign has succeeded yet. By default exclusion needs contrast
	// — some composition without the element succeeded — because while
	// everything fails the failure cannot be blamed on one element (it
	// would exclude oxygen from an oxide search for the sins of its
	// cations); caps and avoided systems still apply.
	ExcludeWithoutContrast bool `json:"exclude_without_contrast,omitempty"`
	// MaxExclusions bounds the elements excluded by one reflection, the
	// best-evidenced first.
	MaxExclusions int `json:"max_exclusions,omitempty"`
	// AvoidAfterCaps: a chemical system with at least this many capped
	// compositions and no success is avoided.
	AvoidAfterCaps int `json:"avoid_after_caps,omitempty"`
	// MaxDirectives bounds the directives of one reflection.
	MaxDirectives int `json:"max_directives,omitempty"`
	// MergeAt: that many composition lessons of one chemical system are
	// merged into a system lesson (SciMem: prefer merge over add).
	MergeAt int `json:"merge_at,omitempty"`
	// MaxLessons bounds the bank; the least supported lessons go first.
	MaxLessons int `json:"max_lessons,omitempty"`
	// MinSupport is the evidence advice needs: a success is worth
	// exploiting, and a productive composition worth a lesson, once its
	// composition or its chemical system has this many queries — never
	// on a single observation.
	MinSupport int `json:"min_support,omitempty"`
	// SuspiciousBelowHull (eV/atom), for the guardrail on negative
	// energies above hull.
	SuspiciousBelowHull float64 `json:"suspicious_below_hull,omitempty"`
}

func (o Options) withDefaults() Options {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.CapAfter, DefaultCapAfter)
	def(&o.ExcludeAfter, DefaultExcludeAfter)
	def(&o.ExcludeMinCompositions, DefaultExcludeMinCompositions)
	def(&o.MaxExclusions, DefaultMaxExclusions)
	def(&o.AvoidAfterCaps, DefaultAvoidAfterCaps)
	def(&o.MaxDirectives, DefaultMaxDirectives)
	def(&o.MergeAt, DefaultMergeAt)
	def(&o.MaxLessons, DefaultMaxLessons)
	def(&o.MinSupport, DefaultMinSupport)
	if !(o.SuspiciousBelowHull > 0) {
		o.SuspiciousBelowHull = DefaultSuspiciousBelowHull
	}
	return o
}

// Reflect reflects on the campaign so far. It is a pure function of its
// input: deterministic, no clock, no randomness. Inconsistent input is
// cleaned, never a panic: negative counts count as zero, hits and stable
// counts are capped at the queries, duplicate formulas are summed,
// non-finite energies dropped; a formula that does not parse keeps its
// composition rules (caps, lessons) but takes no part in the element and
// system rules.
func Reflect(in Input) Output {
	r := newReflection(in)
	r.directives()
	out := Output{
		Directives: r.emitted,
		Revoke:     r.revoked,
		Stats:      r.stats(),
	}
	out.Ops = r.memory()
	out.Bullets = r.bullets(out.Stats)
	return out
}

// comp is a cleaned discovery.CompositionStat with its elements and chemical
// system, both empty when the formula does not parse.
type comp struct {
	discovery.CompositionStat
	elements []string
	system   string
	family   string // the anonymous formula: "ABC3" for SrTiO3
}

func (c *comp) success() bool { return c.Hits > 0 || c.Stable > 0 }

// supported reports whether c has the evidence advice needs: MinSupport
// queries of the composition, or of its chemical system.
func (r *reflection) supported(c *comp) bool {
	if c.Queries >= r.opt.MinSupport {
		return true
	}
	return c.system != "" && r.systemQueries(c.system) >= r.opt.MinSupport
}

// reflection holds the cleaned input and what the rules decided.
type reflection struct {
	in    Input
	opt   Options
	comps []*comp // by formula
	byF   map[string]*comp
	// Successful formulas, elements and systems.
	okElem, okSys map[string]bool
	// The bank's directives still in force (not revoked).
	bankCaps                  map[string]messages.Directive
	bankExcluded, bankAvoided map[string]bool

	// Decisions.
	revoked   []messages.Directive
	emitted   []messages.Directive
	caps      []*comp              // new caps, as emitted
	excluded  []elementEvidence    // new exclusions, as emitted
	protected []elementEvidence    // met the exclusion evidence, but required
	avoided   []systemEvidence     // new avoided systems, as emitted
	capped    map[string]bool      // every capped formula: bank and new
	lessons   map[string]*lessonIn // drafted lessons by key (memory.go)
}

func newReflection(in Input) *reflection {
	r := &reflection{
		in: in, opt: in.Options.withDefaults(),
		byF:    map[string]*comp{},
		okElem: map[string]bool{}, okSys: map[string]bool{},
	}
	for _, s := range in.Compositions {
		if s.Formula == "" {
			continue
		}
		c := r.byF[s.Formula]
		if c == nil {
			c = &comp{CompositionStat: discovery.CompositionStat{Formula: s.Formula}}
			if parsed, err := crystal.ParseFormula(s.Formula); err == nil {
				for _, e := range parsed.Elements() {
					c.elements = append(c.elements, e.Symbol())
				}
				sort.Strings(c.elements)
				c.system = parsed.ChemicalSystem()
				c.family = parsed.AnonymousFormula()
			}
			r.byF[s.Formula] = c
			r.comps = append(r.comps, c)
		}
		q := max(s.Queries, 0)
		c.Queries += q
		c.Stable += min(max(s.Stable, 0), q)
		c.Hits += min(max(s.Hits, 0), q)
		c.EMin = lower(c.EMin, finite(s.EMin), finite(s.EMax))
		c.EMax = upper(c.EMax, finite(s.EMin), finite(s.EMax))
	}
	kept := r.comps[:0]
	for _, c := range r.comps {
		if c.Queries == 0 {
			delete(r.byF, c.Formula)
			continue
		}
		kept = append(kept, c)
		if c.success() {
			for _, e := range c.elements {
				r.okElem[e] = true
			}
			if c.system != "" {
				r.okSys[c.system] = true
			}
		}
	}
	r.comps = kept
	sort.Slice(r.comps, func(i, j int) bool { return r.comps[i].Formula < r.comps[j].Formula })
	return r
}

func finite(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	v := *p
	return &v
}

// lower is the least of the given energies, nil when all are nil.
func lower(ps ...*float64) *float64 {
	var out *float64
	for _, p := range ps {
		if p != nil && (out == nil || *p < *out) {
			v := *p
			out = &v
		}
	}
	return out
}

func upper(ps ...*float64) *float64 {
	var out *float64
	for _, p := range ps {
		if p != nil && (out == nil || *p > *out) {
			v := *p
			out = &v
		}
	}
	return out
}

// threshold is the campaign's stability threshold, the default when unset.
func (r *reflection) threshold() float64 {
	t := r.in.StabilityThreshold
	if !(t > 0) || math.IsInf(t, 0) {
		return messages.DefaultStabilityThreshold
	}
	return t
}

// systemOf is the chemical system of a formula, "" when it does not parse.
func systemOf(formula string) string {
	c, err := crystal.ParseFormula(formula)
	if err != nil {
		return ""
	}
	return c.ChemicalSystem()
}

// familyOf is a formula's composition family, its anonymous formula
// ("ABC3" for SrTiO3 and BaZrO3), "" when it does not parse.
func familyOf(formula string) string {
	c, err := crystal.ParseFormula(formula)
	if err != nil || c.IsEmpty() {
		return ""
	}
	return c.AnonymousFormula()
}

// stats are the campaign's statistics at the end of the episode, over the
// cleaned compositions.
func (r *reflection) stats() discovery.EpisodeStats {
	comps := make([]discovery.CompositionStat, len(r.comps))
	for i, c := range r.comps {
		comps[i] = c.CompositionStat
	}
	return discovery.Episode(r.in.Episode, r.in.EpisodeEvaluated, r.in.Counters, comps)
}
