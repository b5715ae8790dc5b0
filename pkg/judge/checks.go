package judge

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Property sources (messages.PropertyValue.Source): the CGCNN surrogate,
// whose values carry its test MAE as uncertainty, and the exact ones — a
// lookup of a known compound, a quantity computed from the structure
// itself, and the hull (exact given the formation energy it is computed
// from; see uncertainty).
const (
	SourceCGCNN     = "cgcnn"
	SourceReference = "reference"
	SourceStructure = "structure"
	SourceHull      = "hull"
	// SourceSymmetry: zero by symmetry (a piezoelectric coefficient of a
	// centrosymmetric structure), exact.
	SourceSymmetry = "symmetry"
)

// formationEnergy is the property the energy above hull is computed from.
const formationEnergy = "formation_energy_per_atom"

func checkValidity(ev *messages.Evaluation) outcome {
	if !ev.Valid {
		var rs []string
		for _, r := range ev.Reasons {
			rs = append(rs, reasonText(r))
		}
		if len(rs) == 0 {
			return fail(CheckValidity, "the oracle marked the structure invalid without a reason", "invalid structure")
		}
		return fail(CheckValidity, "the oracle's validity checks failed: "+strings.Join(rs, "; "), "invalid structure: "+rs[0])
	}
	detail := "the structure passed the oracle's validity checks (lattice, interatomic distances, charge neutrality)"
	if len(ev.OxidationStates) > 0 {
		detail += "; charge-balanced with " + oxidationStates(ev.OxidationStates)
	}
	if ev.Evaluator != "" {
		detail += " [" + ev.Evaluator + "]"
	}
	return pass(CheckValidity, detail, "valid structure")
}

func reasonText(r messages.Reason) string {
	switch {
	case r.Code == "":
		return r.Detail
	case r.Detail == "":
		return r.Code
	}
	return r.Code + ": " + r.Detail
}

