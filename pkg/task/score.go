package task

import (
	"fmt"
	"math"
)

// Lookup returns a candidate's value of a property by canonical name; ok is
// false when the candidate has no value for it.
type Lookup func(property string) (value float64, ok bool)

// Values is a property map; its Lookup method is a Lookup.
type Values map[string]float64

// Lookup returns v[property].
func (v Values) Lookup(property string) (float64, bool) {
	x, ok := v[property]
	return x, ok
}

// Clip is LLEMA's clip(z, −1, 1) = max(−1, min(1, z)) (App. B.2). NaN maps
// to −1, the worst margin.
func Clip(z float64) float64 {
	switch {
	case z != z: // NaN
		return -1
	case z < -1:
		return -1
	case z > 1:
		return 1
	}
	return z
}

// Margin is LLEMA's normalised reward Φ of the value f (App. B.2), a signed
// margin clipped to [−1, 1] that is ≥ 0 exactly when f meets the bound:
//
//	lower    f ≥ l:      Φ = clip((f − l) / max(|l|, 1))
//	upper    f ≤ u:      Φ = clip((u − f) / max(|u|, 1))
//	interval l ≤ f ≤ u:  Φ = clip(min(f − l, u − f) / max(|u − l|, 1))
//
// The max(·, 1) keeps bounds at or near zero from blowing the margin up
// (Formation energy ≤ 0 divides by 1). An interval margin peaks at the
// centre, at (u − l)/2 / max(u − l, 1) ≤ 1/2. A NaN value, and a constraint
// of unknown kind, give −1.
func (c Constraint) Margin(f float64) float64 {
	l, u := c.Bounds()
	switch c.Kind {
	case Lower:
		return Clip((f - l) / math.Max(math.Abs(l), 1))
	case Upper:
		return Clip((u - f) / math.Max(math.Abs(u), 1))
	case Interval:
		return Clip(math.Min(f-l, u-f) / math.Max(math.Abs(u-l), 1))
	}
	return -1
}

// Evaluation is a candidate scored against a task.
type Evaluation struct {
	// Margins are Φ_i, in the order of the task's constraints; −1 for a
	// property without a value.
	Margins []float64 `json:"margins"`
	// Score is S = Σ w_i Φ_i / Σ w_i, in [−1, 1] (see Task.Evaluate).
	Score float64 `json:"score"`
	// Feasible is true iff every Φ_i ≥ 0 (LLEMA App. B.2): a hit.
	Feasible bool `json:"feasible"`
	// Missing lists the constrained properties without a finite value.
	Missing []string `json:"missing,omitempty"`
	// Reasons say, one per unmet constraint, why the candidate is not
	// feasible.
	Reasons []string `json:"reasons,omitempty"`
}

// Evaluate scores a candidate whose property values props returns. It
// computes each constraint's margin Φ_i (Constraint.Margin) and the score
//
//	S = Σ_i w_i Φ_i / Σ_i w_i,
//
// LLEMA's S = Σ w_i Φ_i (Eq. 4, App. B.2) with the weights normalised to
// sum to 1: with the default equal weights each w_i is 1/k, and S, like
// every Φ_i, lies in [−1, 1] whatever the number of constraints. The
// candidate is feasible iff every Φ_i ≥ 0. A property without a value (or
// with a NaN or infinite one) gets Φ = −1, is listed in Missing and makes
// the candidate infeasible, with a reason; it never panics. Element rules
// are a separate check (ElementRules.Check), as is stability (the
// campaign's energy-above-hull threshold).
func (t Task) Evaluate(props Lookup) Evaluation {
	var e Evaluation
	t.EvaluateInto(&e, props)
	return e
}

// EvaluateInto is Evaluate writing into e and reusing its slices: once they
// have the capacity, scoring a feasible candidate allocates nothing (a
// reason is formatted only for an unmet constraint).
func (t Task) EvaluateInto(e *Evaluation, props Lookup) {
	e.Margins = e.Margins[:0]
	e.Missing = e.Missing[:0]
	e.Reasons = e.Reasons[:0]
	e.Feasible = true
	var sum, wsum float64
	for _, c := range t.Constraints {
		w := c.EffectiveWeight()
		f, ok := props(c.Property)
		var phi float64
		switch {
		case !ok:
			phi = -1
			e.Missing = append(e.Missing, c.Property)
			e.Reasons = append(e.Reasons, c.Property+": "+noValueReason(c.Property))
		case math.IsNaN(f) || math.IsInf(f, 0):
			phi = -1
			e.Missing = append(e.Missing, c.Property)
			e.Reasons = append(e.Reasons, fmt.Sprintf("%s: value %v is not finite", c.Property, f))
		default:
			phi = c.Margin(f)
			if phi < 0 {
				e.Reasons = append(e.Reasons, fmt.Sprintf("%s = %s does not meet %s (Φ = %.3g)", c.Property, formatValue(c.Property, f), c.String(), phi))
			}
		}
		if phi < 0 {
			e.Feasible = false
		}
		e.Margins = append(e.Margins, phi)
		sum += w * phi
		wsum += w
	}
	e.Score = 0
	if wsum > 0 {
		e.Score = sum / wsum
	}
	if len(t.Constraints) == 0 {
		// Nothing to meet is not a hit: Validate rejects such a task.
		e.Feasible = false
	}
}

// noValueReason explains a missing value by the property's support.
func noValueReason(name string) string {
	p, ok := canonicalProperty(name)
	if !ok {
		return "no value (unknown property)"
	}
	switch p.Support {
	case SupportReference:
		return "no value (known only for compounds in the reference table)"
	case SupportUnsupported:
		return "no value (no oracle in Crucible provides it)"
	}
	return "no value"
}

func formatValue(name string, f float64) string {
	s := fmt.Sprintf("%.4g", f)
	if p, ok := canonicalProperty(name); ok && p.Unit != "" {
		s += " " + p.Unit
	}
	return s
}
