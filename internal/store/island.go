package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Member is an island pool member: a candidate with what the proposer
// needs to show it as a demonstration or use it as a parent.
type Member struct {
	ID         string             `json:"id"`
	Formula    string             `json:"formula"`
	Structure  messages.Structure `json:"structure"`
	Score      float64            `json:"score"`
	Feasible   bool               `json:"feasible"`
	Stable     bool               `json:"stable"`
	Valid      bool               `json:"valid"`
	EAboveHull *float64           `json:"e_above_hull,omitempty"`
	Properties map[string]float64 `json:"properties,omitempty"`
	Margins    []messages.Margin  `json:"margins,omitempty"`
	Reasons    []messages.Reason  `json:"reasons,omitempty"`
	Operator   string             `json:"operator,omitempty"`
	Parents    []string           `json:"parents,omitempty"`
	Seed       bool               `json:"seed,omitempty"`
	Generation int                `json:"generation"`
	Island     int                `json:"island"`
	Rule       string             `json:"rule,omitempty"`
	Rationale  string             `json:"rationale,omitempty"`
}

// IslandStat is an island's evaluated candidates and their mean score.
type IslandStat struct {
	Island    int
	N         int
	MeanScore float64
}

// Islands returns the statistics of islands 0..n−1 (zero for an island
// with no evaluation yet).
func (s *Store) Islands(ctx context.Context, campaign string, n int) ([]IslandStat, error) {
	m, err := s.rdb.HGetAll(ctx, s.islandsKey(campaign)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: islands of %s: %w", campaign, err)
	}
	out := make([]IslandStat, n)
	for i := range out {
		out[i].Island = i
		out[i].N, _ = strconv.Atoi(m[strconv.Itoa(i)+":n"])
		sum, _ := strconv.ParseFloat(m[strconv.Itoa(i)+":sum"], 64)
		if out[i].N > 0 {
			out[i].MeanScore = sum / float64(out[i].N)
		}
	}
	return out, nil
}

// PoolIDs returns the member ids of an island's "success" or "failure"
// pool.
func (s *Store) PoolIDs(ctx context.Context, campaign string, island int, kind string) ([]string, error) {
	return s.rdb.ZRange(ctx, s.poolKey(campaign, island, kind), 0, -1).Result()
}

// memberCache keeps decoded member documents by their text: an island's
// pools change by a member or two per generation, so most of a view's
// documents were decoded for an earlier one. A text always decodes to the
// same member, so nothing is ever stale. The members share their slices
// and maps between views and must not be modified.
type memberCache struct {
	mu sync.Mutex
	m  map[string]Member
}

// maxCachedMembers bounds the cache (documents hold a structure: a few
// kilobytes each); it starts over when full.
const maxCachedMembers = 1024

// decode returns the member a document holds; false if it does not
// decode (such a document is left out of the view).
func (c *memberCache) decode(doc string) (Member, bool) {
	c.mu.Lock()
	m, ok := c.m[doc]
	c.mu.Unlock()
	if ok {
		return m, true
	}
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		return Member{}, false
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedMembers {
		c.m = make(map[string]Member, maxCachedMembers)
	}
	c.m[doc] = m
	c.mu.Unlock()
	return m, true
}

// IslandView is what a generation shows of an island. Its members are
// shared with later views and must not be modified.
type IslandView struct {
	Successes, Failures, Rejects []Member
}

// Island reads an island's k best successes and failures and its k most
// recent rejects: the pools and rejects in one round trip, the pool
// members' documents in a second. Plain commands rather than a script:
// the view is read-only, and a member trimmed between the two reads is
// left out, as it would be a moment later anyway.
func (s *Store) Island(ctx context.Context, campaign string, island, k int) (*IslandView, error) {
	fail := func(err error) (*IslandView, error) {
		return nil, fmt.Errorf("store: island %d of %s: %w", island, campaign, err)
	}
	pipe := s.rdb.Pipeline()
	succ := pipe.ZRevRange(ctx, s.poolKey(campaign, island, "success"), 0, int64(k-1))
	failures := pipe.ZRevRange(ctx, s.poolKey(campaign, island, "failure"), 0, int64(k-1))
	rejects := pipe.LRange(ctx, s.poolKey(campaign, island, "rejects"), 0, int64(k-1))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fail(err)
	}
	ids := append(succ.Val(), failures.Val()...)
	var docs []any
	if len(ids) > 0 {
		var err error
		if docs, err = s.rdb.HMGet(ctx, s.docsKey(campaign), ids...).Result(); err != nil {
			return fail(err)
		}
	}
	decode := func(docs []any) []Member {
		out := make([]Member, 0, len(docs))
		for _, d := range docs {
			str, ok := d.(string)
			if !ok {
				continue
			}
			if m, ok := s.members.decode(str); ok {
				out = append(out, m)
			}
		}
		return out
	}
	n := len(succ.Val())
	rej := make([]any, len(rejects.Val()))
	for i, r := range rejects.Val() {
		rej[i] = r
	}
	return &IslandView{Successes: decode(docs[:n]), Failures: decode(docs[n:]), Rejects: decode(rej)}, nil
}