// oxidationStates writes "Li+1 P+5 O-2", elements in symbol order.
func oxidationStates(m map[string]float64) string {
	syms := make([]string, 0, len(m))
	for s := range m {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	parts := make([]string, len(syms))
	for i, s := range syms {
		parts[i] = s + strconv.FormatFloat(m[s], 'g', 4, 64)
		if m[s] > 0 {
			parts[i] = s + "+" + strconv.FormatFloat(m[s], 'g', 4, 64)
		}
	}
	return strings.Join(parts, " ")
}

// checkConstraints passes iff the evaluation is feasible and its margins
// agree: every constraint of the task has a margin, none is negative or
// missing, and no constrained property is unsupported.
func checkConstraints(t *task.Task, ev *messages.Evaluation) outcome {
	var items, problems []string
	byProperty := make(map[string]bool, len(ev.Margins))
	for _, m := range ev.Margins {
		byProperty[m.Property] = true
		item := describeMargin(t, ev, m)
		items = append(items, item)
		switch {
		case m.Missing:
			problems = append(problems, m.Property+" has no value")
		case !(m.Margin >= 0):
			problems = append(problems, fmt.Sprintf("%s misses its bound (Φ = %.4g)", m.Property, m.Margin))
		}
		// The metal rule: a band-gap constraint is met only by a structure
		// the metal classifier calls non-metallic.
		if pv, ok := ev.Properties[m.Property]; ok && pv.Metallic && !m.Missing {
			problems = append(problems, m.Property+": a metal by CGCNN's classifier"+metalText(pv))
		}
	}
	for _, c := range t.Constraints {
		if !byProperty[c.Property] {
			problems = append(problems, "no margin for "+c.String())
		}
	}
	for _, p := range ev.Unsupported {
		problems = append(problems, p+" has no oracle")
	}
	if !ev.Feasible && len(problems) == 0 {
		problems = append(problems, "the oracle marked it infeasible")
	}
	if ev.Feasible && len(problems) > 0 {
		problems = append([]string{"marked feasible, but"}, problems...)
	}
	detail := strings.Join(items, "; ")
	if detail == "" {
		detail = "no constraint margins"
	}
	if len(problems) > 0 {
		return fail(CheckConstraints, detail+" — "+strings.Join(problems, ", "), "constraints not met: "+strings.Join(problems, ", "))
	}
	return pass(CheckConstraints, fmt.Sprintf("all %d constraints met: %s (score S = %.4g)", len(ev.Margins), detail, ev.Score),
		fmt.Sprintf("meets all %d constraints", len(ev.Margins)))
}

// checkTaskRules passes iff the candidate's structure meets the task's
// element, formula, anion and structure-family rules; the proposer and the
// evaluator enforce them already, the judge checks the structure it was
// given.
func checkTaskRules(t *task.Task, ev *messages.Evaluation) outcome {
	st, err := ev.Candidate.Structure.Crystal()
	if err != nil {
		return fail(CheckTaskRules, "the candidate's structure cannot be read: "+err.Error(), "unreadable structure")
	}
	var problems []string
	for _, v := range t.Violations(st) {
		problems = append(problems, v.Detail)
	}
	if len(problems) > 0 {
		return fail(CheckTaskRules, strings.Join(problems, "; "), "outside the task: "+problems[0])
	}
	rules := append(t.Elements.Describe(), t.DescribeStructure()...)
	if len(rules) == 0 {
		return pass(CheckTaskRules, "the task has no element or structure rules", "no task rules to break")
	}
	return pass(CheckTaskRules, "meets the task's rules: "+strings.Join(rules, "; "), "obeys the task's rules")
}

// describeMargin writes "band_gap = 3.1 eV [cgcnn] against band_gap ≥ 2.5
// eV: Φ = 0.24".
func describeMargin(t *task.Task, ev *messages.Evaluation, m messages.Margin) string {
	bound := m.Property + " (" + m.Kind + ")"
	for _, c := range t.Constraints {
		if c.Property == m.Property {
			bound = c.String()
			break
		}
	}
	if m.Missing {
		return m.Property + ": no value against " + bound
	}
	return fmt.Sprintf("%s against %s: Φ = %.4g", valueText(m.Property, ev), bound, m.Margin)
}

// valueText writes "band_gap = 3.1 eV [cgcnn ± 0.388]".
func valueText(name string, ev *messages.Evaluation) string {
	pv, ok := ev.Properties[name]
	if !ok {
		return name + ": no value"
	}
	s := fmt.Sprintf("%s = %.4g", name, pv.Value)
	if pv.Unit != "" {
		s += " " + pv.Unit
	}
	src := pv.Source
	if src == "" {
		src = "unknown source"
	}
	if pv.Uncertainty > 0 {
		src += fmt.Sprintf(" ± %.4g", pv.Uncertainty)
	}
	if pv.TieSpread > 0 {
		src += fmt.Sprintf(" + %.4g tie spread", pv.TieSpread)
	}
	if pv.MetalProbability != nil {
		src += metalText(pv)
	}
	return s + " [" + src + "]"
}

// metalText writes " (P(metal) = 0.93)", empty without a probability.
func metalText(pv messages.PropertyValue) string {
	if pv.MetalProbability == nil {
		return ""
	}
	return fmt.Sprintf(" (P(metal) = %.3g)", *pv.MetalProbability)
}

func checkThermodynamics(ev *messages.Evaluation, threshold, fallback, k float64) outcome {
	if ev.EAboveHull == nil {
		return fail(CheckThermodynamics, "no energy above hull: the oracle could not place the candidate on a convex hull", "no energy above hull")
	}
	e := *ev.EAboveHull
	if math.IsNaN(e) || math.IsInf(e, 0) {
		return fail(CheckThermodynamics, fmt.Sprintf("energy above hull %v is not a number", e), "no energy above hull")
	}
	phases := competingPhases(ev.Decomposition)
	suspicious, calibrated := OutlierBound(ev.EAboveHullCalibrated, fallback)
	boundText := "the calibrated 95 % error of the energy above hull"
	if !calibrated {
		boundText = "the default bound: no calibration of the energy above hull"
	}
	var hullText string
	if ev.HullEnergy != nil {
		hullText = fmt.Sprintf("; hull energy at its composition %.4g eV/atom", *ev.HullEnergy)
	}
	src, sigma := energySource(ev)
	if c := ev.EAboveHullCalibrated; c != nil && c.Q68 > 0 {
		// A calibrated E_hull must clear the threshold by k σ.
		sigma = c.Q68
		src = fmt.Sprintf("hull of a surrogate formation energy, calibrated σ %.4g eV/atom", sigma)
		if e > threshold-k*sigma && e <= threshold {
			return fail(CheckThermodynamics,
				fmt.Sprintf("E_hull = %.4g eV/atom (%s) is within %g calibrated standard errors of the stability threshold %.4g eV/atom (needs ≤ %.4g); competing phases %s",
					e, src, k, threshold, threshold-k*sigma, phases),
				fmt.Sprintf("not stable by %gσ: E_hull %.4g > %.4g eV/atom", k, e, threshold-k*sigma))
		}
	}
	switch {
	case e > threshold:
		return fail(CheckThermodynamics,
			fmt.Sprintf("E_hull = %.4g eV/atom (%s) is above the stability threshold %.4g eV/atom: it would decompose into %s%s",
				e, src, threshold, phases, hullText),
			fmt.Sprintf("unstable: E_hull %.4g > %.4g eV/atom", e, threshold))
	case e < -suspicious:
		why := ""
		if sigma > 0 {
			why = fmt.Sprintf(", %.4g × the formation energy's error of %.4g eV/atom", -e/sigma, sigma)
		}
		return fail(CheckThermodynamics,
			fmt.Sprintf("E_hull = %.4g eV/atom (%s) lies %.4g eV/atom below the hull of %s%s: more than %.4g eV/atom (%s) below the known ground states%s, more likely a surrogate error than a new ground state",
				e, src, -e, phases, hullText, suspicious, boundText, why),
			fmt.Sprintf("suspiciously far below the hull: E_hull %.4g < -%.4g eV/atom", e, suspicious))
	}
	var where string
	if e < 0 {
		where = fmt.Sprintf("%.4g eV/atom below the hull of the known phases %s: a candidate new ground state", -e, phases)
	} else {
		where = fmt.Sprintf("≤ the stability threshold %.4g eV/atom; competing phases %s", threshold, phases)
	}
	detail := fmt.Sprintf("E_hull = %.4g eV/atom (%s), %s%s", e, src, where, hullText)
	if sigma > 0 {
		detail += fmt.Sprintf("; the threshold is %.4g formation-energy MAEs (%.4g eV/atom) away", (threshold-e)/sigma, sigma)
	}
	return pass(CheckThermodynamics, detail, fmt.Sprintf("E_hull %.4g eV/atom ≤ %.4g", e, threshold))
}

// energySource says where the energy above hull comes from and returns
// the formation energy's uncertainty, 0 when exact or unknown.
func energySource(ev *messages.Evaluation) (string, float64) {
	fe, ok := ev.Properties[formationEnergy]
	if !ok {
		return "hull", 0
	}
	if sigma := sigmaOf(fe); sigma > 0 && !math.IsInf(sigma, 0) {
		return fmt.Sprintf("hull of a %s formation energy ± %.4g eV/atom", fe.Source, sigma), sigma
	}
	return "hull of a " + fe.Source + " formation energy", 0
}

// competingPhases writes a decomposition "Li2O (0.5) + P2O5 (0.5)", the
// largest fractions first.
func competingPhases(d map[string]float64) string {
	if len(d) == 0 {
		return "no reported phases"
	}
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if d[names[i]] != d[names[j]] {
			return d[names[i]] > d[names[j]]
		}
		return names[i] < names[j]
	})
	const shown = 6
	parts := make([]string, 0, shown+1)
	for i, n := range names {
		if i == shown {
			parts = append(parts, fmt.Sprintf("%d more", len(names)-shown))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%.4g)", n, d[n]))
	}
	return strings.Join(parts, " + ")
}

