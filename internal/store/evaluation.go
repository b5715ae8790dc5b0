package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// HitDoc keeps what the summary's Pareto front needs of a hit: its raw
// property values (the front's coordinates), whether it is novel (the
// front holds novel hits only), its margins and score.
type HitDoc struct {
	Formula    string             `json:"formula"`
	Values     map[string]float64 `json:"values,omitempty"`
	Novel      bool               `json:"novel,omitempty"`
	EAboveHull *float64           `json:"e_above_hull,omitempty"`
	Margins    map[string]float64 `json:"margins"`
	Score      float64            `json:"score"`
}

// EvaluationRecord is one evaluation as the reflector records it.
type EvaluationRecord struct {
	ID         string
	Generation int
	Episode    int
	Island     int
	Seed       bool
	Score      float64
	Feasible   bool
	Stable     bool
	Valid      bool
	Known      bool
	Novel      bool
	Formula    string
	EAboveHull *float64
	Member     Member
	PoolSize   int
	Find       *Find
	Hit        *HitDoc
	// Position is a seed's index among the campaign's seeds: an ordered
	// campaign records seeds in that order.
	Position int
	// SpaceGroup is the ITA number of a valid candidate's space group, 0
	// when it is invalid or has none: the campaign counts its candidates
	// per group (State.SpaceGroups) for MADE's space-group entropy.
	SpaceGroup int
	// ForJudge marks an evaluation the judge will weigh
	// (messages.Evaluation.ForJudge): the campaign counts them, so that an
	// ordered campaign can wait for its verdicts (JudgePending).
	ForJudge bool
	// Digest identifies the evaluation message recorded
	// (messages.DigestBytes of its body): the judge judges only the
	// evaluation the reflector counted.
	Digest string
}

// Outcome says what recording an evaluation completed.
type Outcome struct {
	// Duplicate: the evaluation was recorded before; the flags are those of
	// the first time, so follow-up actions can be repeated idempotently.
	Duplicate bool
	// Digest is, for a duplicate, the digest recorded with the first
	// evaluation ("" if none was kept): another message than the one
	// recorded has another digest.
	Digest string
	// Wait: an ordered campaign records its evaluations in the order of
	// their candidates, and one before this has not been recorded yet;
	// nothing was recorded, and the evaluation is to be recorded again
	// later.
	Wait           bool
	Index          int // 1-based position among the campaign's evaluations
	SeedsDone      bool
	GenerationDone bool
	EpisodeDone    bool
	CampaignDone   bool
	// NextReserved says the evaluation that completed a generation also
	// reserved the next one (trigger "after/<generation>", as
	// RequestGeneration would): Next is it, or nil when none was due.
	NextReserved bool
	Next         *Generation
}

// RecordEvaluation adds an evaluation to its island's pool and the
// campaign's counters, once per candidate id.
func (s *Store) RecordEvaluation(ctx context.Context, campaign string, r *EvaluationRecord) (Outcome, error) {
	outs, err := s.RecordEvaluations(ctx, campaign, []*EvaluationRecord{r})
	if err != nil {
		return Outcome{}, err
	}
	return outs[0], nil
}

