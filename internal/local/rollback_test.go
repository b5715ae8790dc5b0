package local_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// redisCopy is a copy of every key of a store: what a snapshot of the
// server holds of it.
type redisCopy map[string]func(ctx context.Context, rdb redis.UniversalClient) error

// copyKeys copies every key of s (strings, hashes, lists, sets and sorted
// sets, which are all the store uses), in one MULTI so the copy is of one
// moment, as a snapshot is.
func copyKeys(t *testing.T, s *store.Store) redisCopy {
	t.Helper()
	ctx := context.Background()
	rdb := s.Client()
	var keys []string
	iter := rdb.Scan(ctx, 0, s.Prefix()+"*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	types := make([]*redis.StatusCmd, len(keys))
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			types[i] = p.Type(ctx, k)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	out := redisCopy{}
	cmds := make([]redis.Cmder, len(keys))
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			switch types[i].Val() {
			case "string":
				cmds[i] = p.Get(ctx, k)
			case "hash":
				cmds[i] = p.HGetAll(ctx, k)
			case "list":
				cmds[i] = p.LRange(ctx, k, 0, -1)
			case "set":
				cmds[i] = p.SMembers(ctx, k)
			case "zset":
				cmds[i] = p.ZRangeWithScores(ctx, k, 0, -1)
			}
		}
		return nil
	}); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		switch c := cmds[i].(type) {
		case *redis.StringCmd:
			v := c.Val()
			out[k] = func(ctx context.Context, r redis.UniversalClient) error { return r.Set(ctx, k, v, 0).Err() }
		case *redis.MapStringStringCmd:
			v := c.Val()
			out[k] = func(ctx context.Context, r redis.UniversalClient) error { return r.HSet(ctx, k, v).Err() }
		case *redis.StringSliceCmd:
			v := c.Val()
			if types[i].Val() == "list" {
				out[k] = func(ctx context.Context, r redis.UniversalClient) error { return r.RPush(ctx, k, toAny(v)...).Err() }
			} else {
				out[k] = func(ctx context.Context, r redis.UniversalClient) error { return r.SAdd(ctx, k, toAny(v)...).Err() }
			}
		case *redis.ZSliceCmd:
			v := c.Val()
			out[k] = func(ctx context.Context, r redis.UniversalClient) error { return r.ZAdd(ctx, k, v...).Err() }
		case nil:
			t.Fatalf("key %s of type %s: not copied", k, types[i].Val())
		}
	}
	return out
}

func toAny(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// restore replaces every key of s with the copy.
func (c redisCopy) restore(t *testing.T, s *store.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.DeleteNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	for k, set := range c {
		if err := set(ctx, s.Client()); err != nil {
			t.Fatalf("restore %s: %v", k, err)
		}
	}
}

// TestRedisRollback plays Redis coming back from an earlier state while
// the streams keep going — a snapshot taken while a campaign runs, more
// work recorded, then the server "restarted" from the snapshot (a new
// server run: a power loss, or a failover to a replica that lagged) —
// and checks that the services wait, the reflector reconciles Redis with
// the streams, and the campaign completes with every candidate evaluated
// and counted exactly once, the judge's verdicts all counted, and nothing
// dead-lettered as forged. "lost" plays a Redis that lost everything (no
// AOF, no backup): no state, no reconciliation mark, while the streams
// hold the campaigns; it is rebuilt from the streams the same way.
func TestRedisRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the Redis rollback test")
	}
	for name, opts := range servers(t) {
		for _, lost := range []bool{false, true} {
			sub := name
			if lost {
				sub += "-lost"
			}
			t.Run(sub, func(t *testing.T) { rollback(t, opts, lost) })
		}
	}
}

