package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Memory banks are keyed by context (a task, or task × chemical system) and
// outlive campaigns: a new campaign on the same context starts with them
// (SciMem's disentangled banks).

// MaxReflectionsKept bounds a bank's reflection list.
const MaxReflectionsKept = 50

// ApplyReflection adds a reflection, its directives and experience edits to
// a bank and removes the directives it revokes, once per reflection id.
func (s *Store) ApplyReflection(ctx context.Context, bank, id string, r *messages.Reflection, revoke []messages.Directive, ops []reflection.ExperienceOp) (bool, error) {
	data, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	args := []any{id, string(data), MaxReflectionsKept, len(r.Directives) + len(revoke)}
	for _, d := range revoke {
		args = append(args, d.Key(), "")
	}
	for _, d := range r.Directives {
		b, _ := json.Marshal(d)
		args = append(args, d.Key(), string(b))
	}
	for _, op := range ops {
		if op.Delete {
			args = append(args, "del", op.Experience.Key, "")
			continue
		}
		b, _ := json.Marshal(op.Experience)
		args = append(args, "put", op.Experience.Key, string(b))
	}
	keys := []string{s.mk(bank, "reflections"), s.mk(bank, "directives"), s.mk(bank, "experiences"), s.mk(bank, "applied")}
	n, err := scriptMemory.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return false, fmt.Errorf("store: memory bank %s: %w", bank, err)
	}
	return n == 1, nil
}

// Directives returns a bank's directives, ordered by key.
func (s *Store) Directives(ctx context.Context, bank string) ([]messages.Directive, error) {
	m, err := s.rdb.HGetAll(ctx, s.mk(bank, "directives")).Result()
	if err != nil {
		return nil, fmt.Errorf("store: directives of %s: %w", bank, err)
	}
	out := make([]messages.Directive, 0, len(m))
	for _, v := range m {
		var d messages.Directive
		if err := json.Unmarshal([]byte(v), &d); err == nil {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

// Experiences returns a bank's experiences, ordered by key.
func (s *Store) Experiences(ctx context.Context, bank string) ([]reflection.Experience, error) {
	m, err := s.rdb.HGetAll(ctx, s.mk(bank, "experiences")).Result()
	if err != nil {
		return nil, fmt.Errorf("store: experiences of %s: %w", bank, err)
	}
	out := make([]reflection.Experience, 0, len(m))
	for _, v := range m {
		var e reflection.Experience
		if err := json.Unmarshal([]byte(v), &e); err == nil {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Bank reads a memory bank's w most recent reflections and its directives
// in one round trip.
func (s *Store) Bank(ctx context.Context, bank string, w int) ([]messages.Reflection, []messages.Directive, error) {
	var refl *redis.StringSliceCmd
	var dirs *redis.MapStringStringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if w > 0 {
			refl = p.LRange(ctx, s.mk(bank, "reflections"), 0, int64(w-1))
		}
		dirs = p.HGetAll(ctx, s.mk(bank, "directives"))
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: memory bank %s: %w", bank, err)
	}
	var rs []messages.Reflection
	if refl != nil {
		for _, v := range refl.Val() {
			var r messages.Reflection
			if json.Unmarshal([]byte(v), &r) == nil {
				rs = append(rs, r)
			}
		}
	}
	ds := make([]messages.Directive, 0, len(dirs.Val()))
	for _, v := range dirs.Val() {
		var d messages.Directive
		if json.Unmarshal([]byte(v), &d) == nil {
			ds = append(ds, d)
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].Key() < ds[j].Key() })
	return rs, ds, nil
}