// RecordEvaluations records evaluations of one campaign as RecordEvaluation
// does, in order, atomically and in one round trip, and returns their
// outcomes in the same order.
func (s *Store) RecordEvaluations(ctx context.Context, campaign string, rs []*EvaluationRecord) ([]Outcome, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, 11+2*len(rs))
	keys = append(keys, s.stateKey(campaign), s.evaluatedKey(campaign), s.gensKey(campaign), s.compsKey(campaign),
		s.docsKey(campaign), s.findsKey(campaign), s.islandsKey(campaign), s.hitsKey(campaign), s.curveKey(campaign),
		s.triggersKey(campaign))
	args := []any{0} // ARGV[1]: the arguments per evaluation, set below
	for _, r := range rs {
		doc, err := json.Marshal(r.Member)
		if err != nil {
			return nil, fmt.Errorf("store: record evaluation %s: %w", r.ID, err)
		}
		find, hit := "", ""
		if r.Find != nil {
			b, _ := json.Marshal(r.Find)
			find = string(b)
		}
		if r.Hit != nil {
			b, _ := json.Marshal(r.Hit)
			hit = string(b)
		}
		ehull := ""
		if r.EAboveHull != nil {
			ehull = strconv.FormatFloat(*r.EAboveHull, 'g', -1, 64)
		}
		keys = append(keys, s.poolKey(campaign, r.Island, "success"), s.poolKey(campaign, r.Island, "failure"))
		sg := ""
		if r.SpaceGroup >= 1 && r.SpaceGroup <= 230 {
			sg = strconv.Itoa(r.SpaceGroup)
		}
		rec := [...]any{r.ID, r.Generation, r.Episode, r.Island, b2s(r.Seed), r.Score, b2s(r.Feasible), b2s(r.Stable),
			b2s(r.Valid), b2s(r.Known), b2s(r.Novel), r.Formula, ehull, string(doc), r.PoolSize, find, hit, r.Position, sg, b2s(r.ForJudge), r.Digest}
		args[0] = len(rec)
		args = append(args, rec[:]...)
	}
	keys = append(keys, s.logKey(campaign))
	res, err := scriptEvaluate.Run(ctx, s.rdb, keys, args...).StringSlice()
	if err == nil && len(res) != len(rs) {
		err = fmt.Errorf("%d outcomes for %d evaluations", len(res), len(rs))
	}
	if err != nil {
		return nil, fmt.Errorf("store: record evaluations of %s (%s…): %w", campaign, rs[0].ID, err)
	}
	out := make([]Outcome, len(rs))
	for i, r := range res {
		out[i] = parseOutcome(r)
	}
	return out, nil
}

// parseOutcome reads scriptEvaluate's flags for one evaluation.
func parseOutcome(res string) Outcome {
	var o Outcome
	if res == "wait" {
		return Outcome{Wait: true}
	}
	if rest, ok := strings.CutPrefix(res, "dup;"); ok {
		o.Duplicate = true
		res = rest
	}
	for _, f := range strings.Split(res, ",") {
		switch {
		case f == "seeds_done":
			o.SeedsDone = true
		case f == "generation_done":
			o.GenerationDone = true
		case f == "episode_done":
			o.EpisodeDone = true
		case f == "campaign_done":
			o.CampaignDone = true
		case o.Duplicate && strings.HasPrefix(f, "digest="):
			o.Digest = strings.TrimPrefix(f, "digest=")
		case strings.HasPrefix(f, "index="):
			o.Index, _ = strconv.Atoi(strings.TrimPrefix(f, "index="))
		case strings.HasPrefix(f, "next="):
			if g, ok, err := parseReservation(strings.TrimPrefix(f, "next=")); err == nil {
				o.NextReserved = true
				if ok {
					o.Next = &g
				}
			}
		}
	}
	return o
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// MaxLogEntries bounds a campaign's evaluation log (EvaluationLog): the
// most recent are kept.
const MaxLogEntries = 4096

// LogEntry is one evaluation of a campaign's chronological log (MADE
// §4.1: per query the reduced composition, its energy above hull,
// stability and novelty).
type LogEntry struct {
	// Index is the evaluation's 1-based position among the campaign's
	// evaluations (seeds excluded), the order they were recorded in.
	Index   int
	Episode int
	Formula string
	// EAboveHull is nil for an invalid candidate.
	EAboveHull                       *float64
	Valid, Hit, Stable, Known, Novel bool
}

// EvaluationLog returns the campaign's logged evaluations of an episode
// in the order they were recorded (of the campaign's MaxLogEntries most
// recent); episode < 0 returns every episode's.
func (s *Store) EvaluationLog(ctx context.Context, campaign string, episode int) ([]LogEntry, error) {
	vs, err := s.rdb.LRange(ctx, s.logKey(campaign), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store: evaluation log of %s: %w", campaign, err)
	}
	out := make([]LogEntry, 0, len(vs))
	for _, v := range vs {
		f := strings.Split(v, "|")
		if len(f) != 5 {
			continue
		}
		var e LogEntry
		var err1, err2 error
		e.Index, err1 = strconv.Atoi(f[0])
		e.Episode, err2 = strconv.Atoi(f[1])
		if err1 != nil || err2 != nil || (episode >= 0 && e.Episode != episode) {
			continue
		}
		e.Formula = f[2]
		if x, err := strconv.ParseFloat(f[3], 64); err == nil {
			e.EAboveHull = &x
		}
		e.Valid, e.Hit, e.Stable = strings.Contains(f[4], "v"), strings.Contains(f[4], "h"), strings.Contains(f[4], "s")
		e.Known, e.Novel = strings.Contains(f[4], "k"), strings.Contains(f[4], "n")
		out = append(out, e)
	}
	return out, nil
}
