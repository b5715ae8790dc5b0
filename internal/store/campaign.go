package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// ErrNotFound is returned for a campaign the store does not hold.
var ErrNotFound = errors.New("not found")

// Campaign keys.
func (s *Store) stateKey(c string) string    { return s.ck(c, "state") }
func (s *Store) specKey(c string) string     { return s.ck(c, "spec") }
func (s *Store) triggersKey(c string) string { return s.ck(c, "triggers") }
func (s *Store) gensKey(c string) string     { return s.ck(c, "gens") }
func (s *Store) seenKey(c string) string     { return s.ck(c, "seen") }
func (s *Store) evaluatedKey(c string) string {
	return s.ck(c, "evaluated")
}
func (s *Store) compsKey(c string) string   { return s.ck(c, "comps") }
func (s *Store) docsKey(c string) string    { return s.ck(c, "docs") }
func (s *Store) findsKey(c string) string   { return s.ck(c, "findlist") }
func (s *Store) islandsKey(c string) string { return s.ck(c, "islands") }
func (s *Store) hitsKey(c string) string    { return s.ck(c, "hits") }
func (s *Store) curveKey(c string) string   { return s.ck(c, "curve") }
func (s *Store) logKey(c string) string     { return s.ck(c, "log") }
func (s *Store) discoveriesKey(c string) string {
	return s.ck(c, "discoveries")
}
func (s *Store) judgeRejectedKey(c string) string {
	return s.ck(c, "judge_rejected")
}
func (s *Store) poolKey(c string, island int, kind string) string {
	return s.ck(c, "island", strconv.Itoa(island), kind)
}
func (s *Store) indexKey() string { return s.prefix + "campaigns" }

// CreateCampaign stores a validated campaign and its initial state, once:
// it reports false when the campaign already existed (a redelivered
// submission), leaving it untouched.
func (s *Store) CreateCampaign(ctx context.Context, spec *messages.CampaignSpec, seeds int) (bool, error) {
	data, err := json.Marshal(spec)
	if err != nil {
		return false, err
	}
	args := []any{string(data),
		"status", messages.StateRunning,
		"budget", spec.Budget, "episodes", spec.Episodes, "batch", spec.BatchSize,
		"islands", spec.Islands, "seeds", seeds, "episode", 0, "ordered", b2s(spec.Ordered),
		"created", time.Now().UTC().Format(time.RFC3339Nano),
	}
	if spec.SubmittedBy != "" {
		args = append(args, "submitted_by", spec.SubmittedBy)
	}
	n, err := scriptCreate.Run(ctx, s.rdb, []string{s.stateKey(spec.ID), s.specKey(spec.ID)}, args...).Int()
	if err != nil {
		return false, fmt.Errorf("store: create campaign %s: %w", spec.ID, err)
	}
	// The index is another hash slot, so it is written separately; ZADD is
	// idempotent.
	if err := s.rdb.ZAdd(ctx, s.indexKey(), redis.Z{Score: float64(spec.SubmittedAt.UnixMilli()), Member: spec.ID}).Err(); err != nil {
		return false, fmt.Errorf("store: index campaign %s: %w", spec.ID, err)
	}
	return n == 1, nil
}

// Spec returns a campaign's spec.
func (s *Store) Spec(ctx context.Context, campaign string) (*messages.CampaignSpec, error) {
	data, err := s.rdb.Get(ctx, s.specKey(campaign)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, err)
	}
	var spec messages.CampaignSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, fmt.Errorf("store: campaign %s spec: %w", campaign, err)
	}
	return &spec, nil
}

// Campaigns lists campaign ids, oldest first.
func (s *Store) Campaigns(ctx context.Context) ([]string, error) {
	return s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
}

// State is a campaign's counters and control fields.
type State struct {
	Status   string
	Episode  int
	Inflight int
	// Budget is the campaign's budget of evaluations, Extended the part
	// of it that crucible campaign extend added.
	Budget, Extended int
	// MaxLLMCalls and MaxLLMTokens are the LLM limits an extension set,
	// which replace the spec's; 0 when none did.
	MaxLLMCalls, MaxLLMTokens int
	Counters                  messages.Counters
	EAboveHullSum             float64
	EAboveHullN               int
	Unique                    int
	Created                   time.Time
	// Finished is when the campaign last finished (zero while it runs,
	// and again once an extension reopens it).
	Finished time.Time
	// SpaceGroups counts the valid proposed candidates evaluated in each
	// space group (by ITA number); StableSpaceGroups the novel stable ones
	// (MADE's N_stable) among them.
	SpaceGroups, StableSpaceGroups map[int]int
	raw                            map[string]string
}

// Int returns a raw integer field of the state hash.
func (st *State) Int(field string) int {
	n, _ := strconv.Atoi(st.raw[field])
	return n
}

