package debate

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Role is a debate role: a prompt for a model and the tools it may call.
type Role struct {
	Name string
	// Prompt is the role's system prompt in llm mode.
	Prompt string
	// Tools are the names of the tools the role calls.
	Tools []string
	// rules computes the role's position from its tools' results.
	rules func(c *Case, results map[string]messages.ToolCall) Stance
}

// Stance is a position with what the rules know of it: whether it rests
// on a hard fact (Decisive) and, for an uncertain one, what would settle
// it (Settle: "relaxation" or "calculation").
type Stance struct {
	Position   string
	Confidence float64
	Evidence   []string
	Decisive   bool
	Settle     string
}

// What settles an uncertain stance.
const (
	SettleRelaxation  = "relaxation"
	SettleCalculation = "calculation"
)

const commonPrompt = "You are one of four role agents in Crucible's debate judge, weighing whether a stable hit of an inorganic-materials discovery campaign " +
	"is a discovery a chemist should spend a synthesis on. Ground every claim in your tools: call them, quote their numbers, never invent one. " +
	"Each round you read the other roles' previous positions and may revise yours. Answer with a JSON object " +
	`{"position": "support"|"oppose"|"uncertain", "confidence": number in [0,1], "evidence": [strings quoting tool numbers], "argument": "one paragraph"}.`

// Roles lists the debate's roles, in the order they speak.
func Roles() []Role {
	return []Role{
		{Name: messages.RoleThermodynamics, Tools: []string{ToolEnergyAboveHull, ToolPhaseSensitivity}, rules: thermodynamicsRules,
			Prompt: commonPrompt + " Your role: thermodynamics. Judge bulk phase stability: the energy above hull under the best oracle tier, " +
				"its calibrated uncertainty against the stability threshold, the competing phases, and how much E_hull depends on single known phases. " +
				"Oppose an unstable candidate or one implausibly far below the hull; be uncertain when E_hull is within k σ of the threshold."},
		{Name: messages.RoleSynthesis, Tools: []string{ToolReferencePhases, ToolPrecursorReaction, ToolElementHazards}, rules: synthesisRules,
			Prompt: commonPrompt + " Your role: synthesis and precursors. Propose a precursor set and a reaction from the known phases of the chemical system, " +
				"weigh its reaction energy, and flag toxic, volatile or air-sensitive elements. Support a candidate with a favourable route."},
		{Name: messages.RoleConfidence, Tools: []string{ToolConstraintMargins, ToolMetalClassifier}, rules: confidenceRules,
			Prompt: commonPrompt + " Your role: property confidence. Weigh each constraint's margin against its calibrated uncertainty (tie spread included) " +
				"and the metal classifier. Oppose a missed bound or a metal for a band-gap task; be uncertain when a margin is within k σ."},
		{Name: messages.RoleNovelty, Tools: []string{ToolStructureMatch, ToolCampaignHistory}, rules: noveltyRules,
			Prompt: commonPrompt + " Your role: novelty. Weigh the structure-aware match against known compounds, whether the candidate is an ordered mixture " +
				"of known phases, and the campaign's earlier discoveries. Oppose a known compound or a mixture of known phases."},
	}
}

