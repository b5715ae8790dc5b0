package local_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestFloodOfUnknownCampaigns floods the work queues with 2,000
// candidates and 500 generation requests of campaigns that do not exist
// while a real campaign runs, and compares that campaign's throughput
// (evaluations per second of wall time) with a clean run of the same
// campaign on the same stack: the flood must not take it below 80 %, and
// every flooded message must end in DEADLETTER with its reason.
func TestFloodOfUnknownCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the flood test")
	}
	const (
		budget     = 100
		candidates = 2000
		requests   = 500
		campaigns  = 20 // the flood names this many unknown campaigns
	)
	// The oracle costs 40 ms a candidate (a sleep, as a slower surrogate
	// or a remote oracle would): the campaign runs at a few dozen
	// evaluations a second, and what the test measures is whether the
	// flood holds up its pipeline, not how the flood's own handling
	// shares two CPU cores with an oracle that takes none.
	st := start(t, local.Options{Evaluator: evaluator.Config{Delay: 40 * time.Millisecond}})
	ctx := context.Background()
	run := func(id string) *local.Result {
		t.Helper()
		spec := &messages.CampaignSpec{ID: id, Task: easyTask(), Budget: budget, Seed: 11}
		res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 4 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Evaluated != budget {
			t.Fatalf("%s: %d evaluated, budget %d", id, res.Summary.Evaluated, budget)
		}
		return res
	}
	// A first campaign warms the oracle's caches, so that the clean and
	// the flooded run start alike.
	warm := run("warm")
	clean := run("clean")

	// The flood: well-formed messages, each naming an unknown campaign.
	proto := warm.Evaluations[0].Candidate
	var out []bus.Outgoing
	for i := range candidates {
		c := proto
		c.Campaign = fmt.Sprintf("flood-%d", i%campaigns)
		c.ID, c.Generation, c.Index = messages.CandidateID(c.Campaign, i, 0), i, 0
		out = append(out, bus.Outgoing{Subject: messages.Subject(messages.SubjectCandidates, c.Campaign), Message: &c})
	}
	for i := range requests {
		r := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: fmt.Sprintf("flood-%d", i%campaigns),
			Generation: i, Slots: 8, Trigger: "flood", RequestedAt: time.Now().UTC()}
		out = append(out, bus.Outgoing{Subject: messages.Subject(messages.SubjectPropose, r.Campaign), Message: r})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Interleaved, in chunks, while the campaign starts.
		for lo := 0; lo < len(out); lo += 250 {
			chunk := out[lo:min(lo+250, len(out))]
			for i, err := range st.Bus.PublishAll(ctx, chunk) {
				if err != nil {
					t.Errorf("flood %s: %v", chunk[i].Subject, err)
					return
				}
			}
		}
	}()
	flooded := run("flooded")
	wg.Wait()

	rate := func(r *local.Result) float64 { return float64(r.Summary.Evaluated) / r.Summary.WallSeconds }
	ratio := rate(flooded) / rate(clean)
	t.Logf("clean %.1f s (%.2f evaluations/s), flooded %.1f s (%.2f evaluations/s): ratio %.2f",
		clean.Summary.WallSeconds, rate(clean), flooded.Summary.WallSeconds, rate(flooded), ratio)
	if ratio < 0.8 {
		t.Errorf("the flooded campaign ran at %.0f %% of the clean run's throughput, want ≥ 80 %%", 100*ratio)
	}

	flood := func(ls []messages.DeadLetter) (c, r int) {
		for _, l := range ls {
			if !strings.HasPrefix(messages.CampaignOfSubject(l.Subject), "flood-") || !strings.Contains(l.Reason, "unknown campaign") {
				continue
			}
			switch l.Stream {
			case messages.StreamCandidates:
				c++
			case messages.StreamPropose:
				r++
			}
		}
		return c, r
	}
	letters := deadLetters(t, st, 2*time.Minute, func(ls []messages.DeadLetter) bool {
		c, r := flood(ls)
		return c >= candidates && r >= requests
	})
	c, r := flood(letters)
	t.Logf("dead letters: %d of %d flooded candidates, %d of %d flooded generation requests", c, candidates, r, requests)
	if c != candidates || r != requests {
		t.Errorf("dead letters for %d candidates and %d requests, want %d and %d", c, r, candidates, requests)
	}
}
