package evaluator

import (
	"math"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// PassesScreen reports whether a relax campaign relaxes a candidate after
// its screened evaluation (spec.Screen): a valid proposed candidate within
// the task's element, formula and anion rules (relaxation changes none),
// with a screened
// energy above the hull of at most Screen.MaxEAboveHull, and every
// constraint within reach: its screened value misses the bound by at most
// Screen.ErrorMultiple times the value's error (its uncertainty plus its
// tie spread; for e_above_hull the formation energy's). A property
// without a screened value fails the screen.
func PassesScreen(spec *messages.CampaignSpec, ev *messages.Evaluation) bool {
	if !ev.Valid || ev.Candidate.Seed || ev.EAboveHull == nil || *ev.EAboveHull > spec.Screen.MaxEAboveHull {
		return false
	}
	for _, r := range ev.Reasons {
		if r.Code == reasonElementRule || r.Code == task.RuleFormula || r.Code == task.RuleAnions {
			return false
		}
	}
	m := spec.Screen.Multiple()
	for i, k := range spec.Task.Constraints {
		if i >= len(ev.Margins) || ev.Margins[i].Missing {
			return false
		}
		v := ev.Margins[i].Value
		name := k.Property
		if name == "e_above_hull" {
			name = "formation_energy_per_atom"
		}
		pv := ev.Properties[name]
		slack := m * (pv.Uncertainty + pv.TieSpread)
		if math.IsNaN(slack) || math.IsInf(slack, 0) {
			slack = 0
		}
		lo, hi := k.Bounds()
		if v+slack < lo || v-slack > hi {
			return false
		}
	}
	return true
}
