package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/discovery"
)

// Compositions returns the per-composition statistics of a campaign.
func (s *Store) Compositions(ctx context.Context, campaign string) (map[string]*discovery.CompositionStat, error) {
	m, err := s.rdb.HGetAll(ctx, s.compsKey(campaign)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: compositions of %s: %w", campaign, err)
	}
	out := map[string]*discovery.CompositionStat{}
	for k, v := range m {
		formula, field, ok := strings.Cut(k, "|")
		if !ok {
			continue
		}
		c := out[formula]
		if c == nil {
			c = &discovery.CompositionStat{Formula: formula}
			out[formula] = c
		}
		switch field {
		case "n":
			c.Queries, _ = strconv.Atoi(v)
		case "stable":
			c.Stable, _ = strconv.Atoi(v)
		case "hits":
			c.Hits, _ = strconv.Atoi(v)
		case "emin", "emax":
			x, err := strconv.ParseFloat(v, 64)
			if err == nil {
				if field == "emin" {
					c.EMin = &x
				} else {
					c.EMax = &x
				}
			}
		}
	}
	return out, nil
}

// CompositionCounts returns the number of evaluations of each of the given
// reduced formulas (0 for one never evaluated); it reads those formulas
// only, so its cost does not grow with the campaign.
func (s *Store) CompositionCounts(ctx context.Context, campaign string, formulas ...string) (map[string]int, error) {
	out := make(map[string]int, len(formulas))
	if len(formulas) == 0 {
		return out, nil
	}
	fields := make([]string, len(formulas))
	for i, f := range formulas {
		fields[i] = f + "|n"
	}
	vals, err := s.rdb.HMGet(ctx, s.compsKey(campaign), fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("store: composition counts of %s: %w", campaign, err)
	}
	for i, v := range vals {
		n := 0
		if str, ok := v.(string); ok {
			n, _ = strconv.Atoi(str)
		}
		out[formulas[i]] = n
	}
	return out, nil
}
