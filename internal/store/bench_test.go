package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// BenchmarkRecordGeneration records what one generation of 8 candidates
// costs the store: reserving it, recording the proposal, and recording
// its evaluations in one batch (as the reflector does), on the embedded
// Redis-protocol server (or the real one when CRUCIBLE_TEST_REDIS_URL is
// set). The figure per evaluation is ns/op ÷ 8.
func BenchmarkRecordGeneration(b *testing.B) {
	s := open(b)
	ctx := context.Background()
	const slots = 8
	sp := &messages.CampaignSpec{ID: "bench", Budget: 1 << 30, BatchSize: slots, Episodes: 1, SubmittedAt: time.Now()}
	sp.ApplyDefaults()
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		b.Fatal(err)
	}
	formulas := []string{"GaN", "AlN", "ZnO", "MgO", "SiC", "BN", "InN", "CdS"}
	b.ResetTimer()
	for k := range b.N {
		g, ok, err := s.RequestGeneration(ctx, "bench", fmt.Sprintf("start/%d", k))
		if err != nil || !ok {
			b.Fatalf("request: %v %v", ok, err)
		}
		cs := make([]*messages.Candidate, slots)
		for i := range cs {
			cs[i] = candidate("bench", g.Generation, i, fmt.Sprintf("fp%d-%d", k, i))
			cs[i].Island = k % 5
		}
		if _, err := s.RecordProposal(ctx, "bench", &Proposal{Generation: g.Generation, Island: k % 5, Candidates: cs}); err != nil {
			b.Fatal(err)
		}
		recs := make([]*EvaluationRecord, slots)
		for i, c := range cs {
			r := evaluation(c, 0, float64((k*7+i)%11)/10, i%2 == 0)
			r.Formula = fmt.Sprintf("%s%d", formulas[i], k%50)
			e := 0.01 * float64(i)
			r.EAboveHull, r.Stable, r.Novel = &e, i%3 == 0, true
			if r.Feasible {
				r.Hit = &HitDoc{Formula: r.Formula, Score: r.Score}
			}
			recs[i] = r
		}
		if _, err := s.RecordEvaluations(ctx, "bench", recs); err != nil {
			b.Fatal(err)
		}
	}
}
