package debate

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// RulesJudge rules on a debate from its last round, grounded in the
// roles' tool evidence (stances):
//
//  1. reject when a role's evidence is decisive against the candidate (a
//     known compound or a mixture of known phases, a missed bound or a
//     metal for a gap task, unstable or implausibly far below the hull) —
//     whatever a model argued — or when a role opposes at the end;
//  2. else needs-relaxation / needs-calculation when thermodynamics is
//     uncertain (relaxation for a screened energy, a calculation for a
//     relaxed one), needs-calculation when property confidence is;
//  3. else discovery.
//
// Its confidence is the mean confidence of the last round's roles whose
// position agrees with the verdict (oppose for reject, uncertain for the
// needs-*, support for discovery), times (1 + agreement)/2.
func RulesJudge(c *Case, d *messages.Debate, stances map[string]Stance) Ruling {
	last := d.Rounds[len(d.Rounds)-1]
	final := map[string]messages.RolePosition{}
	for _, p := range last.Positions {
		final[p.Role] = p
	}
	var r Ruling
	for _, role := range d.Roles {
		st, p := stances[role], final[role]
		switch {
		case st.Decisive && st.Position == messages.PositionOppose:
			r.Reasons = append(r.Reasons, role+": "+first(st.Evidence))
		case p.Position == messages.PositionOppose && p.Confidence >= 0.5:
			r.Reasons = append(r.Reasons, role+": "+first(p.Evidence))
		}
	}
	want := messages.PositionSupport
	switch {
	case len(r.Reasons) > 0:
		r.Verdict, want = messages.DebateReject, messages.PositionOppose
	case final[messages.RoleThermodynamics].Position == messages.PositionUncertain:
		r.Verdict, want = messages.DebateNeedsCalculation, messages.PositionUncertain
		if stances[messages.RoleThermodynamics].Settle == SettleRelaxation {
			r.Verdict = messages.DebateNeedsRelaxation
		}
		r.Reasons = []string{messages.RoleThermodynamics + ": " + first(final[messages.RoleThermodynamics].Evidence)}
	case final[messages.RoleConfidence].Position == messages.PositionUncertain:
		r.Verdict, want = messages.DebateNeedsCalculation, messages.PositionUncertain
		r.Reasons = []string{messages.RoleConfidence + ": " + first(final[messages.RoleConfidence].Evidence)}
	default:
		r.Verdict = messages.DebateDiscovery
	}
	sum, n := 0.0, 0
	for _, p := range last.Positions {
		if p.Position == want {
			sum += p.Confidence
			n++
		}
	}
	if n == 0 {
		sum, n = 0.5, 1
	}
	r.Confidence = math.Round(sum/float64(n)*(1+last.Agreement)/2*1000) / 1000
	r.Rationale = rationale(c, d, r, final)
	return r
}

// groundRuling keeps a model judge's ruling within the tools' evidence:
// a decisive fact against the candidate stands whatever the model says,
// and a verdict the model cannot name is the rules'.
func groundRuling(model, rules Ruling, stances map[string]Stance) Ruling {
	if !slices.Contains(messages.DebateVerdicts, model.Verdict) {
		return rules
	}
	if rules.Verdict == messages.DebateReject && model.Verdict != messages.DebateReject {
		for _, st := range stances {
			if st.Decisive && st.Position == messages.PositionOppose {
				rules.Rationale = "The model judge ruled " + model.Verdict + ", overruled by decisive tool evidence. " + rules.Rationale
				return rules
			}
		}
	}
	if !(model.Confidence >= 0 && model.Confidence <= 1) {
		model.Confidence = rules.Confidence
	}
	if model.Rationale == "" {
		model.Rationale = rules.Rationale
	}
	if model.Verdict != messages.DebateDiscovery && len(model.Reasons) == 0 {
		model.Reasons = rules.Reasons
		if len(model.Reasons) == 0 {
			model.Reasons = []string{"the model judge ruled " + model.Verdict}
		}
	}
	return model
}

func first(ev []string) string {
	if len(ev) == 0 {
		return "no evidence given"
	}
	return ev[0]
}

func rationale(c *Case, d *messages.Debate, r Ruling, final map[string]messages.RolePosition) string {
	ev := c.Evaluation
	var b strings.Builder
	f := ev.Candidate.Formula
	fmt.Fprintf(&b, "After %d round(s) (agreement %.2f", len(d.Rounds), d.Rounds[len(d.Rounds)-1].Agreement)
	if d.Converged {
		b.WriteString(", settled")
	}
	fmt.Fprintf(&b, ") the judge rules %s a %s. ", f, r.Verdict)
	switch r.Verdict {
	case messages.DebateReject:
		b.WriteString("It is rejected because " + strings.Join(r.Reasons, "; ") + ".")
	case messages.DebateNeedsRelaxation:
		b.WriteString("Its stability is within the screen's error of the threshold: " + first(final[messages.RoleThermodynamics].Evidence) + "; relaxing it decides.")
	case messages.DebateNeedsCalculation:
		b.WriteString("The evidence is within the calibrated error of a bound: " + strings.Join(r.Reasons, "; ") + "; a first-principles calculation decides.")
	default:
		b.WriteString("Thermodynamics: " + first(final[messages.RoleThermodynamics].Evidence) + ". ")
		b.WriteString("Properties: " + first(final[messages.RoleConfidence].Evidence) + ". ")
		b.WriteString("Novelty: " + first(final[messages.RoleNovelty].Evidence) + ". ")
		b.WriteString("Synthesis: " + first(final[messages.RoleSynthesis].Evidence) + ".")
	}
	return b.String()
}