// ConfidenceMargin is the distance of the value v from the bound a
// constraint could be violated on, in the property's unit:
//
//	lower    v ≥ l:      v − l
//	upper    v ≤ u:      u − v
//	interval l ≤ v ≤ u:  min(v − l, u − v)
//
// It is negative when v misses the bound. Unlike LLEMA's Φ it is not
// normalised, so it compares directly with a surrogate's MAE: a surrogate
// value is trusted to meet the constraint when ConfidenceMargin ≥ K·σ.
func ConfidenceMargin(c task.Constraint, v float64) float64 {
	l, u := c.Bounds()
	switch c.Kind {
	case task.Lower:
		return v - l
	case task.Upper:
		return u - v
	case task.Interval:
		return math.Min(v-l, u-v)
	}
	return math.NaN()
}

// CalibratedMargin is the margin of a value v from the constraint's bounds
// and the standard error it is to be measured in. For a value whose error
// was calibrated in log10 of the property (cal.Log10Q68 > 0: Crucible's
// own surrogates, whose errors are factors — 8 for a conductivity) both
// are in decades: the margin of log10 v from log10 of the bounds, and σ
// the calibrated 68 % quantile in decades, so that "v is k σ inside its
// bounds" means v·10^(∓kσ) lies inside them, the model's own 68 %
// interval (surrogate.Model.Interval); a first-order σ = ln 10 · v · q
// of a factor-8 error would put every value within 1σ of zero. A bound
// at or below zero is no bound for a positive value. Otherwise (or for
// v ≤ 0) the margin is ConfidenceMargin and σ is sigma, and log is false.
func CalibratedMargin(c task.Constraint, v float64, cal *messages.Calibrated, sigma float64) (d, s float64, log bool) {
	if cal == nil || !(cal.Log10Q68 > 0) || !(v > 0) {
		return ConfidenceMargin(c, v), sigma, false
	}
	l, u := c.Bounds()
	lo, hi := math.Inf(1), math.Inf(1)
	if c.Kind == task.Lower || c.Kind == task.Interval {
		if l > 0 {
			lo = math.Log10(v) - math.Log10(l)
		}
	}
	if c.Kind == task.Upper || c.Kind == task.Interval {
		if u > 0 {
			hi = math.Log10(u) - math.Log10(v)
		} else {
			hi = math.Inf(-1)
		}
	}
	switch c.Kind {
	case task.Lower, task.Upper, task.Interval:
		return math.Min(lo, hi), cal.Log10Q68, true
	}
	return math.NaN(), cal.Log10Q68, true
}

