// Package discovery measures a discovery campaign as MADE (§4.4) and LLEMA
// (§3.2, §4.2) report one: how many stable materials it found and how
// early (N_stable, AUDC, SDE), the hit, stability and memorisation rates,
// and how broadly it searched (unique compositions, their entropy, the
// share of the most queried one).
//
// The functions are pure: counts in, figures out. The reflector computes
// EpisodeStats at the end of each episode (Episode), and the campaign's
// summary its AUDC and SDE from the discovery curve.
package discovery

import (
	"math"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// CompositionStat is what a campaign learned about one reduced formula so
// far (MADE §4.2: per-composition query count, stability and energy
// range). EMin and EMax bound the energies above hull (eV/atom) of its
// evaluated candidates; nil when none had one.
type CompositionStat struct {
	Formula string   `json:"formula"`
	Queries int      `json:"queries"`
	Stable  int      `json:"stable"`
	Hits    int      `json:"hits"`
	EMin    *float64 `json:"e_min,omitempty"`
	EMax    *float64 `json:"e_max,omitempty"`
}

// EpisodeStats are the MADE §4.4 metrics computable at the end of an
// episode. Counts and rates cover the campaign so far (its counters and
// per-composition statistics are cumulative); EpisodeEvaluated is the
// episode's own.
type EpisodeStats struct {
	Episode          int `json:"episode"`
	Evaluated        int `json:"evaluated"`
	EpisodeEvaluated int `json:"episode_evaluated"`
	Valid            int `json:"valid"`
	Hits             int `json:"hits"`
	// Stable counts stable candidates (E_hull ≤ the threshold), MADE's
	// N_stable; StableHits those that are also hits (LLEMA's stability).
	Stable     int `json:"stable"`
	StableHits int `json:"stable_hits"`
	Novel      int `json:"novel"`
	Known      int `json:"known"`
	// HitRate = Hits / Evaluated; StabilityRate = StableHits / Evaluated
	// (LLEMA §3.2); MemorizationRate = Known / Evaluated (LLEMA §4.2).
	HitRate          float64 `json:"hit_rate"`
	StabilityRate    float64 `json:"stability_rate"`
	MemorizationRate float64 `json:"memorization_rate"`
	// SDE = Stable / Evaluated, MADE's stable discovery efficiency over
	// the queries spent so far (see SDE). MADE's N_stable also excludes
	// phases of the initial known set; the counters do not say which
	// stable candidates were known, so this is an upper bound.
	SDE float64 `json:"sde"`
	// UniqueCompositions is the number of distinct reduced formulas
	// queried; Queries the queries they account for.
	UniqueCompositions int `json:"unique_compositions"`
	Queries            int `json:"queries"`
	// Breadth = UniqueCompositions / Queries (MADE §5.1 reports the fall
	// of unique compositions per episode under reflection).
	Breadth float64 `json:"breadth"`
	// CompositionEntropy is the Shannon entropy of the queries over the
	// compositions, normalised by its maximum ln U: 1 when every
	// composition got the same share, 0 when one got them all (the
	// composition analogue of MADE's space-group entropy).
	CompositionEntropy float64 `json:"composition_entropy"`
	// TopShare is the share of the queries spent on the most queried
	// composition.
	TopShare float64 `json:"top_share"`
	// HitCompositions and StableCompositions count the compositions with
	// at least one hit, resp. stable candidate.
	HitCompositions    int `json:"hit_compositions"`
	StableCompositions int `json:"stable_compositions"`
}

// Episode computes the statistics of a campaign at the end of episode,
// from its counters so far, the evaluations of the episode itself and its
// per-composition statistics (one per distinct formula; those without
// queries are ignored). Negative counts count as zero.
func Episode(episode, episodeEvaluated int, c messages.Counters, comps []CompositionStat) EpisodeStats {
	s := EpisodeStats{
		Episode: episode, Evaluated: max(c.Evaluated, 0), EpisodeEvaluated: max(episodeEvaluated, 0),
		Valid: max(c.Valid, 0), Hits: max(c.Hits, 0), Stable: max(c.Stable, 0), StableHits: max(c.StableHits, 0),
		Novel: max(c.Novel, 0), Known: max(c.Known, 0),
	}
	s.HitRate = Rate(s.Hits, s.Evaluated)
	s.StabilityRate = Rate(s.StableHits, s.Evaluated)
	s.MemorizationRate = Rate(s.Known, s.Evaluated)
	s.SDE = SDE(s.Stable, s.Evaluated)
	top := 0
	for _, x := range comps {
		if x.Queries <= 0 {
			continue
		}
		s.UniqueCompositions++
		s.Queries += x.Queries
		top = max(top, x.Queries)
		if x.Hits > 0 {
			s.HitCompositions++
		}
		if x.Stable > 0 {
			s.StableCompositions++
		}
	}
	s.Breadth = Rate(s.UniqueCompositions, s.Queries)
	s.TopShare = Rate(top, s.Queries)
	if u := s.UniqueCompositions; u > 1 {
		h := 0.0
		for _, x := range comps {
			if x.Queries <= 0 {
				continue
			}
			p := float64(x.Queries) / float64(s.Queries)
			h -= p * math.Log(p)
		}
		s.CompositionEntropy = h / math.Log(float64(u))
	}
	return s
}

// Rate is n / of, 0 when of ≤ 0.
func Rate(n, of int) float64 {
	if of <= 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// AUDC is MADE's normalised area under the discovery curve (§4.4): the
// area under N_stable(t), the number of discoveries among the first t
// queries of a budget of B, normalised by B²/2, the area under the ideal
// curve N(t) = t of a discovery at every query. The curve is the count
// linearly interpolated between queries, from N(0) = 0:
//
//	AUDC = ∫₀^B N(t) dt / (B²/2) = Σ_{t=1}^{B} (N(t−1) + N(t))/2 / (B²/2)
//	     = Σ_k (B − t_k + ½) / (B²/2),
//
// t_k the 1-based query indices at which discoveries were made
// (discoveryIndices; repeats and indices outside [1, B] are ignored). It
// lies in [0, 1]: 1 for a discovery at every query, 0 for none; one
// discovery at the first query gives (2B − 1)/B², at the last 1/B². A
// budget below 1 gives 0.
func AUDC(discoveryIndices []int, budget int) float64 {
	if budget < 1 {
		return 0
	}
	seen := make(map[int]bool, len(discoveryIndices))
	area := 0.0
	for _, t := range discoveryIndices {
		if t >= 1 && t <= budget && !seen[t] {
			seen[t] = true
			area += float64(budget-t) + 0.5
		}
	}
	b := float64(budget)
	return area / (b * b / 2)
}

// EpisodeYield is MADE's per-episode discovery yield (§4.4): an episode's
// budget B_k, the queries it spent, its new stable discoveries N_k, and
// its AUDC and SDE over its own budget.
type EpisodeYield = messages.EpisodeYield

// Episodes splits a campaign's discovery curve into its episodes. budgets
// are the episodes' budgets in order (episode k spans the campaign's
// queries after the first B_0 + … + B_{k−1}, as episodes follow each
// other), evaluated the queries the campaign spent, discoveryIndices the
// campaign's 1-based query indices of discoveries.
func Episodes(discoveryIndices []int, budgets []int, evaluated int) []EpisodeYield {
	out := make([]EpisodeYield, len(budgets))
	start := 0
	for k, b := range budgets {
		b = max(b, 0)
		y := EpisodeYield{Episode: k, Budget: b, Evaluated: min(max(evaluated-start, 0), b)}
		var local []int
		for _, t := range discoveryIndices {
			if t > start && t <= start+b {
				local = append(local, t-start)
			}
		}
		y.NStable = len(local)
		y.AUDC = AUDC(local, b)
		y.SDE = SDE(y.NStable, b)
		out[k] = y
		start += b
	}
	return out
}

// Slope is the least-squares slope of ys against their index 0, 1, …
// (MADE §4.4: the cross-episode learning slope of N_stable against the
// episode index). It needs two points: ok is false with fewer.
func Slope(ys []float64) (slope float64, ok bool) {
	n := len(ys)
	if n < 2 {
		return 0, false
	}
	xm := float64(n-1) / 2
	ym := 0.0
	for _, y := range ys {
		ym += y
	}
	ym /= float64(n)
	num, den := 0.0, 0.0
	for i, y := range ys {
		dx := float64(i) - xm
		num += dx * (y - ym)
		den += dx * dx
	}
	return num / den, true
}

// SDE is MADE's stable discovery efficiency (§4.4), SDE = N_stable / B:
// stable discoveries per oracle query. A budget below 1 or a negative
// count gives 0.
func SDE(nStable, budget int) float64 {
	if budget < 1 || nStable < 0 {
		return 0
	}
	return float64(nStable) / float64(budget)
}
