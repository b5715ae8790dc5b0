package reflector

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// The oracle predicts structures invalid by their chemistry; their energy
// above the hull stays with the evaluation's member but out of the
// campaign's E_hull statistics. No evaluation is a find by itself: the
// judge's accepted ones are (store.FindOf).
func TestRecordKeepsEnergyStatisticsToValid(t *testing.T) {
	spec := &messages.CampaignSpec{ID: "c", PoolSize: 10}
	zero := 0.0
	props := map[string]messages.PropertyValue{"formation_energy_per_atom": {Value: -2}}
	for _, valid := range []bool{true, false} {
		ev := &messages.Evaluation{ID: "c-g0-c0", Campaign: "c", Candidate: messages.Candidate{ID: "c-g0-c0", Formula: "MgF"},
			Valid: valid, EAboveHull: &zero, Properties: props}
		r := Record(ev, spec)
		if (r.EAboveHull != nil) != valid || r.Find != nil {
			t.Errorf("valid %v: record E_hull %v, find %v", valid, r.EAboveHull, r.Find)
		}
		if r.Member.EAboveHull == nil || r.Member.Properties["formation_energy_per_atom"] != -2 {
			t.Errorf("valid %v: member %+v lost the prediction", valid, r.Member)
		}
	}
}