// atLeast reports d ≥ want, counting values equal to within a relative
// 1e-9 as equal, so that a margin of exactly K·σ passes whatever the
// rounding of v − l (0.3 − 0.1 is 0.19999999999999998 in binary).
func atLeast(d, want, scale float64) bool {
	return d >= want-1e-9*math.Max(1, math.Abs(scale))
}

// uncertainty is σ of a property value: its own uncertainty (sigmaOf), or
// for a hull value without one, that of the formation energy it comes
// from (the reference phases' energies are exact, so the error of E_hull
// is the error of the candidate's formation energy).
func uncertainty(name string, pv messages.PropertyValue, ev *messages.Evaluation) float64 {
	if sigmaOf(pv) != 0 || pv.Source != SourceHull || name == formationEnergy {
		return sigmaOf(pv)
	}
	if fe, ok := ev.Properties[formationEnergy]; ok {
		return sigmaOf(fe)
	}
	return 0
}

// sigmaOf is a value's uncertainty plus its tie spread: where neighbours
// of different elements tie at CGCNN's cut, the choice among them moves
// the prediction by up to the spread, on top of the model's error.
func sigmaOf(pv messages.PropertyValue) float64 {
	return pv.Uncertainty + pv.TieSpread
}

func exactSource(src string) bool {
	return src == SourceReference || src == SourceStructure || src == SourceHull || src == SourceSymmetry
}

func checkConfidence(spec *messages.CampaignSpec, ev *messages.Evaluation, k float64) outcome {
	if spec == nil {
		return fail(CheckConfidence, "no campaign spec: the task's constraints are unknown", "no campaign spec to check the properties against")
	}
	cs := spec.Task.Constraints
	if len(cs) == 0 {
		return fail(CheckConfidence, "the task has no constraints to meet", "no constraints")
	}
	var items, weak []string
	minRatio := math.Inf(1)
	for _, c := range cs {
		pv, ok := ev.Properties[c.Property]
		if !ok {
			items = append(items, c.Property+": no value")
			weak = append(weak, c.Property+" has no value")
			continue
		}
		d, sigma, decades := CalibratedMargin(c, pv.Value, pv.Calibrated, uncertainty(c.Property, pv, ev))
		unit := ""
		if pv.Unit != "" {
			unit = " " + pv.Unit
		}
		if decades {
			unit = " decades"
		}
		head := fmt.Sprintf("%s = %.4g%s [%s]", c.Property, pv.Value, unit, pv.Source)
		switch {
		case math.IsNaN(d):
			items = append(items, head+": constraint of unknown kind "+strconv.Quote(string(c.Kind)))
			weak = append(weak, c.Property+" has a constraint of unknown kind")
		case sigma == 0 && exactSource(pv.Source):
			ok := d >= 0
			items = append(items, fmt.Sprintf("%s, exact, %.4g%s from its bound (%s)", head, d, unit, c.String()))
			if !ok {
				weak = append(weak, c.Property+" misses its bound")
			}
		case !(sigma > 0) || math.IsInf(sigma, 0):
			items = append(items, fmt.Sprintf("%s: a model value without a usable uncertainty (%v)", head, sigma))
			weak = append(weak, c.Property+" has no surrogate uncertainty")
		default:
			ratio := d / sigma
			minRatio = math.Min(minRatio, ratio)
			ok := atLeast(d, k*sigma, k*sigma)
			cmp := "≥"
			if !ok {
				cmp = "<"
			}
			items = append(items, fmt.Sprintf("%s ± %.4g: %.4g%s from its bound (%s) = %.4gσ %s %.4gσ",
				head, sigma, d, unit, c.String(), ratio, cmp, k))
			if !ok {
				weak = append(weak, fmt.Sprintf("%s within surrogate error (%.4gσ < %.4gσ)", c.Property, ratio, k))
			}
		}
	}
	detail := strings.Join(items, "; ")
	if len(weak) > 0 {
		return fail(CheckConfidence, detail, "low confidence: "+strings.Join(weak, ", "))
	}
	summary := "every constrained property exact"
	if !math.IsInf(minRatio, 1) {
		summary = fmt.Sprintf("surrogate margins ≥ %.4gσ (smallest %.4gσ)", k, minRatio)
	}
	return pass(CheckConfidence, detail, summary)
}

