package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis restored from an earlier state.
//
// Redis keeps the working state; the NATS streams keep the record of
// what happened (the proposers' journal of recorded generations, every
// evaluation, every verdict, every lifecycle action). A Redis that comes
// back from a snapshot or a truncated AOF, or a replica promoted while it
// lagged, has forgotten the last seconds while the streams kept them:
// work acknowledged in NATS would be missing from Redis for good, and
// candidates the proposer recorded would look forged. So the services
// consume only while the state is reconciled for the Redis server they
// talk to: the key "reconciled" names the run (the server's run_id) for
// which the reflector last reconciled Redis with the streams. A restarted
// or promoted server has another run_id; until the reflector has
// re-applied what the streams hold and Redis lacks, Ready fails and the
// services wait (internal/bus RunOptions.Ready).
//
// A Redis that lost everything (no AOF, no backup) has no mark either,
// as a new installation has. The streams tell them apart: with a
// history (Options.History: campaigns were submitted), a state without a
// mark is a lost one, reconciled like a restored one.

// ErrNotReconciled is Ready's error while the state waits for the
// reflector's reconciliation.
var ErrNotReconciled = errors.New("Redis state not reconciled with the streams yet: Redis was restarted or replaced, and the reflector reconciles it")

// gateRecheck is how long a successful Ready is trusted without asking
// Redis again; a new connection (after a restart or failover) makes the
// next Ready ask at once.
const gateRecheck = time.Second

// gate caches Ready's answer.
type gate struct {
	mu      sync.Mutex
	checked time.Time
	err     error
	// stale: a new connection was opened since the last check (set from
	// go-redis's OnConnect, which may run while Ready holds mu).
	stale atomic.Bool
	// runID, when set, replaces the server's run_id (DetectRestartsBy).
	runID atomic.Pointer[func(ctx context.Context) (string, error)]
	// off: the server tells no run_id (an embedded server, or a user
	// without INFO); there is nothing to detect restarts with.
	off bool
	// history, when set, tells whether the streams hold a history (a
	// submission): a state without a mark is then lost, not new.
	history atomic.Pointer[func(ctx context.Context) (bool, error)]
}

// markIfNew marks a new installation's state reconciled for the server
// now answering as the store opens (Options.History): no mark, and no
// history in the streams (what Reconciling does then). A submission that
// comes before would make the state look lost (harmlessly: the reflector
// reconciles it, finding nothing to re-apply); a store of a service
// usually opens first. Any error leaves it to Ready and the reflector.
func (s *Store) markIfNew(ctx context.Context) {
	if s.gate.history.Load() != nil {
		_, _, _ = s.Reconciling(ctx)
	}
}

// reconciledFor says whether the state is reconciled for the server run
// run, from the answer to reading its mark (marked, err): nil when it is
// (or is a new installation's, unmarked), ErrNotReconciled when it was
// reconciled for another run or is lost, else why it could not be told.
func (s *Store) reconciledFor(ctx context.Context, run, marked string, err error) error {
	switch {
	case errors.Is(err, redis.Nil):
		return s.unmarked(ctx, run)
	case err != nil:
		return fmt.Errorf("store: is the state reconciled: %w", err)
	case marked != run:
		return fmt.Errorf("%w (server run %.8s…, state last reconciled for run %.8s…)", ErrNotReconciled, run, marked)
	}
	return nil
}

// unmarked says what a state without a reconciliation mark is: nil for a
// new installation's (no history in the streams, or none to ask),
// ErrNotReconciled for a lost one.
func (s *Store) unmarked(ctx context.Context, run string) error {
	f := s.gate.history.Load()
	if f == nil {
		return nil
	}
	had, err := (*f)(ctx)
	if err != nil {
		return fmt.Errorf("store: is the state reconciled: the streams' history: %w", err)
	}
	if had {
		return fmt.Errorf("%w (server run %.8s… holds no state while the streams hold campaigns: Redis lost everything)", ErrNotReconciled, run)
	}
	return nil
}

func (s *Store) reconciledKey() string    { return s.prefix + "reconciled" }
func (s *Store) reconcileLockKey() string { return s.prefix + "reconcile-lock" }
func (s *Store) markStale()               { s.gate.stale.Store(true) }
func (s *Store) isCluster() bool          { _, ok := s.rdb.(*redis.ClusterClient); return ok }

// DetectRestartsBy makes run tell which server run answers, instead of
// INFO's run_id: for a server that tells none (an embedded one) and for
// tests that play a restart from an earlier state.
func (s *Store) DetectRestartsBy(run func(ctx context.Context) (string, error)) {
	s.gate.runID.Store(&run)
	s.gate.mu.Lock()
	s.gate.off = false
	s.gate.mu.Unlock()
	s.markStale()
}

// RunID returns the Redis server's run id, "" when it does not tell (an
// embedded server, Redis Cluster, or a user not allowed INFO).
func (s *Store) RunID(ctx context.Context) (string, error) { return s.runOf(ctx, s.rdb) }

