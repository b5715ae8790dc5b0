package discovery

import (
	"cmp"
	"slices"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// CurveOf derives a campaign's discovery curve from its evaluations when
// the store's is not at hand (a local run's folder): the 1-based indices,
// among the proposed candidates in the order they were evaluated, of the
// novel candidates within the stability threshold of the hull, the
// definition the reflector records (MADE §4.4, N_stable). Seeds are left
// out. The evaluations are ordered by evaluation time, then id; the
// reflector records them in delivery order, so two evaluations finished
// in the same instant by different evaluators may swap places, which
// moves a curve step by one query at most.
func CurveOf(evs []*messages.Evaluation) []int {
	ordered := inEvaluationOrder(evs)
	var out []int
	for i, ev := range ordered {
		if ev.Novel && ev.Stable {
			out = append(out, i+1)
		}
	}
	return out
}

// RatePoint is a campaign's cumulative hit and stability rates (LLEMA
// §3.2) after its first Evaluated proposed candidates.
type RatePoint struct {
	Evaluated     int     `json:"evaluated"`
	HitRate       float64 `json:"hit_rate"`
	StabilityRate float64 `json:"stability_rate"`
}

// RatesOf returns the cumulative hit rate (hits / evaluated) and
// stability rate (stable hits / evaluated) after each of the proposed
// candidates of evs in evaluation order (as CurveOf orders them), thinned
// to at most maxPoints evenly spaced points, the last always kept (0 =
// every point).
func RatesOf(evs []*messages.Evaluation, maxPoints int) []RatePoint {
	ordered := inEvaluationOrder(evs)
	n := len(ordered)
	step := 1
	if maxPoints > 0 && n > maxPoints {
		step = (n + maxPoints - 1) / maxPoints
	}
	var out []RatePoint
	hits, stableHits := 0, 0
	for i, ev := range ordered {
		if ev.Feasible {
			hits++
			if ev.Stable {
				stableHits++
			}
		}
		if (i+1)%step == 0 || i == n-1 {
			out = append(out, RatePoint{Evaluated: i + 1, HitRate: Rate(hits, i+1), StabilityRate: Rate(stableHits, i+1)})
		}
	}
	return out
}

// inEvaluationOrder returns the proposed candidates' evaluations of evs
// (seeds left out) by evaluation time, then id.
func inEvaluationOrder(evs []*messages.Evaluation) []*messages.Evaluation {
	ordered := make([]*messages.Evaluation, 0, len(evs))
	for _, ev := range evs {
		if !ev.Candidate.Seed {
			ordered = append(ordered, ev)
		}
	}
	slices.SortStableFunc(ordered, func(a, b *messages.Evaluation) int {
		return cmp.Or(a.EvaluatedAt.Compare(b.EvaluatedAt), cmp.Compare(a.ID, b.ID))
	})
	return ordered
}
