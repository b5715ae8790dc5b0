package reflector

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestPlausibility: only what a real reservation could have been is
// restored from a queued request — a trigger the services use, slots
// within the batch, a number within reach of the generations known.
func TestPlausibility(t *testing.T) {
	spec := &messages.CampaignSpec{BatchSize: 4, MaxInFlight: 8}
	check := plausibility(spec, 20, []int{20, 21}, 3, []*messages.Control{{ID: "c-resume-1"}})
	for _, c := range []struct {
		g, slots int
		trigger  string
		ok       bool
	}{
		{22, 4, "after/19", true},
		{22, 4, "refill/21", true},
		{23, 2, "start/3", true},
		{24, 4, "episode2/7", true},
		{25, 4, "c-resume-1/0", true},
		{22, 4, "after/30", false},     // an unknown generation
		{22, 5, "after/19", false},     // more slots than the batch
		{100042, 4, "after/19", false}, // far beyond the known generations
		{22, 4, "forged", false},
		{22, 4, "start/8", false}, // beyond the limit in flight
		{22, 4, "c-other/0", false},
		{22, 4, "episodeX/0", false},
	} {
		if why := check(c.g, c.slots, c.trigger); (why == "") != c.ok {
			t.Errorf("generation %d, %d slots, trigger %q: %q, want plausible %v", c.g, c.slots, c.trigger, why, c.ok)
		}
	}
}