// report writes the judge's report from the ruling and the tools'
// results.
func report(c *Case, d *messages.Debate, r Ruling, results map[string]map[string]messages.ToolCall) messages.DebateReport {
	rep := messages.DebateReport{Rationale: r.Rationale}
	last := d.Rounds[len(d.Rounds)-1]
	for _, p := range last.Positions {
		s := p.Argument
		if s == "" {
			s = first(p.Evidence)
		}
		if p.Fallback != "" {
			s += " (rules stood in for the model: " + p.Fallback + ")"
		}
		rep.Roles = append(rep.Roles, messages.RoleSummary{Role: p.Role, Position: p.Position, Confidence: p.Confidence, Summary: s})
	}
	all := map[string]messages.ToolCall{}
	for _, rs := range results {
		for k, v := range rs {
			all[k] = v
		}
	}
	var h HullReport
	hullOK, _ := decode(all, ToolEnergyAboveHull, &h)
	if hullOK && h.EAboveHull != nil {
		rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: "e_above_hull", Value: *h.EAboveHull, Unit: "eV/atom"},
			messages.KeyNumber{Name: "stability_threshold", Value: h.Threshold, Unit: "eV/atom"})
		if h.Sigma > 0 {
			rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: "e_above_hull_sigma", Value: h.Sigma, Unit: "eV/atom"})
		}
		if h.MarginSigma != nil {
			rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: "stability_margin_sigma", Value: *h.MarginSigma})
		}
	}
	var s SensitivityReport
	sensOK, _ := decode(all, ToolPhaseSensitivity, &s)
	if sensOK {
		rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: "reference_e_above_hull", Value: s.ReferenceEAboveHull, Unit: "eV/atom"},
			messages.KeyNumber{Name: "phase_set_max_shift", Value: s.MaxShift, Unit: "eV/atom"})
	}
	var m MarginsReport
	if ok, _ := decode(all, ToolConstraintMargins, &m); ok {
		for _, x := range m.Margins {
			if x.MarginSigma != nil {
				rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: x.Property + "_margin_sigma", Value: *x.MarginSigma})
			} else if !x.Missing {
				rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: x.Property + "_margin", Value: x.Margin, Unit: x.Unit})
			}
			if x.MetalProbability != nil {
				rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: x.Property + "_p_metal", Value: *x.MetalProbability})
			}
		}
	}
	var rx ReactionReport
	if ok, _ := decode(all, ToolPrecursorReaction, &rx); ok {
		route := &messages.SynthesisRoute{Reaction: rx.Reaction, ReactionEnergy: rx.ReactionEnergy}
		for _, p := range rx.Precursors {
			route.Precursors = append(route.Precursors, p.Formula)
		}
		var hz HazardReport
		if ok, _ := decode(all, ToolElementHazards, &hz); ok {
			for _, el := range sortedKeys(hz.Flags) {
				route.Flags = append(route.Flags, el+": "+strings.Join(hz.Flags[el], ", "))
			}
		}
		rep.Synthesis = route
		rep.KeyNumbers = append(rep.KeyNumbers, messages.KeyNumber{Name: "reaction_energy", Value: rx.ReactionEnergy, Unit: "eV/atom"})
	}
	rep.NextCalculation = nextCalculation(c, r, h, hullOK, s, sensOK, m)
	return rep
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// nextCalculation says what a human should run next.
func nextCalculation(c *Case, r Ruling, h HullReport, hullOK bool, s SensitivityReport, sensOK bool, m MarginsReport) string {
	competing := ""
	if hullOK && h.EAboveHull != nil && len(h.Decomposition) > 0 {
		competing = fmt.Sprintf("; competing phases %s, E_hull %.0f meV/atom against them", phaseList(h.Decomposition), *h.EAboveHull*1000)
	}
	if sensOK && hullOK && h.EAboveHull != nil && math.Abs(s.ReferenceEAboveHull-*h.EAboveHull) > 0.005 {
		competing += fmt.Sprintf(" (%.0f meV/atom against the reference phases alone)", s.ReferenceEAboveHull*1000)
	}
	var props []string
	for _, x := range m.Margins {
		if !x.Exact && !x.Missing {
			props = append(props, x.Property)
		}
	}
	propText := ""
	if len(props) > 0 {
		propText = "; compute " + strings.Join(props, ", ") + " from first principles (HSE for a band gap)"
	}
	switch r.Verdict {
	case messages.DebateReject:
		return "None: rejected (" + r.Reasons[0] + ")."
	case messages.DebateNeedsRelaxation:
		return "Relax the structure (the relax tier: M3GNet, FIRE with a cell filter) and judge it again" + competing + "."
	case messages.DebateNeedsCalculation:
		return "DFT relaxation (PBE, Materials Project-compatible settings) to settle E_hull against the threshold" + competing + propText + "."
	}
	return "DFT relaxation and phonons to confirm thermodynamic and dynamical stability" + competing + propText + "."
}

// ResultOf decodes a recorded tool call of a debate (the first found in
// its rounds) into v.
func ResultOf(d *messages.Debate, tool string, v any) bool {
	for _, r := range d.Rounds {
		for _, p := range r.Positions {
			for _, tc := range p.ToolCalls {
				if tc.Tool == tool && tc.Error == "" {
					return json.Unmarshal(tc.Result, v) == nil
				}
			}
		}
	}
	return false
}
