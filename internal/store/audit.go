package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Audit is the raw bookkeeping of one campaign, read back for checks of
// the pipeline's guarantees (the chaos test): which ids were proposed,
// recorded and pooled, with no interpretation.
type Audit struct {
	// Evaluated are the ids the reflector recorded (seeds included).
	Evaluated map[string]bool
	// Accepted are the ids each generation published, by generation.
	Accepted map[int][]string
	// Generations are the per-generation fields (n, evaluated, done, …).
	Generations map[int]map[string]string
	// Pools are the members of each island's success and failure pools:
	// Pools[island]["success"] and Pools[island]["failure"].
	Pools map[int]map[string][]string
	// Docs are the ids whose member documents are kept.
	Docs map[string]bool
	// Discoveries are the ids counted as discoveries.
	Discoveries map[string]bool
	// Curve is the discovery curve's list, in insertion order.
	Curve []int
}

// ReadAudit reads a campaign's bookkeeping; islands is the campaign's
// island count.
func (s *Store) ReadAudit(ctx context.Context, campaign string, islands int) (*Audit, error) {
	a := &Audit{
		Evaluated: map[string]bool{}, Accepted: map[int][]string{}, Generations: map[int]map[string]string{},
		Pools: map[int]map[string][]string{}, Docs: map[string]bool{}, Discoveries: map[string]bool{},
	}
	fail := func(what string, err error) (*Audit, error) {
		return nil, fmt.Errorf("store: audit of %s: %s: %w", campaign, what, err)
	}
	ids, err := s.rdb.HKeys(ctx, s.evaluatedKey(campaign)).Result()
	if err != nil {
		return fail("evaluated", err)
	}
	for _, id := range ids {
		a.Evaluated[id] = true
	}
	gens, err := s.rdb.HGetAll(ctx, s.gensKey(campaign)).Result()
	if err != nil {
		return fail("generations", err)
	}
	for k, v := range gens {
		gs, field, ok := strings.Cut(k, ":")
		g, err := strconv.Atoi(gs)
		if !ok || err != nil {
			continue
		}
		if a.Generations[g] == nil {
			a.Generations[g] = map[string]string{}
		}
		if field == "proposal" {
			continue // large, and only kept until the generation is done
		}
		a.Generations[g][field] = v
		if field == "accepted" {
			if a.Accepted[g], err = acceptedIDs(v); err != nil {
				return fail("accepted ids of generation "+gs, err)
			}
		}
	}
	for i := 0; i < islands; i++ {
		a.Pools[i] = map[string][]string{}
		for _, kind := range []string{"success", "failure"} {
			m, err := s.rdb.ZRange(ctx, s.poolKey(campaign, i, kind), 0, -1).Result()
			if err != nil {
				return fail("pool", err)
			}
			a.Pools[i][kind] = m
		}
	}
	docs, err := s.rdb.HKeys(ctx, s.docsKey(campaign)).Result()
	if err != nil {
		return fail("docs", err)
	}
	for _, id := range docs {
		a.Docs[id] = true
	}
	disc, err := s.rdb.SMembers(ctx, s.discoveriesKey(campaign)).Result()
	if err != nil {
		return fail("discoveries", err)
	}
	for _, id := range disc {
		a.Discoveries[id] = true
	}
	curve, err := s.rdb.LRange(ctx, s.curveKey(campaign), 0, -1).Result()
	if err != nil {
		return fail("curve", err)
	}
	for _, v := range curve {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fail("curve entry "+v, err)
		}
		a.Curve = append(a.Curve, n)
	}
	return a, nil
}

// IslandCounts returns each island's evaluation count (the n of its mean
// score), by island.
func (s *Store) IslandCounts(ctx context.Context, campaign string) (map[int]int, error) {
	m, err := s.rdb.HGetAll(ctx, s.islandsKey(campaign)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: islands of %s: %w", campaign, err)
	}
	out := map[int]int{}
	for k, v := range m {
		is, field, ok := strings.Cut(k, ":")
		if !ok || field != "n" {
			continue
		}
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.Atoi(v)
		if err1 != nil || err2 != nil {
			continue
		}
		out[i] = n
	}
	return out, nil
}
