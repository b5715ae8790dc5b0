package store

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Hits returns the Pareto documents of every hit.
func (s *Store) Hits(ctx context.Context, campaign string) (map[string]HitDoc, error) {
	m, err := s.rdb.HGetAll(ctx, s.hitsKey(campaign)).Result()
	if err != nil {
		return nil, err
	}
	out := make(map[string]HitDoc, len(m))
	for id, v := range m {
		var h HitDoc
		if err := json.Unmarshal([]byte(v), &h); err == nil {
			out[id] = h
		}
	}
	return out, nil
}

// DiscoveryCurve returns the evaluation indices at which a stable novel
// candidate was found, in order.
func (s *Store) DiscoveryCurve(ctx context.Context, campaign string) ([]int, error) {
	vs, err := s.rdb.LRange(ctx, s.curveKey(campaign), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(vs))
	for _, v := range vs {
		n, err := strconv.Atoi(v)
		if err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// GenerationMemorization returns, per generation with evaluations, the
// evaluated and known counts, by generation number.
func (s *Store) GenerationMemorization(ctx context.Context, campaign string) (map[int][2]int, error) {
	m, err := s.rdb.HGetAll(ctx, s.gensKey(campaign)).Result()
	if err != nil {
		return nil, err
	}
	out := map[int][2]int{}
	for k, v := range m {
		gs, field, ok := strings.Cut(k, ":")
		if !ok || (field != "evaluated" && field != "known") {
			continue
		}
		g, err1 := strconv.Atoi(gs)
		n, err2 := strconv.Atoi(v)
		if err1 != nil || err2 != nil {
			continue
		}
		c := out[g]
		if field == "evaluated" {
			c[0] = n
		} else {
			c[1] = n
		}
		out[g] = c
	}
	return out, nil
}