// State reads a campaign's state (and the sizes of its sets of discoveries
// and of the judge's rejections) in one round trip.
func (s *Store) State(ctx context.Context, campaign string) (*State, error) {
	pipe := s.rdb.Pipeline()
	hash := pipe.HGetAll(ctx, s.stateKey(campaign))
	discoveries := pipe.SCard(ctx, s.discoveriesKey(campaign))
	judgeRejected := pipe.SCard(ctx, s.judgeRejectedKey(campaign))
	debates := pipe.HMGet(ctx, s.debateUsageKey(campaign), "llm_requests", "llm_calls", "prompt_tokens", "completion_tokens")
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store: state of %s: %w", campaign, err)
	}
	m := hash.Val()
	if len(m) == 0 {
		return nil, fmt.Errorf("store: campaign %s: %w", campaign, ErrNotFound)
	}
	st := &State{raw: m, Status: m["status"]}
	st.Episode = st.Int("episode")
	st.Inflight = st.Int("inflight")
	st.Budget, st.Extended = st.Int("budget"), st.Int("extended")
	st.MaxLLMCalls, st.MaxLLMTokens = st.Int("max_llm_calls"), st.Int("max_llm_tokens")
	st.Unique = st.Int("unique_compositions")
	st.EAboveHullN = st.Int("ehull_n")
	st.EAboveHullSum, _ = strconv.ParseFloat(m["ehull_sum"], 64)
	st.Created, _ = time.Parse(time.RFC3339Nano, m["created"])
	st.Finished, _ = time.Parse(time.RFC3339Nano, m["finished"])
	st.SpaceGroups, st.StableSpaceGroups = map[int]int{}, map[int]int{}
	for k, v := range m {
		counts, number := st.SpaceGroups, ""
		if rest, ok := strings.CutPrefix(k, "sg_stable:"); ok {
			counts, number = st.StableSpaceGroups, rest
		} else if rest, ok := strings.CutPrefix(k, "sg:"); ok {
			number = rest
		} else {
			continue
		}
		g, err1 := strconv.Atoi(number)
		n, err2 := strconv.Atoi(v)
		if err1 == nil && err2 == nil {
			counts[g] = n
		}
	}
	c := &st.Counters
	c.Proposed, c.Evaluated, c.Valid = st.Int("proposed"), st.Int("evaluated"), st.Int("valid")
	c.Hits, c.Stable, c.StableHits = st.Int("hits"), st.Int("stable"), st.Int("stable_hits")
	c.Novel, c.Known, c.Seeds = st.Int("novel"), st.Int("known"), st.Int("seeds")
	c.Generations, c.EmptyGenerations, c.Rejected = st.Int("generations"), st.Int("empty_generations"), st.Int("rejected")
	c.RejectedKnown = st.Int("rejected_known")
	c.Discoveries, c.JudgeRejected, c.LLMCalls = int(discoveries.Val()), int(judgeRejected.Val()), st.Int("llm_calls")
	c.PromptTokens, c.CompletionTokens = st.Int("prompt_tokens"), st.Int("completion_tokens")
	c.LLMRequests = st.Int("llm_requests")
	// The judge's debates count in an account of their own.
	d := make([]int, 4)
	for i, v := range debates.Val() {
		n, _ := v.(string) // nil: never counted
		d[i], _ = strconv.Atoi(n)
	}
	c.LLMRequests += d[0]
	c.LLMCalls += d[1]
	c.PromptTokens += d[2]
	c.CompletionTokens += d[3]
	return st, nil
}

// AdvanceEpisode moves the campaign past episode e; it reports false when
// e was the last.
func (s *Store) AdvanceEpisode(ctx context.Context, campaign string, e int) (bool, error) {
	n, err := scriptAdvance.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, e).Int()
	if err != nil {
		return false, fmt.Errorf("store: advance episode of %s: %w", campaign, err)
	}
	return n == 1, nil
}

// RecordDiscovery counts an accepted discovery once: the campaign's
// discoveries are the set of their candidate ids, which a repeat does not
// change.
func (s *Store) RecordDiscovery(ctx context.Context, campaign, id string) error {
	if err := s.rdb.SAdd(ctx, s.discoveriesKey(campaign), id).Err(); err != nil {
		return fmt.Errorf("store: record discovery %s of %s: %w", id, campaign, err)
	}
	return nil
}

// RecordJudgeRejection counts a hit the judge rejected once, as
// RecordDiscovery counts a discovery.
func (s *Store) RecordJudgeRejection(ctx context.Context, campaign, id string) error {
	if err := s.rdb.SAdd(ctx, s.judgeRejectedKey(campaign), id).Err(); err != nil {
		return fmt.Errorf("store: record the judge's rejection %s of %s: %w", id, campaign, err)
	}
	return nil
}

// MarkFinished records when the campaign finished, once: a repeated
// finish (a redelivery, the reflector and the proposer both) keeps the
// first time, so a finished campaign's wall time stops growing.
func (s *Store) MarkFinished(ctx context.Context, campaign string, at time.Time) error {
	if err := s.rdb.HSetNX(ctx, s.stateKey(campaign), "finished", at.UTC().Format(time.RFC3339Nano)).Err(); err != nil {
		return fmt.Errorf("store: finish %s: %w", campaign, err)
	}
	return nil
}

// SetEpisodeStats stores the statistics the reflector computed for an
// episode (the first value stays).
func (s *Store) SetEpisodeStats(ctx context.Context, campaign string, episode int, stats []byte) error {
	return scriptEpisodeStats.Run(ctx, s.rdb, []string{s.stateKey(campaign)}, episode, string(stats)).Err()
}

// EpisodeStats returns the stored statistics of an episode, or nil.
func (s *Store) EpisodeStats(ctx context.Context, campaign string, episode int) ([]byte, error) {
	b, err := s.rdb.HGet(ctx, s.stateKey(campaign), "ep"+strconv.Itoa(episode)+"_stats").Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}
