package store

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestFindOf: only an accepted, valid candidate on or below the hull, not a
// hull outlier, joins the campaign's hull, with its formation energy.
func TestFindOf(t *testing.T) {
	e := func(x float64) *float64 { return &x }
	base := func() *messages.Evaluation {
		return &messages.Evaluation{ID: "c-g1-c0", Campaign: "c", Valid: true, EAboveHull: e(-0.02),
			Candidate:  messages.Candidate{ID: "c-g1-c0", Formula: "NaPrCl4"},
			Properties: map[string]messages.PropertyValue{"formation_energy_per_atom": {Value: -2.5}}}
	}
	f := FindOf(base(), true)
	if f == nil || f.ID != "c-g1-c0" || f.Formula != "NaPrCl4" || f.EnergyPerAtom != -2.5 {
		t.Fatalf("accepted below the hull: find %+v", f)
	}
	for name, edit := range map[string]func(*messages.Evaluation) bool{
		"rejected":             func(*messages.Evaluation) bool { return false },
		"above the hull":       func(ev *messages.Evaluation) bool { ev.EAboveHull = e(0.05); return true },
		"hull outlier":         func(ev *messages.Evaluation) bool { ev.EAboveHull, ev.HullOutlier = e(-0.4), true; return true },
		"invalid":              func(ev *messages.Evaluation) bool { ev.Valid = false; return true },
		"no formation energy":  func(ev *messages.Evaluation) bool { ev.Properties = nil; return true },
		"no energy above hull": func(ev *messages.Evaluation) bool { ev.EAboveHull = nil; return true },
	} {
		ev := base()
		accepted := edit(ev)
		if f := FindOf(ev, accepted); f != nil {
			t.Errorf("%s: find %+v, want none", name, f)
		}
	}
}
