package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// BankDump is a memory bank as exported: its reflections (newest first),
// directives and lessons.
type BankDump struct {
	Context     string                  `json:"context"`
	Reflections []messages.Reflection   `json:"reflections"`
	Directives  []messages.Directive    `json:"directives"`
	Experiences []reflection.Experience `json:"experiences"`
}

// Banks lists the memory banks' contexts, sorted.
func (s *Store) Banks(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	head := s.prefix + "{mem:"
	iter := s.rdb.Scan(ctx, 0, head+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rest := strings.TrimPrefix(iter.Val(), head)
		if i := strings.Index(rest, "}:"); i > 0 {
			seen[rest[:i]] = true
		}
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("store: list memory banks: %w", err)
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// ExportBank reads a whole memory bank.
func (s *Store) ExportBank(ctx context.Context, bank string) (*BankDump, error) {
	refl, dirs, err := s.Bank(ctx, bank, MaxReflectionsKept)
	if err != nil {
		return nil, err
	}
	exps, err := s.Experiences(ctx, bank)
	if err != nil {
		return nil, err
	}
	return &BankDump{Context: bank, Reflections: refl, Directives: dirs, Experiences: exps}, nil
}

// ImportBank replaces a memory bank by d (its context names the bank):
// reflections, directives and lessons, and the record of which
// reflections were applied, so that a reflection already in it is not
// applied again.
func (s *Store) ImportBank(ctx context.Context, d *BankDump) error {
	if err := messages.ValidateCampaignID(d.Context); err != nil {
		return fmt.Errorf("bank context %q: %w", d.Context, err)
	}
	for i, e := range d.Experiences {
		if e.Key == "" || strings.TrimSpace(e.Text) == "" {
			return fmt.Errorf("bank %s: experience %d has no key or no text", d.Context, i)
		}
	}
	for i, dir := range d.Directives {
		if err := dir.Validate(); err != nil {
			return fmt.Errorf("bank %s: directive %d: %w", d.Context, i, err)
		}
	}
	keys := []string{s.mk(d.Context, "reflections"), s.mk(d.Context, "directives"), s.mk(d.Context, "experiences"), s.mk(d.Context, "applied")}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, keys...)
		for _, r := range d.Reflections {
			b, _ := json.Marshal(r)
			p.RPush(ctx, keys[0], string(b))
			p.SAdd(ctx, keys[3], r.MsgID())
		}
		for _, dir := range d.Directives {
			b, _ := json.Marshal(dir)
			p.HSet(ctx, keys[1], dir.Key(), string(b))
		}
		for _, e := range d.Experiences {
			b, _ := json.Marshal(e)
			p.HSet(ctx, keys[2], e.Key, string(b))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: import memory bank %s: %w", d.Context, err)
	}
	return nil
}