// RoleByName returns a role.
func RoleByName(name string) (Role, bool) {
	for _, r := range Roles() {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}

// Rules is the role's offline position from its tools' results.
func (r Role) Rules(c *Case, results map[string]messages.ToolCall) Stance {
	return r.rules(c, results)
}

// decode reads a tool call's result into v; false when the call failed.
func decode(results map[string]messages.ToolCall, tool string, v any) (bool, string) {
	tc, ok := results[tool]
	if !ok {
		return false, tool + " was not called"
	}
	if tc.Error != "" {
		return false, tool + ": " + tc.Error
	}
	if err := json.Unmarshal(tc.Result, v); err != nil {
		return false, tool + ": unreadable result: " + err.Error()
	}
	return true, ""
}

func clamp(x float64) float64 { return math.Max(0.05, math.Min(0.95, x)) }

// scaleConfidence maps a margin of m standard errors over k to a
// confidence in [lo, hi]: lo at m = k, hi from m = k + 3.
func scaleConfidence(m, k, lo, hi float64) float64 {
	return lo + (hi-lo)*math.Min(1, math.Max(0, (m-k)/3))
}

func thermodynamicsRules(c *Case, results map[string]messages.ToolCall) Stance {
	var h HullReport
	if ok, why := decode(results, ToolEnergyAboveHull, &h); !ok {
		return Stance{Position: messages.PositionUncertain, Confidence: 0.3, Evidence: []string{why}, Settle: SettleCalculation}
	}
	if h.EAboveHull == nil || math.IsNaN(*h.EAboveHull) {
		return Stance{Position: messages.PositionOppose, Confidence: 0.9, Decisive: true, Evidence: []string{"no energy above hull: the oracle could not place the candidate on a hull"}}
	}
	e := *h.EAboveHull
	st := Stance{}
	phases := phaseList(h.Decomposition)
	switch {
	case h.HullOutlier || e < -h.SuspiciousBelowHull:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.85, Decisive: true, Evidence: []string{
			fmt.Sprintf("E_hull = %.3g eV/atom lies more than %.3g eV/atom below the hull of %s: more likely a surrogate error than a new ground state", e, h.SuspiciousBelowHull, phases)}}
	case e > h.Threshold:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.9, Decisive: true, Evidence: []string{
			fmt.Sprintf("E_hull = %.3g eV/atom is above the stability threshold %.3g: it would decompose into %s", e, h.Threshold, phases)}}
	case h.MarginSigma != nil && *h.MarginSigma < h.K:
		settle := SettleCalculation
		if h.Tier != messages.TierRelax {
			settle = SettleRelaxation
		}
		st = Stance{Position: messages.PositionUncertain, Confidence: 0.6, Settle: settle, Evidence: []string{
			fmt.Sprintf("E_hull = %.3g eV/atom is %.2gσ below the threshold %.3g (σ = %.3g, %s), less than k = %g σ", e, *h.MarginSigma, h.Threshold, h.Sigma, h.SigmaSource, h.K)}}
	case h.MarginSigma != nil:
		st = Stance{Position: messages.PositionSupport, Confidence: scaleConfidence(*h.MarginSigma, h.K, 0.6, 0.95), Evidence: []string{
			fmt.Sprintf("E_hull = %.3g eV/atom clears the threshold %.3g by %.2gσ (σ = %.3g, %s); competing phases %s", e, h.Threshold, *h.MarginSigma, h.Sigma, h.SigmaSource, phases)}}
	default:
		st = Stance{Position: messages.PositionSupport, Confidence: 0.55, Evidence: []string{
			fmt.Sprintf("E_hull = %.3g eV/atom ≤ the threshold %.3g, against %s; its uncertainty is unknown", e, h.Threshold, phases)}}
	}
	if st.Position != messages.PositionOppose {
		if h.Tier != messages.TierRelax {
			st.Confidence *= 0.85
			st.Evidence = append(st.Evidence, "the energy is the screen's, of the unrelaxed structure")
		} else {
			if h.ScreenedEAboveHull != nil {
				st.Evidence = append(st.Evidence, fmt.Sprintf("relaxed: E_hull %.3g → %.3g eV/atom", *h.ScreenedEAboveHull, e))
			}
			if h.RelaxConverged != nil && !*h.RelaxConverged {
				st.Confidence -= 0.15
				st.Evidence = append(st.Evidence, "the relaxation did not converge")
			}
		}
	}
	var s SensitivityReport
	if ok, why := decode(results, ToolPhaseSensitivity, &s); ok {
		ev := fmt.Sprintf("against the %d reference phases of %s alone E_hull = %.3g eV/atom", s.ReferencePhases, s.System, s.ReferenceEAboveHull)
		if len(s.Phases) > 0 {
			p := s.Phases[0]
			ev += fmt.Sprintf("; without %s it would be %.3g (largest shift %.3g eV/atom)", p.Formula, p.EAboveHullW, s.MaxShift)
		}
		st.Evidence = append(st.Evidence, ev)
	} else {
		st.Evidence = append(st.Evidence, why)
	}
	st.Confidence = clamp(st.Confidence)
	return st
}

