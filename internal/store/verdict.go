package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Judged verdict classes beside the novelty classes (messages.Novelty):
// a hull outlier, and an evaluation without a novelty class.
const (
	JudgedBelowHull    = "below_hull"
	JudgedUnclassified = "unclassified"
)

// JudgedClasses are the classes a judged candidate is counted under: the
// novelty classes, below_hull and unclassified.
func JudgedClasses() []string {
	return append(append([]string(nil), messages.NoveltyClasses...), JudgedBelowHull, JudgedUnclassified)
}

// JudgedClass is the class an evaluation the judge weighed is counted
// under: below_hull for a hull outlier, else its novelty class.
func JudgedClass(ev *messages.Evaluation) string {
	switch {
	case ev.HullOutlier:
		return JudgedBelowHull
	case ev.Novelty == nil:
		return JudgedUnclassified
	}
	return ev.Novelty.Class
}

func decision(accepted bool) string {
	if accepted {
		return "accepted"
	}
	return "rejected"
}

// judgedKey is the set of the candidate ids judged with a decision in a
// class.
func (s *Store) judgedKey(c string, accepted bool, class string) string {
	return s.ck(c, "judged", decision(accepted), class)
}

// scriptVerdict records a verdict once. KEYS: the judged set of its
// decision and class, the discoveries set, the finds list. ARGV: the
// candidate id, accepted (1/0), the find ("" if none). A repeat changes
// nothing: the find is appended only with the id's first entry in the
// discoveries set.
var scriptVerdict = redis.NewScript(`
local added = redis.call('SADD', KEYS[1], ARGV[1])
if ARGV[2] == '1' and redis.call('SADD', KEYS[2], ARGV[1]) == 1 and ARGV[3] ~= '' then
  redis.call('RPUSH', KEYS[3], ARGV[3])
end
return added
`)

// RecordVerdict counts a judged candidate once under its decision and
// class (JudgedClass); an accepted one is a discovery (the campaign's
// discoveries set, whose size its state reports), and find, when set,
// joins the campaign's finds: the reference phases of its later
// candidates' hulls, which grow only from accepted candidates.
//
// It reports whether the verdict was new (not counted before).
func (s *Store) RecordVerdict(ctx context.Context, campaign, id string, accepted bool, class string, find *Find) (bool, error) {
	var doc string
	if find != nil {
		b, err := json.Marshal(find)
		if err != nil {
			return false, fmt.Errorf("store: verdict %s of %s: %w", id, campaign, err)
		}
		doc = string(b)
	}
	acc := "0"
	if accepted {
		acc = "1"
	}
	keys := []string{s.judgedKey(campaign, accepted, class), s.discoveriesKey(campaign), s.findsKey(campaign)}
	added, err := scriptVerdict.Run(ctx, s.rdb, keys, id, acc, doc).Int()
	if err != nil {
		return false, fmt.Errorf("store: record verdict %s of %s: %w", id, campaign, err)
	}
	return added == 1, nil
}

// Judged returns how many candidates the judge weighed, by
// "decision/class" ("accepted/new", "rejected/ordered_mixture",
// "rejected/below_hull"); classes without candidates are left out.
func (s *Store) Judged(ctx context.Context, campaign string) (map[string]int, error) {
	type count struct {
		name string
		cmd  *redis.IntCmd
	}
	var counts []count
	pipe := s.rdb.Pipeline()
	for _, accepted := range []bool{true, false} {
		for _, class := range JudgedClasses() {
			counts = append(counts, count{decision(accepted) + "/" + class, pipe.SCard(ctx, s.judgedKey(campaign, accepted, class))})
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: judged of %s: %w", campaign, err)
	}
	out := map[string]int{}
	for _, c := range counts {
		if n := c.cmd.Val(); n > 0 {
			out[c.name] = int(n)
		}
	}
	return out, nil
}

// JudgePending returns how many of the campaign's recorded evaluations
// the judge has still to weigh: those recorded for it (ForJudge) less the
// candidates it has judged. An ordered campaign proposes a generation only
// when it is 0, so that the finds its candidates are judged against are
// those of every earlier generation, whatever the judge's pace.
func (s *Store) JudgePending(ctx context.Context, campaign string) (int, error) {
	want, err := s.rdb.HGet(ctx, s.stateKey(campaign), "for_judge").Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("store: judged of %s: %w", campaign, err)
	}
	judged, err := s.Judged(ctx, campaign)
	if err != nil {
		return 0, err
	}
	for _, n := range judged {
		want -= n
	}
	return max(want, 0), nil
}

// FindOf is what an accepted candidate on or below the hull adds to its
// campaign's hull: its formation energy, a reference phase of later
// candidates. Nothing else joins the hull — not a hit the judge rejected
// (a hull outlier, a mixture of known phases, a low-confidence value),
// nor one above the hull, which would not change it.
func FindOf(ev *messages.Evaluation, accepted bool) *Find {
	fe, ok := ev.Properties["formation_energy_per_atom"]
	if !accepted || !ok || !ev.Valid || ev.HullOutlier || ev.EAboveHull == nil || *ev.EAboveHull > 1e-9 {
		return nil
	}
	return &Find{ID: ev.ID, Formula: ev.Candidate.Formula, EnergyPerAtom: fe.Value}
}