// runOf is RunID asked through c (the client, or a new connection).
func (s *Store) runOf(ctx context.Context, c interface {
	Info(context.Context, ...string) *redis.StringCmd
}) (string, error) {
	if f := s.gate.runID.Load(); f != nil {
		return (*f)(ctx)
	}
	if s.isCluster() {
		return "", nil
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		msg := strings.ToLower(err.Error())
		if strings.Contains(msg, "not supported") || strings.Contains(msg, "noperm") || strings.Contains(msg, "unknown command") {
			return "", nil
		}
		return "", err
	}
	return runIDOf(info), nil
}

// Ready returns nil when the state may be used: Redis's state has been
// reconciled with the streams for the server now answering (or there is
// nothing to tell restarts by), else ErrNotReconciled (or why Redis could
// not be asked). A state never marked is ready when it is a new
// installation's (the reflector marks it), not when the streams hold a
// history (Options.History): Redis lost everything.
func (s *Store) Ready(ctx context.Context) error {
	g := &s.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.off {
		return nil
	}
	again := gateRecheck
	if g.err != nil {
		again = 200 * time.Millisecond
	}
	if !g.stale.Swap(false) && !g.checked.IsZero() && time.Since(g.checked) < again {
		return g.err
	}
	g.checked = time.Now()
	run, err := s.RunID(ctx)
	if err != nil {
		g.err = fmt.Errorf("store: is the state reconciled: %w", err)
		return g.err
	}
	if run == "" {
		g.off, g.err = true, nil
		return nil
	}
	marked, err := s.rdb.Get(ctx, s.reconciledKey()).Result()
	g.err = s.reconciledFor(ctx, run, marked, err)
	return g.err
}

// Reconciling says whether the state must be reconciled before use, and
// for which server run: the key "reconciled" names another run, or there
// is none while the streams hold a history (Options.History: Redis lost
// everything). A state never marked, of an installation without a
// history, is marked for this run and needs nothing.
func (s *Store) Reconciling(ctx context.Context) (run string, due bool, err error) {
	run, err = s.RunID(ctx)
	if err != nil || run == "" {
		return "", false, err
	}
	// The mark is read first: the reflector asks twice a second, and a
	// state marked for this run (nearly always) needs nothing more.
	marked, err := s.rdb.Get(ctx, s.reconciledKey()).Result()
	switch {
	case err == nil:
		return run, marked != run, nil
	case !errors.Is(err, redis.Nil):
		return "", false, fmt.Errorf("store: is the state reconciled: %w", err)
	}
	if err := s.unmarked(ctx, run); errors.Is(err, ErrNotReconciled) {
		return run, true, nil
	} else if err != nil {
		return "", false, err
	}
	set, err := s.rdb.SetNX(ctx, s.reconciledKey(), run, 0).Result()
	if err != nil {
		return "", false, fmt.Errorf("store: mark the state reconciled: %w", err)
	}
	if set {
		s.markStale()
		return run, false, nil
	}
	return s.Reconciling(ctx) // marked meanwhile by another replica
}

// LockReconcile takes the reconciliation lock for ttl (one reflector
// replica reconciles; the others wait), reporting whether it got it.
func (s *Store) LockReconcile(ctx context.Context, owner string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, s.reconcileLockKey(), owner, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("store: reconciliation lock: %w", err)
	}
	return ok, nil
}

// UnlockReconcile releases the lock if owner still holds it.
func (s *Store) UnlockReconcile(ctx context.Context, owner string) error {
	return scriptUnlock.Run(ctx, s.rdb, []string{s.reconcileLockKey()}, owner).Err()
}

func (s *Store) submitLockKey() string { return s.prefix + "submit-lock" }

// submitLockTTL bounds how long a proposer that died holding the
// submission lock keeps the others waiting.
const submitLockTTL = 10 * time.Second

