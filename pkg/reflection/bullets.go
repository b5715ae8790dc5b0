package reflection

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Bullets per reflection (MADE §4.2: "3–5 concise, actionable bullet
// points").
const (
	MinBullets = 3
	MaxBullets = 5
)

// Thresholds of the failure-kind bullets.
const (
	invalidShare = 0.3  // invalid structures among the evaluated
	knownShare   = 0.25 // reproduced reference materials among the evaluated
	breadthLow   = 0.5  // unique compositions per query
	breadthDrop  = 0.05 // a fall of breadth worth a bullet
	noveltyRatio = 0.2  // stable per novel below which novelty ≠ success
	minEvidence  = 5    // evaluations before a rate is worth a bullet
)

type bullet struct {
	prio int
	text string
}

// bullets writes MinBullets to MaxBullets lessons, most urgent first, each
// naming what to do with the proposer's levers — which compositions, how
// many queries each, which stoichiometric regions (MADE App. A,
// actionability constraint) — and reading the metrics as App. A's
// guardrails say: an E_hull below 0 is below the known hull, not an error;
// novelty is not stability; a known material is no discovery.
func (r *reflection) bullets(s discovery.EpisodeStats) []string {
	var bs []bullet
	add := func(prio int, text string) { bs = append(bs, bullet{prio, text}) }
	thr := strconv.FormatFloat(r.threshold(), 'g', 3, 64)

	if s.EpisodeEvaluated == 0 {
		c := r.in.Counters
		add(10, fmt.Sprintf("Episode %d evaluated no candidate (%d rejected by the proposer as invalid, duplicate or against a directive; %d empty generations): propose compositions outside the capped, excluded and avoided sets, with structures not tried before.",
			r.in.Episode, max(c.Rejected, 0), max(c.EmptyGenerations, 0)))
	}
	if t := r.exploitBullet(); t != "" {
		add(20, t)
	}
	if t := r.stopBullet(); t != "" {
		add(30, t)
	}
	for _, x := range r.protected {
		add(35, fmt.Sprintf("%s is required by the task, but its %d compositions (%s) failed over %s: keep %s and change its partners and stoichiometry instead.",
			x.Symbol, len(x.Compositions), list(x.Compositions, 3), plural(x.Queries, "query"), x.Symbol))
	}
	if s.Evaluated > 0 && s.Hits == 0 {
		add(25, r.noHitsBullet(s))
	}
	if s.Hits > 0 && s.StableHits == 0 {
		add(41, r.unstableHitsBullet(s, thr))
	}
	if s.Evaluated >= minEvidence && 1-discovery.Rate(s.Valid, s.Evaluated) >= invalidShare {
		bad := s.Evaluated - s.Valid
		add(42, fmt.Sprintf("%d of %d evaluated candidates (%s) were invalid structures (atoms too close, or no charge-balanced oxidation states), wasted queries: propose charge-balanced formulas with common oxidation states and physical interatomic distances.",
			bad, s.Evaluated, pct(discovery.Rate(bad, s.Evaluated))))
	}
	if s.Evaluated >= minEvidence && s.Known >= 2 && s.MemorizationRate >= knownShare {
		add(43, fmt.Sprintf("%d of %d evaluated candidates (%s) restate materials of the reference data, which are no discovery: substitute elements in, or change the stoichiometry of, known formulas instead of repeating them.",
			s.Known, s.Evaluated, pct(s.MemorizationRate)))
	}
	if t := r.belowHullBullet(); t != "" {
		add(50, t)
	}
	if t := r.breadthBullet(s); t != "" {
		add(60, t)
	}
	if s.Novel >= minEvidence && discovery.Rate(s.Stable, s.Novel) < noveltyRatio {
		add(70, fmt.Sprintf("%d novel candidates but only %d stable: novelty is not success. A discovery needs every constraint met and E_hull ≤ %s eV/atom; prefer modifications of stable compositions over exotic new ones.",
			s.Novel, s.Stable, thr))
	}

	sort.SliceStable(bs, func(i, j int) bool { return bs[i].prio < bs[j].prio })
	out := make([]string, 0, MaxBullets)
	fresh := func(t string) bool { return !slices.Contains(out, t) && !slices.Contains(r.in.Recent, t) }
	for _, b := range bs {
		if len(out) == MaxBullets {
			break
		}
		if fresh(b.text) {
			out = append(out, b.text)
		}
	}
	for _, f := range r.fallbackBullets(s, thr) {
		if len(out) >= MinBullets {
			break
		}
		if fresh(f) {
			out = append(out, f)
		}
	}
	if len(out) < MinBullets {
		// The rest was said in the recent reflections.
		out = append(out, fmt.Sprintf("Episode %d added no evidence that changes the lessons above: they stand.", r.in.Episode+1))
	}
	return out
}

// fallbackBullets are always true and actionable; they complete a
// reflection with too little evidence for more.
func (r *reflection) fallbackBullets(s discovery.EpisodeStats, thr string) []string {
	return []string{
		fmt.Sprintf("Stop-loss: give a composition at most %d queries without a hit or a stable candidate (the proposer then caps it) and move on to untried compositions.", r.opt.CapAfter),
		fmt.Sprintf("Aim every query at a stable hit — every constraint met and E_hull ≤ %s eV/atom, not in the reference data (%d of %d evaluated so far): favour compositions whose neighbours came close on both.", thr, s.StableHits, s.Evaluated),
		fmt.Sprintf("Keep breadth: %s over %s so far; propose at least one untried composition in every generation.", plural(s.UniqueCompositions, "composition"), plural(s.Queries, "query")),
	}
}

func (r *reflection) exploitBullet() string {
	var good []*comp
	for _, c := range r.comps {
		if c.Hits > 0 && r.supported(c) {
			good = append(good, c)
		}
	}
	if len(good) == 0 {
		return ""
	}
	sort.SliceStable(good, func(i, j int) bool {
		a, b := good[i], good[j]
		if (a.Stable > 0) != (b.Stable > 0) {
			return a.Stable > 0
		}
		if a.Stable != b.Stable {
			return a.Stable > b.Stable
		}
		if a.Hits != b.Hits {
			return a.Hits > b.Hits
		}
		if a.Queries != b.Queries {
			return a.Queries < b.Queries
		}
		return a.Formula < b.Formula
	})
	good = good[:min(len(good), 3)]
	var items, systems []string
	for _, c := range good {
		items = append(items, fmt.Sprintf("%s (%s)", c.Formula, outcome(c)))
		if c.system != "" && !slices.Contains(systems, c.system) {
			systems = append(systems, c.system)
		}
	}
	where := ""
	if len(systems) > 0 {
		where = " in " + strings.Join(systems, ", ")
	}
	return fmt.Sprintf("Exploit %s: propose isovalent substitutions and nearby stoichiometries%s rather than repeats (a repeated structure is no discovery), but keep at least half of the queries for other systems.",
		strings.Join(items, ", "), where)
}

func (r *reflection) stopBullet() string {
	var parts []string
	if len(r.caps) > 0 {
		var items []string
		for _, c := range r.caps[:min(len(r.caps), 4)] {
			items = append(items, fmt.Sprintf("%s (%d)", c.Formula, c.Queries))
		}
		more := ""
		if len(r.caps) > 4 {
			more = fmt.Sprintf(" and %d more", len(r.caps)-4)
		}
		parts = append(parts, fmt.Sprintf("capped %s%s after queries without a hit or a stable candidate", strings.Join(items, ", "), more))
	}
	for _, x := range r.excluded {
		parts = append(parts, fmt.Sprintf("excluded %s (%s over %d compositions, none feasible or stable)", x.Symbol, plural(x.Queries, "query"), len(x.Compositions)))
	}
	for _, a := range r.avoided {
		parts = append(parts, fmt.Sprintf("avoiding %s (%d capped compositions)", a.System, len(a.Capped)))
	}
	var lifted []string
	for _, d := range r.revoked {
		what := map[string]string{
			messages.DirectiveCapComposition: "the cap on ",
			messages.DirectiveExcludeElement: "the exclusion of ",
			messages.DirectiveAvoidSystem:    "the avoidance of ",
		}[d.Kind]
		lifted = append(lifted, what+d.Formula+d.Element+d.System+" ("+strings.TrimPrefix(d.Reason, "revoked: ")+")")
	}
	if len(parts) == 0 && len(lifted) == 0 {
		return ""
	}
	var b strings.Builder
	if len(parts) > 0 {
		b.WriteString("Stop: " + strings.Join(parts, "; ") + ". Spend those queries on compositions not tried yet.")
	}
	if len(lifted) > 0 {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString("Lifted " + strings.Join(lifted, "; ") + ": successes there are worth exploring again.")
	}
	return b.String()
}

func (r *reflection) noHitsBullet(s discovery.EpisodeStats) string {
	var cs []string
	for _, c := range r.in.Task.Constraints {
		cs = append(cs, c.String())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "No candidate met every constraint in %s (%s)", plural(s.Evaluated, "evaluation"), strings.Join(cs, "; "))
	if s.Stable > 0 {
		fmt.Fprintf(&b, "; %s stable, so the properties, not stability, are the bottleneck", wasWere(s.Stable))
	}
	b.WriteString(".")
	var hints []string
	for _, c := range r.in.Task.Constraints {
		if h := propertyHint(c); h != "" && !slices.Contains(hints, h) {
			hints = append(hints, h)
		}
	}
	if len(hints) > 0 {
		b.WriteString(" Move toward the bounds: " + strings.Join(hints[:min(len(hints), 2)], "; ") + ".")
	}
	if ref := r.in.Task.ReferenceOnly(); len(ref) > 0 {
		fmt.Fprintf(&b, " (%s: known only for reference compounds, so a new composition has no value for it.)", strings.Join(ref, ", "))
	}
	if un := r.in.Task.Unsupported(); len(un) > 0 {
		fmt.Fprintf(&b, " (%s: no oracle provides it, so no candidate can meet it.)", strings.Join(un, ", "))
	}
	return b.String()
}

// propertyHint says which chemistry moves a property toward a bound: the
// textbook trends (ionicity widens band gaps and deepens formation
// energies; short covalent bonds stiffen; light elements lighten).
func propertyHint(c task.Constraint) string {
	l, _ := c.Bounds()
	switch c.Property {
	case "band_gap":
		if c.Kind == task.Lower || (c.Kind == task.Interval && l >= 1.5) {
			return "wider gaps come with ionic bonding — alkali, alkaline-earth, Al, Zn or Ga cations with O or F, no partly filled d shells"
		}
		return "narrower gaps come with softer anions — sulfides, selenides, iodides, nitrides with p-block or d¹⁰ cations"
	case "formation_energy_per_atom":
		if c.Kind == task.Lower {
			return "less negative formation energies come with covalent or intermetallic bonding"
		}
		return "more negative formation energies come with large electronegativity differences — oxides and fluorides of electropositive metals"
	case "bulk_modulus", "shear_modulus":
		if c.Kind == task.Upper {
			return "softer lattices come with large, polarisable ions — halides and chalcogenides of heavy alkali metals"
		}
		return "stiffness comes with short, strong covalent bonds — borides, carbides, nitrides and oxides of light or early transition metals"
	case "density":
		if c.Kind == task.Lower {
			return "density comes with heavy elements in close-packed structures"
		}
		return "low density comes with light elements (Li, B, C, N, O, Mg, Al, Si) in open frameworks"
	}
	return ""
}

func (r *reflection) unstableHitsBullet(s discovery.EpisodeStats, thr string) string {
	var near []*comp
	for _, c := range r.comps {
		if c.Hits > 0 && c.EMin != nil {
			near = append(near, c)
		}
	}
	sort.SliceStable(near, func(i, j int) bool {
		if *near[i].EMin != *near[j].EMin {
			return *near[i].EMin < *near[j].EMin
		}
		return near[i].Formula < near[j].Formula
	})
	closest := ""
	if len(near) > 0 {
		var items []string
		for _, c := range near[:min(len(near), 2)] {
			items = append(items, fmt.Sprintf("%s at %.3g", c.Formula, *c.EMin))
		}
		closest = " (closest: " + strings.Join(items, ", ") + " eV/atom)"
	}
	return fmt.Sprintf("%s met every constraint but none was stable (E_hull ≤ %s eV/atom)%s: keep their chemistry and move toward lower energy — isovalent substitutions and stoichiometries nearer the known stable phases of their systems.",
		plural(s.Hits, "candidate"), thr, closest)
}

// belowHullBullet reads negative energies above hull as MADE's guardrails
// ask: below the known hull is a potential new ground state, not an
// error — unless it is so far below that the surrogate is the likelier
// explanation.
func (r *reflection) belowHullBullet() string {
	var below []*comp
	for _, c := range r.comps {
		if c.EMin != nil && *c.EMin < 0 {
			below = append(below, c)
		}
	}
	if len(below) == 0 {
		return ""
	}
	sort.SliceStable(below, func(i, j int) bool {
		if *below[i].EMin != *below[j].EMin {
			return *below[i].EMin < *below[j].EMin
		}
		return below[i].Formula < below[j].Formula
	})
	lowest := below[0]
	if *lowest.EMin < -r.opt.SuspiciousBelowHull {
		return fmt.Sprintf("E_hull below 0 means below the known hull, not an error; but %s at %.3g eV/atom lies more than %.3g eV/atom below, several surrogate errors — more likely a surrogate error than a new ground state: do not build on it until it is confirmed.",
			lowest.Formula, *lowest.EMin, r.opt.SuspiciousBelowHull)
	}
	var items []string
	for _, c := range below[:min(len(below), 3)] {
		items = append(items, fmt.Sprintf("%s (%.3g)", c.Formula, *c.EMin))
	}
	return fmt.Sprintf("%s reached E_hull below 0 eV/atom: below the known hull, a potential new ground state, not an error — explore their nearby stoichiometries.",
		strings.Join(items, ", "))
}

func (r *reflection) breadthBullet(s discovery.EpisodeStats) string {
	if s.Queries == 0 {
		return ""
	}
	top := ""
	if s.TopShare >= 0.2 {
		for _, c := range r.comps {
			if discovery.Rate(c.Queries, s.Queries) == s.TopShare {
				top = fmt.Sprintf("; %s alone took %s of them", c.Formula, pct(s.TopShare))
				break
			}
		}
	}
	act := fmt.Sprintf("keep each composition to at most %d queries and spend at least half of the next episode on compositions not tried yet", r.opt.CapAfter)
	if p := r.in.Previous; p != nil && p.Queries > 0 && s.Breadth < p.Breadth-breadthDrop {
		return fmt.Sprintf("Breadth fell from %.3g to %.3g unique compositions per query (%s over %s%s): %s.",
			p.Breadth, s.Breadth, plural(s.UniqueCompositions, "composition"), plural(s.Queries, "query"), top, act)
	}
	if s.Queries >= minEvidence && s.Breadth < breadthLow {
		return fmt.Sprintf("Only %s over %s (%.3g per query%s): %s.",
			plural(s.UniqueCompositions, "composition"), plural(s.Queries, "query"), s.Breadth, top, act)
	}
	return ""
}

// wasWere writes "1 was", "3 were".
func wasWere(n int) string {
	if n == 1 {
		return "1 was"
	}
	return fmt.Sprintf("%d were", n)
}

// pct writes a fraction as a whole percentage.
func pct(x float64) string { return strconv.Itoa(int(math.Round(100*x))) + "%" }

// plural writes "1 query", "3 queries".
func plural(n int, noun string) string {
	s := strconv.Itoa(n) + " "
	switch {
	case n == 1:
		return s + noun
	case noun == "query":
		return s + "queries"
	}
	return s + noun + "s"
}