func synthesisRules(c *Case, results map[string]messages.ToolCall) Stance {
	t, _ := threshold(c.Spec)
	var r ReactionReport
	st := Stance{}
	if ok, why := decode(results, ToolPrecursorReaction, &r); !ok {
		st = Stance{Position: messages.PositionUncertain, Confidence: 0.3, Evidence: []string{"no precursor route from the hull data: " + why}}
	} else {
		switch {
		case r.ReactionEnergy <= -0.01:
			st = Stance{Position: messages.PositionSupport, Confidence: 0.6 + 0.3*math.Min(1, -r.ReactionEnergy/0.1), Evidence: []string{
				fmt.Sprintf("route %s releases %.3g eV/atom: the candidate is favoured over its precursors", r.Reaction, -r.ReactionEnergy)}}
		case r.ReactionEnergy <= t:
			st = Stance{Position: messages.PositionUncertain, Confidence: 0.5, Evidence: []string{
				fmt.Sprintf("route %s has reaction energy %+.3g eV/atom: barely favoured or metastable against its precursors, so kinetic control is needed", r.Reaction, r.ReactionEnergy)}}
		default:
			st = Stance{Position: messages.PositionOppose, Confidence: 0.7, Evidence: []string{
				fmt.Sprintf("route %s costs %+.3g eV/atom, more than the stability threshold %.3g", r.Reaction, r.ReactionEnergy, t)}}
		}
	}
	var p PhasesReport
	if ok, _ := decode(results, ToolReferencePhases, &p); ok {
		names := make([]string, 0, 6)
		for i, ph := range p.Phases {
			if i == 6 {
				break
			}
			if ph.Elements > 1 {
				names = append(names, ph.Formula)
			}
		}
		st.Evidence = append(st.Evidence, fmt.Sprintf("%d known phases in %s, %d on the hull (%s)", p.Total, p.System, len(p.Phases), strings.Join(names, ", ")))
	}
	var hz HazardReport
	if ok, _ := decode(results, ToolElementHazards, &hz); ok && len(hz.Flags) > 0 {
		els := make([]string, 0, len(hz.Flags))
		for el := range hz.Flags {
			els = append(els, el)
		}
		sort.Strings(els)
		var parts []string
		for _, el := range els {
			parts = append(parts, el+" ("+strings.Join(hz.Flags[el], ", ")+")")
			for _, f := range hz.Flags[el] {
				if f == FlagToxic || f == FlagRadioactive {
					st.Confidence -= 0.1
				}
			}
		}
		st.Evidence = append(st.Evidence, "hazards: "+strings.Join(parts, "; "))
	}
	st.Confidence = clamp(math.Max(st.Confidence, 0.3))
	return st
}

func confidenceRules(c *Case, results map[string]messages.ToolCall) Stance {
	var m MarginsReport
	if ok, why := decode(results, ToolConstraintMargins, &m); !ok {
		return Stance{Position: messages.PositionUncertain, Confidence: 0.3, Evidence: []string{why}, Settle: SettleCalculation}
	}
	var metal MetalReport
	decode(results, ToolMetalClassifier, &metal)
	var opp, unc, sup []string
	minRatio := math.Inf(1)
	for _, x := range m.Margins {
		switch {
		case x.Missing:
			opp = append(opp, x.Property+" has no value")
		case x.Metallic && isGap(x.Property):
			p := ""
			if x.MetalProbability != nil {
				p = fmt.Sprintf(" (P(metal) = %.2g)", *x.MetalProbability)
			}
			opp = append(opp, fmt.Sprintf("a metal by CGCNN's classifier%s for the constraint %s", p, x.Constraint))
		case x.Margin < 0:
			opp = append(opp, fmt.Sprintf("%s = %.3g %s misses %s", x.Property, x.Value, x.Unit, x.Constraint))
		case x.Exact:
			sup = append(sup, fmt.Sprintf("%s = %.3g %s [%s, exact] meets %s", x.Property, x.Value, x.Unit, x.Source, x.Constraint))
		case x.MarginSigma == nil:
			unc = append(unc, fmt.Sprintf("%s = %.3g %s [%s] has no usable uncertainty", x.Property, x.Value, x.Unit, x.Source))
		case !x.ClearsK:
			unc = append(unc, fmt.Sprintf("%s = %.3g %s [%s ± %.3g] is %.2gσ from %s, less than k = %g σ", x.Property, x.Value, x.Unit, x.Source, x.Sigma, *x.MarginSigma, x.Constraint, m.K))
		default:
			minRatio = math.Min(minRatio, *x.MarginSigma)
			sup = append(sup, fmt.Sprintf("%s = %.3g %s [%s ± %.3g] clears %s by %.2gσ", x.Property, x.Value, x.Unit, x.Source, x.Sigma, x.Constraint, *x.MarginSigma))
		}
	}
	if metal.GapTask {
		for _, g := range metal.Gaps {
			if !g.Metallic && g.MetalProbability != nil && *g.MetalProbability >= 0.3 {
				unc = append(unc, fmt.Sprintf("the metal classifier is near its boundary: P(metal) = %.2g for %s", *g.MetalProbability, g.Property))
			}
		}
	}
	switch {
	case len(opp) > 0:
		return Stance{Position: messages.PositionOppose, Confidence: 0.9, Decisive: true, Evidence: append(opp, sup...)}
	case len(unc) > 0:
		return Stance{Position: messages.PositionUncertain, Confidence: 0.55, Settle: SettleCalculation, Evidence: append(unc, sup...)}
	case len(sup) == 0:
		return Stance{Position: messages.PositionUncertain, Confidence: 0.3, Evidence: []string{"the task has no constraints to weigh"}}
	case math.IsInf(minRatio, 1):
		return Stance{Position: messages.PositionSupport, Confidence: 0.95, Evidence: sup}
	}
	return Stance{Position: messages.PositionSupport, Confidence: scaleConfidence(minRatio, m.K, 0.6, 0.95), Evidence: sup}
}