func checkNovelty(ev *messages.Evaluation) outcome {
	f := formulaOf(ev)
	n := ev.Novelty
	switch {
	case ev.Candidate.Seed:
		return fail(CheckNovelty, f+" is a seed material the campaign started from", "known material: a seed")
	case n == nil && ev.Known:
		return fail(CheckNovelty, f+" is in the reference data: a known material, not a discovery", "known material: "+f+" is in the reference data")
	case n == nil:
		if !ev.Novel {
			return fail(CheckNovelty, "an earlier candidate of the campaign had the same formula "+f+" and structure", "not novel: repeats an earlier candidate")
		}
		return pass(CheckNovelty, f+" is not in the reference data (compared by formula: no known structures were consulted)", "new")
	case n.Class == messages.NoveltyKnownStructure:
		return fail(CheckNovelty, fmt.Sprintf("the structure matches the known structure %s (normalised RMS displacement %.3g): a known material, not a discovery", n.Match, n.RMS),
			"known material: "+f+" matches "+n.Match)
	case n.Class == messages.NoveltyKnownFormula:
		return fail(CheckNovelty, f+" is in the reference data and no structure of it is held to compare with: a known material by formula",
			"known material: "+f+" is in the reference data")
	case n.Class == messages.NoveltyOrderedMixture:
		return fail(CheckNovelty, fmt.Sprintf("%s lies above the hull inside the facet of its isovalent end members %s: an ordered mixture of known phases, not a new compound",
			f, competingPhases(n.EndMembers)), "ordered mixture of known phases: "+endMembers(n.EndMembers))
	case !ev.Novel:
		return fail(CheckNovelty, f+" is not marked novel (class "+n.Class+")", "not novel")
	case n.Class == messages.NoveltyNewPolymorph:
		return pass(CheckNovelty, fmt.Sprintf("a new polymorph of %s: its structure matches none of the %d known (%s); its energy is its own, placed against the known polymorph's",
			f, len(n.Polymorphs), strings.Join(n.Polymorphs, ", ")), "a new polymorph")
	}
	return pass(CheckNovelty, f+" is not in the reference data, matches no known structure, and is not an ordered mixture of known phases", "new")
}

// endMembers writes "NaF + LiF", the largest fractions first.
func endMembers(d map[string]float64) string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if d[names[i]] != d[names[j]] {
			return d[names[i]] > d[names[j]]
		}
		return names[i] < names[j]
	})
	return strings.Join(names, " + ")
}

// Sigma is the uncertainty the judge weighs a property value's margin
// against: its own uncertainty plus its tie spread, or for a hull value
// without one that of the formation energy it comes from; 0 for exact
// values.
func Sigma(name string, pv messages.PropertyValue, ev *messages.Evaluation) float64 {
	return uncertainty(name, pv, ev)
}

// ExactSource reports whether a property source gives exact values
// (reference, structure, hull, symmetry).
func ExactSource(src string) bool { return exactSource(src) }

// CompetingPhases writes a decomposition "Li2O (0.5) + P2O5 (0.5)", the
// largest fractions first.
func CompetingPhases(d map[string]float64) string { return competingPhases(d) }
