// Package judge decides whether a feasible, stable evaluation is a
// discovery. Like the judge of Materealize's thinking mode (Materealize
// §"thinking mode", Extended Data Fig. 4), it weighs evidence from tools,
// not opinions: each argument is a check grounded in a number the oracle
// computed — validity of the structure, the constraint margins, the energy
// above the convex hull and its competing phases, the surrogate's error
// against the constraint margin, and the reference data — and the verdict
// consolidates them into a short structured report.
//
// Judge is pure: no broker, no clock (the caller passes the time), no
// randomness. The judge service decodes an evaluation, calls Judge and
// publishes the verdict.
package judge

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Check names, in the order a verdict lists them.
const (
	CheckValidity       = "validity"
	CheckConstraints    = "constraints"
	CheckTaskRules      = "task_rules"
	CheckThermodynamics = "thermodynamics"
	CheckConfidence     = "property_confidence"
	CheckNovelty        = "novelty"
	// CheckInput fails a verdict on a missing evaluation.
	CheckInput = "input"
)

// Defaults of Options.
const (
	// DefaultConfidenceK asks a surrogate value to clear its bound by one
	// standard error (the surrogate's test MAE).
	DefaultConfidenceK = 1.0
	// DefaultSuspiciousBelowHull is 0.15 eV/atom, the evaluator's and the
	// judge's bound on how far below the hull a surrogate energy may lie
	// (Evaluation.HullOutlier) where no calibration of the energy above
	// hull exists (see OutlierBound): no calibration file, or a tier that
	// has none. It is about four times the test MAE of the CGCNN
	// formation-energy checkpoint (0.039 eV/atom, Xie & Grossman, PRL
	// 120, 145301, 2018). The hull of a chemical system is built from
	// Materials Project ground states; a new phase that lies several
	// surrogate errors below it is far more often a surrogate error than a
	// new ground state (MADE counts phases within 0.1 eV/atom *above* the
	// hull as stable; a discovery that much below the hull would overturn
	// the known phase diagram).
	DefaultSuspiciousBelowHull = 0.15
)

// Options tune the judge. The zero value is the default.
type Options struct {
	// ConfidenceK: a surrogate property's margin from its bound must be at
	// least K × the surrogate's uncertainty (its test MAE, in the
	// property's unit). Zero, a negative or a NaN value means
	// DefaultConfidenceK.
	ConfidenceK float64
	// SuspiciousBelowHull (eV/atom): an energy above hull below
	// −SuspiciousBelowHull is rejected as more likely a surrogate error
	// than a discovery, where the evaluation carries no calibrated error
	// of its energy above hull (else the calibrated 95 % quantile is the
	// bound: OutlierBound). Zero, a negative or a NaN value means
	// DefaultSuspiciousBelowHull; +Inf disables the uncalibrated check.
	SuspiciousBelowHull float64
}

func (o Options) withDefaults() Options {
	if !(o.ConfidenceK > 0) {
		o.ConfidenceK = DefaultConfidenceK
	}
	if !(o.SuspiciousBelowHull > 0) {
		o.SuspiciousBelowHull = DefaultSuspiciousBelowHull
	}
	return o
}

// OutlierBound is how far below the hull of the known phases (eV/atom) an
// energy above hull may lie before it is more likely the surrogate's
// error than a new ground state: the 95 % quantile of its calibrated
// absolute error (that of the tier's formation energy, measured on known
// compounds built as candidates are; pkg/calibrate), or fallback where
// the energy carries no calibration. calibrated says which.
func OutlierBound(c *messages.Calibrated, fallback float64) (bound float64, calibrated bool) {
	if c != nil && c.Q95 > 0 && !math.IsInf(c.Q95, 0) {
		return c.Q95, true
	}
	return fallback, false
}

// outcome is one check with the short reason a rejection quotes and the
// phrase the report's summary line uses.
type outcome struct {
	check   messages.Check
	reason  string // non-empty when the check failed
	summary string
}

func pass(name, detail, summary string) outcome {
	return outcome{check: messages.Check{Name: name, Passed: true, Detail: detail}, summary: summary}
}

func fail(name, detail, reason string) outcome {
	return outcome{check: messages.Check{Name: name, Detail: detail}, reason: reason, summary: reason}
}

