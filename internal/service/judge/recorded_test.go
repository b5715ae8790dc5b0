package judge

import (
	"context"
	"testing"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// recordEvaluations records evaluations as the reflector would before
// the judge sees them (their message digests), so that the judge, which
// judges only evaluations of recorded candidates, takes them.
func recordEvaluations(t *testing.T, s *store.Store, evs ...*messages.Evaluation) {
	t.Helper()
	for _, ev := range evs {
		data, err := messages.Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		r := &store.EvaluationRecord{ID: ev.ID, Generation: ev.Candidate.Generation, Island: ev.Candidate.Island,
			Formula: ev.Candidate.Formula, PoolSize: 1, Digest: messages.DigestBytes(data)}
		if _, err := s.RecordEvaluation(context.Background(), ev.Campaign, r); err != nil {
			t.Fatal(err)
		}
	}
}