func noveltyRules(c *Case, results map[string]messages.ToolCall) Stance {
	var m MatchReport
	if ok, why := decode(results, ToolStructureMatch, &m); !ok {
		return Stance{Position: messages.PositionUncertain, Confidence: 0.3, Evidence: []string{why}}
	}
	var st Stance
	switch {
	case m.Seed:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.95, Decisive: true, Evidence: []string{m.Formula + " is a seed material the campaign started from"}}
	case m.Class == messages.NoveltyKnownStructure:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.95, Decisive: true, Evidence: []string{fmt.Sprintf("the structure matches the known %s (RMS %.3g): a known compound", m.Match, m.RMS)}}
	case m.Class == messages.NoveltyKnownFormula:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.9, Decisive: true, Evidence: []string{m.Formula + " is in the reference data and no structure of it is held to compare: known by formula"}}
	case m.Class == messages.NoveltyOrderedMixture:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.9, Decisive: true, Evidence: []string{fmt.Sprintf("an ordered mixture of the known phases %s, not a new compound", phaseList(m.EndMembers))}}
	case m.Class == "" && m.KnownFormula:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.8, Decisive: true, Evidence: []string{m.Formula + " is in the reference data (compared by formula)"}}
	case m.Class == "":
		st = Stance{Position: messages.PositionSupport, Confidence: 0.55, Evidence: []string{m.Formula + " is not in the reference data (by formula only: no structures compared)"}}
	case !m.Novel:
		st = Stance{Position: messages.PositionOppose, Confidence: 0.8, Decisive: true, Evidence: []string{m.Formula + " is not novel (class " + m.Class + ")"}}
	case m.Class == messages.NoveltyNewPolymorph:
		st = Stance{Position: messages.PositionSupport, Confidence: 0.7, Evidence: []string{fmt.Sprintf("a new polymorph of %s: matches none of the known %s", m.Formula, strings.Join(m.Polymorphs, ", "))}}
	default:
		st = Stance{Position: messages.PositionSupport, Confidence: 0.85, Evidence: []string{m.Formula + " is new: not in the reference data, matches no known structure, not a mixture of known phases"}}
	}
	var h HistoryReport
	if ok, why := decode(results, ToolCampaignHistory, &h); ok {
		if len(h.SameFormula) > 0 {
			ids := make([]string, len(h.SameFormula))
			for i, p := range h.SameFormula {
				ids[i] = p.ID
			}
			st.Evidence = append(st.Evidence, fmt.Sprintf("the campaign already discovered %s as %s: this is another structure of it", m.Formula, strings.Join(ids, ", ")))
			if st.Position == messages.PositionSupport {
				st.Confidence -= 0.2
			}
		} else {
			st.Evidence = append(st.Evidence, fmt.Sprintf("first of its formula among the campaign's %d discoveries (%d in its chemical system)", h.Discoveries, h.SameSystem))
		}
	} else {
		st.Evidence = append(st.Evidence, why)
	}
	st.Confidence = clamp(st.Confidence)
	return st
}

// phaseList writes "Li2O (0.5) + P2O5 (0.5)", largest first.
func phaseList(d map[string]float64) string { return judge.CompetingPhases(d) }
