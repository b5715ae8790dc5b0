package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Snapshot is every key of a store's namespace and its value: what an
// interrupted local run keeps of its in-memory store, so that it can be
// resumed (crucible local --resume). Keys are relative to the namespace.
type Snapshot struct {
	Keys []SnapshotKey `json:"keys"`
}

// SnapshotKey is one key of a Snapshot, with the value of its type.
type SnapshotKey struct {
	Key    string            `json:"key"`
	Type   string            `json:"type"`
	String string            `json:"string,omitempty"`
	Hash   map[string]string `json:"hash,omitempty"`
	List   []string          `json:"list,omitempty"`
	Set    []string          `json:"set,omitempty"`
	ZSet   []SnapshotMember  `json:"zset,omitempty"`
}

// SnapshotMember is a member of a sorted set.
type SnapshotMember struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// Snapshot reads every key of the namespace. Take it when nothing writes
// (the services stopped): it is not atomic.
func (s *Store) Snapshot(ctx context.Context) (*Snapshot, error) {
	var keys []string
	iter := s.rdb.Scan(ctx, 0, s.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("store: snapshot: %w", err)
	}
	snap := &Snapshot{}
	for _, k := range keys {
		typ, err := s.rdb.Type(ctx, k).Result()
		if err != nil {
			return nil, fmt.Errorf("store: snapshot %s: %w", k, err)
		}
		sk := SnapshotKey{Key: strings.TrimPrefix(k, s.prefix), Type: typ}
		switch typ {
		case "string":
			sk.String, err = s.rdb.Get(ctx, k).Result()
		case "hash":
			sk.Hash, err = s.rdb.HGetAll(ctx, k).Result()
		case "list":
			sk.List, err = s.rdb.LRange(ctx, k, 0, -1).Result()
		case "set":
			sk.Set, err = s.rdb.SMembers(ctx, k).Result()
		case "zset":
			var zs []redis.Z
			zs, err = s.rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, z := range zs {
				sk.ZSet = append(sk.ZSet, SnapshotMember{Member: z.Member.(string), Score: z.Score})
			}
		case "none":
			continue // expired meanwhile
		default:
			return nil, fmt.Errorf("store: snapshot %s: keys of type %s are not kept", k, typ)
		}
		if err != nil {
			return nil, fmt.Errorf("store: snapshot %s: %w", k, err)
		}
		snap.Keys = append(snap.Keys, sk)
	}
	return snap, nil
}

// Restore writes a snapshot's keys into the namespace, replacing keys of
// the same names. Large values are written in parts (an embedded server's
// pipe would time out on one command of megabytes).
func (s *Store) Restore(ctx context.Context, snap *Snapshot) error {
	const part = 256
	for _, sk := range snap.Keys {
		k := s.prefix + sk.Key
		err := s.rdb.Del(ctx, k).Err()
		var args []any
		var write func(args []any) error
		switch sk.Type {
		case "string":
			if err == nil {
				err = s.rdb.Set(ctx, k, sk.String, 0).Err()
			}
		case "hash":
			for f, v := range sk.Hash {
				args = append(args, f, v)
			}
			write = func(a []any) error { return s.rdb.HSet(ctx, k, a...).Err() }
		case "list":
			args = toAny(sk.List)
			write = func(a []any) error { return s.rdb.RPush(ctx, k, a...).Err() }
		case "set":
			args = toAny(sk.Set)
			write = func(a []any) error { return s.rdb.SAdd(ctx, k, a...).Err() }
		case "zset":
			for _, m := range sk.ZSet {
				args = append(args, redis.Z{Member: m.Member, Score: m.Score})
			}
			write = func(a []any) error {
				zs := make([]redis.Z, len(a))
				for i, z := range a {
					zs[i] = z.(redis.Z)
				}
				return s.rdb.ZAdd(ctx, k, zs...).Err()
			}
		default:
			err = fmt.Errorf("unknown type %q", sk.Type)
		}
		step := part
		if sk.Type == "hash" {
			step = 2 * part // field, value
		}
		for i := 0; err == nil && write != nil && i < len(args); i += step {
			err = write(args[i:min(i+step, len(args))])
		}
		if err != nil {
			return fmt.Errorf("store: restore %s: %w", sk.Key, err)
		}
	}
	return nil
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