func rollback(t *testing.T, opts local.Options, lostAll bool) {
	st := start(t, opts)
	var run atomic.Value
	run.Store("run-1")
	var down atomic.Bool
	hook := func(context.Context) (string, error) {
		if down.Load() {
			return "", errors.New("connection refused")
		}
		return run.Load().(string), nil
	}
	st.Store.DetectRestartsBy(hook)
	spec := &messages.CampaignSpec{ID: "rollback", Task: easyTask(), Budget: 400, Seed: 11}
	type outcome struct {
		res *local.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := local.Run(context.Background(), st, spec, local.RunOptions{Timeout: 6 * time.Minute})
		done <- outcome{res, err}
	}()
	ctx := context.Background()
	evaluated := func() int {
		s, err := st.Store.State(ctx, spec.ID)
		if err != nil {
			return 0
		}
		return s.Counters.Evaluated
	}
	waitFor := func(n int) {
		deadline := time.Now().Add(3 * time.Minute)
		for evaluated() < n {
			if time.Now().After(deadline) {
				t.Fatalf("only %d evaluated, waiting for %d", evaluated(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor(40)
	snap := copyKeys(t, st.Store)
	if lostAll {
		snap = redisCopy{}
	}
	at := evaluated()
	// A second campaign started after the snapshot: Redis forgets
	// it altogether.
	late := &messages.CampaignSpec{ID: "rollback-late", Task: easyTask(), Budget: 30, Seed: 12}
	lateDone := make(chan outcome, 1)
	go func() {
		res, err := local.Run(context.Background(), st, late, local.RunOptions{Timeout: 6 * time.Minute})
		lateDone <- outcome{res, err}
	}()
	for {
		if s, err := st.Store.State(ctx, late.ID); err == nil && s.Counters.Evaluated > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	waitFor(at + 20)
	// The restart: Redis goes down (the services stop fetching;
	// what their work in flight writes is lost), comes back from
	// the snapshot as another server run, and the services' next
	// connection tells them so.
	down.Store(true)
	st.Store.DetectRestartsBy(hook)
	time.Sleep(1500 * time.Millisecond)
	lost := evaluated() - at
	snap.restore(t, st.Store)
	run.Store("run-2")
	down.Store(false)
	st.Store.DetectRestartsBy(hook)
	if lostAll {
		lost, at = at+lost, 0
	}
	t.Logf("rolled back from %d to %d evaluations", at+lost, at)

	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if l := <-lateDone; l.err != nil {
		t.Errorf("the campaign started after the snapshot: %v", l.err)
	} else if l.res.Summary.Evaluated != late.Budget {
		t.Errorf("the campaign started after the snapshot evaluated %d of %d", l.res.Summary.Evaluated, late.Budget)
	}
	res := out.res
	if res.Summary.Evaluated != spec.Budget {
		t.Errorf("evaluated %d, budget %d", res.Summary.Evaluated, spec.Budget)
	}
	seen := map[string]int{}
	for _, ev := range res.Evaluations {
		seen[ev.ID]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("candidate %s evaluated %d times", id, n)
		}
	}
	if len(seen) != spec.Budget {
		t.Errorf("%d distinct candidates evaluated, budget %d", len(seen), spec.Budget)
	}
	// The run ends on the campaign's completion on the stream; Redis
	// has it once reconciled.
	deadline := time.Now().Add(time.Minute)
	for st.Store.Ready(ctx) != nil || evaluated() < spec.Budget {
		if time.Now().After(deadline) {
			t.Fatalf("Redis not reconciled a minute after the run: %v, %d evaluated", st.Store.Ready(ctx), evaluated())
		}
		time.Sleep(50 * time.Millisecond)
	}
	state, err := st.Store.State(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if state.Counters.Evaluated != spec.Budget {
		t.Errorf("Redis counts %d evaluated, budget %d", state.Counters.Evaluated, spec.Budget)
	}
	if got, want := state.Counters.Discoveries, len(res.Discoveries); got != want {
		t.Errorf("Redis counts %d discoveries, the stream has %d", got, want)
	}
	letters := deadLetters(t, st, 2*time.Second, func([]messages.DeadLetter) bool { return false })
	for _, l := range letters {
		t.Errorf("dead letter on %s: %s", l.Subject, l.Reason)
	}
	if lost == 0 {
		t.Log("nothing was recorded between the snapshot and the restart: the test did not roll anything back")
	}
	t.Logf("rollback: %d evaluations lost by Redis and re-applied; %d evaluated, %d discoveries", lost, state.Counters.Evaluated, len(res.Discoveries))
}
