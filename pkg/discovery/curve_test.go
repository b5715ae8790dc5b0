package discovery

import (
	"reflect"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestCurveAndRatesOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(id string, sec int, seed, feasible, stable, novel bool) *messages.Evaluation {
		return &messages.Evaluation{ID: id, Candidate: messages.Candidate{ID: id, Seed: seed},
			Feasible: feasible, Stable: stable, Novel: novel, EvaluatedAt: t0.Add(time.Duration(sec) * time.Second)}
	}
	// Listed out of evaluation order; the seed counts nowhere.
	evs := []*messages.Evaluation{
		ev("c", 3, false, true, true, true),   // 3rd: stable, novel, a stable hit
		ev("s", 0, true, true, true, true),    // seed
		ev("a", 1, false, false, false, true), // 1st
		ev("d", 4, false, true, false, true),  // 4th: a hit, not stable
		ev("b", 2, false, false, true, false), // 2nd: stable but known
		ev("e", 4, false, false, true, true),  // 5th (ties d's time, after it by id): stable, novel
	}
	if got, want := CurveOf(evs), []int{3, 5}; !reflect.DeepEqual(got, want) {
		t.Errorf("CurveOf = %v, want %v", got, want)
	}
	want := []RatePoint{
		{1, 0, 0}, {2, 0, 0}, {3, 1.0 / 3, 1.0 / 3}, {4, 0.5, 0.25}, {5, 0.4, 0.2},
	}
	if got := RatesOf(evs, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("RatesOf(0) = %v, want %v", got, want)
	}
	// Thinned to 2 points: every 3rd and the last.
	if got := RatesOf(evs, 2); !reflect.DeepEqual(got, []RatePoint{want[2], want[4]}) {
		t.Errorf("RatesOf(2) = %v", got)
	}
	if CurveOf(nil) != nil || RatesOf(nil, 10) != nil {
		t.Error("no evaluations: want nil curve and rates")
	}
}