// LockSubmissions waits for the installation's submission lock, under
// which a proposer counts the running campaigns against the operator's
// limits and creates the new one, so that two submissions accepted at
// once cannot both take the last place; it returns the function that
// releases the lock. It gives up when ctx ends.
func (s *Store) LockSubmissions(ctx context.Context) (unlock func(), err error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	owner := hex.EncodeToString(b[:])
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		ok, err := s.rdb.SetNX(ctx, s.submitLockKey(), owner, submitLockTTL).Result()
		if err != nil {
			return nil, fmt.Errorf("store: submission lock: %w", err)
		}
		if ok {
			return func() {
				_ = scriptUnlock.Run(context.WithoutCancel(ctx), s.rdb, []string{s.submitLockKey()}, owner).Err()
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("store: submission lock: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

var scriptUnlock = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`)

// MarkReconciled records that the state is reconciled for server run run.
func (s *Store) MarkReconciled(ctx context.Context, run string) error {
	if err := s.rdb.Set(ctx, s.reconciledKey(), run, 0).Err(); err != nil {
		return fmt.Errorf("store: mark the state reconciled: %w", err)
	}
	s.markStale()
	return nil
}

// RestoreReservation restores the reservation of generation g of a
// campaign from the streams (a generation request still queued, or the
// journal of a recorded generation) when Redis has lost it: the
// generation's slots and episode, its trigger's answer, the campaign's
// next generation number, the episode's reserved slots and the
// generations in flight — what reserving it did. A generation Redis still
// knows, a trigger Redis has another generation for, and a reservation
// beyond the episode's budget are left alone. It reports whether it
// restored anything.
func (s *Store) RestoreReservation(ctx context.Context, campaign string, g Generation, trigger string) (bool, error) {
	res, err := scriptRestoreReservation.Run(ctx, s.rdb, []string{s.stateKey(campaign), s.triggersKey(campaign), s.gensKey(campaign)},
		g.Generation, g.Slots, g.Episode, trigger).Int()
	if err != nil {
		return false, fmt.Errorf("store: restore generation %d of %s: %w", g.Generation, campaign, err)
	}
	return res == 1, nil
}

// scriptRestoreReservation: KEYS state, triggers, gens; ARGV g, slots,
// episode, trigger. Returns 1 when restored, 0 when Redis knew the
// generation or has another for the trigger, -1 when the episode's budget
// has no room for it (a genuine reservation always had).
var scriptRestoreReservation = redis.NewScript(luaPrelude + `
local triggers, gens = KEYS[2], KEYS[3]
local g, slots, ep, trigger = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
if hget(gens, g .. ':slots') then return 0 end
if trigger ~= '' and hget(triggers, trigger) then return 0 end
if num('ep' .. ep .. '_reserved') + slots > epBudget(ep) then return -1 end
hset(gens, g .. ':slots', slots)
hset(gens, g .. ':ep', ep)
hset(gens, g .. ':trigger', trigger)
if trigger ~= '' then hset(triggers, trigger, g .. ':' .. slots .. ':' .. ep) end
if tonumber(g) + 1 > num('next_gen') then hset(st, 'next_gen', tonumber(g) + 1) end
hincr(st, 'ep' .. ep .. '_reserved', slots)
hincr(st, 'inflight', 1)
flush()
return 1
`)

// GenerationRecorded reports, for each generation, whether Redis holds
// its recorded proposal (its accepted list).
func (s *Store) GenerationRecorded(ctx context.Context, campaign string, gs []int) ([]bool, error) {
	if len(gs) == 0 {
		return nil, nil
	}
	fields := make([]string, len(gs))
	for i, g := range gs {
		fields[i] = strconv.Itoa(g) + ":accepted"
	}
	vals, err := s.rdb.HMGet(ctx, s.gensKey(campaign), fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("store: generations of %s: %w", campaign, err)
	}
	out := make([]bool, len(gs))
	for i, v := range vals {
		out[i] = v != nil
	}
	return out, nil
}

// Evaluated reports, for each candidate id, whether Redis holds its
// recorded evaluation.
func (s *Store) Evaluated(ctx context.Context, campaign string, ids []string) ([]bool, error) {
	out := make([]bool, len(ids))
	for i := 0; i < len(ids); i += 512 {
		part := ids[i:min(i+512, len(ids))]
		vals, err := s.rdb.HMGet(ctx, s.evaluatedKey(campaign), part...).Result()
		if err != nil {
			return nil, fmt.Errorf("store: evaluations of %s: %w", campaign, err)
		}
		for k, v := range vals {
			out[i+k] = v != nil
		}
	}
	return out, nil
}

// newClient makes a client with the store's options; every new
// connection makes Ready ask again (it may reach another server: a
// restart, a failover), and a fenced client refuses a connection to a
// server whose state is not reconciled.
func (s *Store) newClient(fenced bool) redis.UniversalClient {
	uo := s.uo
	uo.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		s.markStale()
		if !fenced {
			return nil
		}
		return s.fence(ctx, cn)
	}
	return redis.NewUniversalClient(&uo)
}

// fence returns ErrNotReconciled when the server cn reaches has a state
// reconciled for another run, or lost (no mark, while the streams hold a
// history); nil when it is reconciled, new, or tells no run (nothing can
// be told then). When the server cannot
// answer — a restarted Redis still loading its files answers INFO but
// not GET — the connection is refused too: it would otherwise stay in
// the pool, unfenced, and reach the state once loaded, before the
// reflector has reconciled it.
func (s *Store) fence(ctx context.Context, cn *redis.Conn) error {
	run, err := s.runOf(ctx, cn)
	if err != nil {
		return fmt.Errorf("store: is the state reconciled: %w", err)
	}
	if run == "" {
		return nil
	}
	marked, err := cn.Get(ctx, s.reconciledKey()).Result()
	return s.reconciledFor(ctx, run, marked, err)
}

func runIDOf(info string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	return ""
}

// Unfenced returns a store on the same server and namespace whose
// connections are not fenced (the reflector's reconciliation, which must
// reach the state it reconciles); a store that is not fenced returns
// itself. Close it when done.
func (s *Store) Unfenced() *Store {
	if !s.fenced {
		return s
	}
	u := &Store{prefix: s.prefix, addr: s.addr, notify: s.notify, dial: s.dial, uo: s.uo}
	if f := s.gate.runID.Load(); f != nil {
		u.gate.runID.Store(f)
	}
	if f := s.gate.history.Load(); f != nil {
		u.gate.history.Store(f)
	}
	u.rdb = u.newClient(false)
	return u
}
