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

// AUDC is MADE's normalised area under the discovery curve (§4.4):
//
//	AUDC = Σ_{t=1}^{B} N_stable(t) / (B²/2),
//
// N_stable(t) the number of discoveries among the first t queries of a
// budget of B. discoveryIndices are the 1-based query indices t_k at which
// discoveries were made, so Σ_t N_stable(t) = Σ_k (B − t_k + 1); indices
// outside [1, B] are ignored. Finding the same number early scores higher
// than late: one discovery at the first query gives 2/B, at the last 2/B².
// A discovery at every query gives (B + 1)/B, just above 1. A budget below
// 1 gives 0.
func AUDC(discoveryIndices []int, budget int) float64 {
	if budget < 1 {
		return 0
	}
	area := 0
	for _, t := range discoveryIndices {
		if t >= 1 && t <= budget {
			area += budget - t + 1
		}
	}
	b := float64(budget)
	return float64(area) / (b * b / 2)
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