// Judge decides whether ev is a discovery for the campaign spec. It runs
// six checks, each a messages.Check whose detail quotes the numbers and
// where they come from:
//
//  1. validity: the structure passed the oracle's validity checks;
//  2. constraints: the evaluation is feasible — every constraint of the
//     task has a margin Φ ≥ 0 (LLEMA App. B.2) and no property is missing
//     or unsupported;
//  3. task rules: the candidate's structure obeys the task's element,
//     formula, anion and structure-family rules (task.Task.Violations),
//     checked again on the structure itself;
//  4. thermodynamics: the energy above hull is known, at most the
//     campaign's stability threshold (less k calibrated standard errors
//     when the evaluation carries a calibration), and not further below
//     the hull than OutlierBound (the calibrated 95 % quantile of its
//     error, else Options.SuspiciousBelowHull);
//     the competing phases (the decomposition at the candidate's
//     composition) are named;
//  5. property confidence: every constrained property that comes from a
//     surrogate clears its bound by at least k·σ, σ its calibrated
//     standard error where the evaluation carries one, else the
//     surrogate's published MAE (see ConfidenceMargin), k the larger of
//     the campaign's confidence_k and Options.ConfidenceK;
//     reference and structure values are exact;
//     a value's tie spread adds to σ;
//  6. novelty: the candidate is not a seed, its structure matches no
//     known structure (and its formula is in the reference data only if
//     structures of it are held to compare with: a new polymorph), and it
//     is not an ordered mixture of known phases (Evaluation.Novelty; by
//     formula alone when the evaluation has no novelty class); the
//     proposer keeps repeats of earlier candidates out.
//
// The verdict is accepted iff every check passes; Reasons are the failed
// checks' short reasons; Report is the judge's report in words. For any
// ev that passes ev.Validate() the verdict passes Verdict.Validate(). A nil
// ev gives a rejected verdict with a single failed input check; a nil spec
// (or one without stability threshold) is judged with the default
// threshold, and its property-confidence check fails for want of the
// task's constraints.
func Judge(spec *messages.CampaignSpec, ev *messages.Evaluation, o Options, now time.Time) messages.Verdict {
	o = o.withDefaults()
	v := messages.Verdict{Schema: messages.SchemaVersion, JudgedAt: now}
	if ev == nil {
		out := fail(CheckInput, "no evaluation to judge", "no evaluation")
		v.Checks = []messages.Check{out.check}
		v.Reasons = []string{out.reason}
		v.Report = "Verdict: REJECTED — there is no evaluation to judge."
		return v
	}
	v.ID, v.Campaign, v.Formula = ev.ID, ev.Campaign, formulaOf(ev)
	v.Evaluation = *ev

	var sp messages.CampaignSpec
	if spec != nil {
		sp = *spec
	}
	threshold := sp.StabilityThreshold
	if !(threshold > 0) || math.IsInf(threshold, 0) {
		threshold = messages.DefaultStabilityThreshold
	}

	// The larger of the campaign's k and the judge's: the judge never
	// asks less than the campaign's screen did, and may ask more.
	k := max(o.ConfidenceK, sp.ConfidenceK)
	outcomes := []outcome{
		checkValidity(ev),
		checkConstraints(&sp.Task, ev),
		checkTaskRules(&sp.Task, ev),
		checkThermodynamics(ev, threshold, o.SuspiciousBelowHull, k),
		checkConfidence(spec, ev, k),
		checkNovelty(ev),
	}
	v.Accepted = true
	for _, out := range outcomes {
		v.Checks = append(v.Checks, out.check)
		if !out.check.Passed {
			v.Accepted = false
			v.Reasons = append(v.Reasons, out.reason)
		}
	}
	v.Report = report(&sp, ev, v.Formula, outcomes, v.Accepted)
	return v
}

// formulaOf is the candidate's reduced formula, from its structure when
// the candidate does not name it.
func formulaOf(ev *messages.Evaluation) string {
	if ev.Candidate.Formula != "" {
		return ev.Candidate.Formula
	}
	return ev.Candidate.Structure.Formula
}

// report writes the judge's consolidated report: a summary line, the
// evidence of each check, and the verdict.
func report(spec *messages.CampaignSpec, ev *messages.Evaluation, formula string, outcomes []outcome, accepted bool) string {
	var b strings.Builder
	b.WriteString("Judge's report on " + formula + " (" + ev.ID + ")")
	if spec.Task.Name != "" {
		b.WriteString(", task \"" + spec.Task.Name + "\"")
	}
	b.WriteString(".\n")
	var phrases []string
	passed := 0
	for _, out := range outcomes {
		if out.check.Passed {
			passed++
		}
		if accepted || !out.check.Passed {
			phrases = append(phrases, out.summary)
		}
	}
	if accepted {
		b.WriteString("Summary: a discovery — " + strings.Join(phrases, "; ") + ".\n")
	} else {
		b.WriteString("Summary: not a discovery — " + strings.Join(phrases, "; ") + ".\n")
	}
	b.WriteString("Evidence:\n")
	for _, out := range outcomes {
		mark := "fail"
		if out.check.Passed {
			mark = "pass"
		}
		b.WriteString("  [" + mark + "] " + out.check.Name + ": " + out.check.Detail + "\n")
	}
	verdict := "REJECTED"
	if accepted {
		verdict = "ACCEPTED"
	}
	fmt.Fprintf(&b, "Verdict: %s (%d of %d checks passed).", verdict, passed, len(outcomes))
	return b.String()
}
