package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// Find is a campaign candidate that extends the convex hull: the evaluator
// adds it to the reference phases of later candidates.
type Find struct {
	ID            string  `json:"id"`
	Formula       string  `json:"formula"`
	EnergyPerAtom float64 `json:"e_form_per_atom"`
}

// Finds returns the campaign's candidates that extend the hull, in the
// order they were recorded.
func (s *Store) Finds(ctx context.Context, campaign string) ([]Find, error) {
	return s.FindsFrom(ctx, campaign, 0)
}

// FindCount returns how many finds the campaign has recorded.
func (s *Store) FindCount(ctx context.Context, campaign string) (int, error) {
	n, err := s.rdb.LLen(ctx, s.findsKey(campaign)).Result()
	if err != nil {
		return 0, fmt.Errorf("store: finds of %s: %w", campaign, err)
	}
	return int(n), nil
}

// FindsFrom returns the campaign's finds after the first n, in the order
// they were recorded: a reader that holds n finds fetches only the new
// ones (the list only grows).
func (s *Store) FindsFrom(ctx context.Context, campaign string, n int) ([]Find, error) {
	docs, err := s.rdb.LRange(ctx, s.findsKey(campaign), int64(n), -1).Result()
	if err != nil {
		return nil, fmt.Errorf("store: finds of %s: %w", campaign, err)
	}
	out := make([]Find, 0, len(docs))
	for _, v := range docs {
		var f Find
		if err := json.Unmarshal([]byte(v), &f); err != nil {
			return nil, fmt.Errorf("store: a find of %s: %w", campaign, err)
		}
		out = append(out, f)
	}
	return out, nil
}
