package store

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testsrv"
)

// TestReadyFollowsServerRuns: a state never marked is ready; the
// reflector's first look marks it for the server's run; another run (a
// restart, a failover) makes it wait until it is marked reconciled for
// that run; a server that tells no run never waits.
func TestReadyFollowsServerRuns(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("a store without run ids: %v", err)
	}
	var run atomic.Value
	run.Store("run-1")
	s.DetectRestartsBy(func(context.Context) (string, error) { return run.Load().(string), nil })
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("never marked: %v", err)
	}
	if r, due, err := s.Reconciling(ctx); err != nil || due || r != "run-1" {
		t.Fatalf("first look: run %q due %v %v, want run-1, not due", r, due, err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("marked for its run: %v", err)
	}
	run.Store("run-2")
	s.markStale() // what a new connection does
	if err := s.Ready(ctx); !errors.Is(err, ErrNotReconciled) {
		t.Fatalf("another run: %v, want ErrNotReconciled", err)
	}
	if r, due, err := s.Reconciling(ctx); err != nil || !due || r != "run-2" {
		t.Fatalf("another run: run %q due %v %v, want run-2, due", r, due, err)
	}
	ok, err := s.LockReconcile(ctx, "a", 0)
	if err != nil || !ok {
		t.Fatalf("lock: %v %v", ok, err)
	}
	if ok, err := s.LockReconcile(ctx, "b", 0); err != nil || ok {
		t.Fatalf("a second reconciler got the lock: %v %v", ok, err)
	}
	if err := s.MarkReconciled(ctx, "run-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.UnlockReconcile(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("reconciled: %v", err)
	}
	if _, due, err := s.Reconciling(ctx); err != nil || due {
		t.Fatalf("reconciled: due %v %v", due, err)
	}
	if ok, err := s.LockReconcile(ctx, "b", 0); err != nil || !ok {
		t.Fatalf("the lock was not released: %v %v", ok, err)
	}
}

// TestRestoreReservation: a reservation Redis lost comes back as
// reserving it had left it (the generation's slots and episode, its
// trigger's answer, the next generation number, the episode's reserved
// slots, the generations in flight), once; one Redis knows is untouched.
func TestRestoreReservation(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	sp := spec(t, "restore", 40, 4, 1)
	if _, err := s.CreateCampaign(ctx, sp, 0); err != nil {
		t.Fatal(err)
	}
	g0, ok, err := s.RequestGeneration(ctx, sp.ID, "start/0")
	if err != nil || !ok {
		t.Fatalf("reserve: %v %v", ok, err)
	}
	before, err := s.State(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RestoreReservation(ctx, sp.ID, g0, "start/0"); err != nil || ok {
		t.Fatalf("a reservation Redis knows was restored: %v %v", ok, err)
	}
	lost := Generation{Generation: g0.Generation + 2, Slots: 3, Episode: 0}
	for i, want := range []bool{true, false} {
		if ok, err := s.RestoreReservation(ctx, sp.ID, lost, "after/7"); err != nil || ok != want {
			t.Fatalf("restore %d: %v %v, want %v", i, ok, err, want)
		}
	}
	after, err := s.State(ctx, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Inflight != before.Inflight+1 || after.Int("next_gen") != lost.Generation+1 || after.Int("ep0_reserved") != before.Int("ep0_reserved")+3 {
		t.Errorf("after the restore: in flight %d (was %d), next_gen %d, ep0_reserved %d (was %d)",
			after.Inflight, before.Inflight, after.Int("next_gen"), after.Int("ep0_reserved"), before.Int("ep0_reserved"))
	}
	// The trigger answers with the restored generation, as it did.
	if g, ok, err := s.RequestGeneration(ctx, sp.ID, "after/7"); err != nil || !ok || g != lost {
		t.Errorf("trigger after/7: %+v %v %v, want %+v", g, ok, err, lost)
	}
	// The next reservation takes the number after it.
	if g, ok, err := s.RequestGeneration(ctx, sp.ID, "after/8"); err != nil || !ok || g.Generation != lost.Generation+1 {
		t.Errorf("next reservation: %+v %v %v, want generation %d", g, ok, err, lost.Generation+1)
	}
	if rec, err := s.GenerationRecorded(ctx, sp.ID, []int{g0.Generation, lost.Generation}); err != nil || rec[0] || rec[1] {
		t.Errorf("recorded proposals %v %v, want none", rec, err)
	}
}

// TestFencedStore: a fenced store's connections to a Redis whose state is
// marked reconciled for another server run are refused (the work a
// service had in flight across a restart cannot reach the restored
// state), its Ping still finds the server, its unfenced twin reaches it,
// and once the state is marked for the run it connects again. It needs a
// real Redis, whose run id the fence reads.
func TestFencedStore(t *testing.T) {
	url, real := testsrv.Redis(t)
	if !real {
		t.Skip("the embedded Redis has no run id to fence with (CRUCIBLE_TEST_REDIS_URL runs this)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ns := testsrv.Namespace()
	plain, err := Open(ctx, Options{URL: url, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.DeleteNamespace(context.Background()); plain.Close() })
	run, err := plain.RunID(ctx)
	if err != nil || run == "" {
		t.Fatalf("run id %q: %v", run, err)
	}
	if err := plain.MarkReconciled(ctx, "an earlier run"); err != nil {
		t.Fatal(err)
	}
	fenced, err := Open(ctx, Options{URL: url, Namespace: ns, Fenced: true})
	if err != nil {
		t.Fatalf("a fenced store must open while the state waits: %v", err)
	}
	defer fenced.Close()
	if _, err := fenced.Campaigns(ctx); !errors.Is(err, ErrNotReconciled) {
		t.Fatalf("fenced, unreconciled: %v, want ErrNotReconciled", err)
	}
	if err := fenced.Ready(ctx); err == nil {
		t.Fatal("fenced, unreconciled: ready")
	}
	u := fenced.Unfenced()
	defer u.Close()
	if r, due, err := u.Reconciling(ctx); err != nil || !due || r != run {
		t.Fatalf("unfenced: run %q due %v %v", r, due, err)
	}
	if err := u.MarkReconciled(ctx, run); err != nil {
		t.Fatal(err)
	}
	if _, err := fenced.Campaigns(ctx); err != nil {
		t.Fatalf("fenced, reconciled: %v", err)
	}
	if err := fenced.Ready(ctx); err != nil {
		t.Fatalf("fenced, reconciled: %v", err)
	}
}

// TestLockSubmissions: one holder at a time; the next waits for the
// release, and one that cannot get it gives up with its context.
func TestLockSubmissions(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	unlock, err := s.LockSubmissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := s.LockSubmissions(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second holder while the first holds it: %v", err)
	}
	got := make(chan time.Time, 1)
	go func() {
		u, err := s.LockSubmissions(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		u()
	}()
	time.Sleep(50 * time.Millisecond)
	released := time.Now()
	unlock()
	select {
	case at := <-got:
		if at.Before(released) {
			t.Error("the second holder got the lock before the first released it")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second holder did not get the released lock")
	}
	unlock() // a second release of a lock held by another is harmless
	u, err := s.LockSubmissions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u()
}

// TestReadyAfterTotalLoss: a state without a mark is a new installation's
// while the streams hold no history (marked as the store opens, or by the
// reflector's first look), and one Redis lost (not ready, due for
// reconciliation) while they do.
func TestReadyAfterTotalLoss(t *testing.T) {
	url, _ := testsrv.Redis(t)
	ctx := context.Background()
	var history atomic.Bool
	s, err := Open(ctx, Options{URL: url, Namespace: testsrv.Namespace(), History: func(context.Context) (bool, error) { return history.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.DeleteNamespace(ctx); s.Close() })
	// A server that tells its run (redis-server): the new installation is
	// marked for it as the store opens.
	if run, err := s.RunID(ctx); err != nil {
		t.Fatal(err)
	} else if run != "" {
		if marked, err := s.rdb.Get(ctx, s.reconciledKey()).Result(); err != nil || marked != run {
			t.Errorf("opened on a new installation: marked %q (%v), want the run %q", marked, err, run)
		}
	}
	s.DetectRestartsBy(func(context.Context) (string, error) { return "run-1", nil })
	lose := func() {
		t.Helper()
		if err := s.DeleteNamespace(ctx); err != nil {
			t.Fatal(err)
		}
		s.markStale()
	}
	lose() // no mark, no history: new
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("new, no history: %v", err)
	}
	if _, due, err := s.Reconciling(ctx); err != nil || due {
		t.Fatalf("new, no history: due %v %v", due, err)
	}
	lose()
	history.Store(true)
	if err := s.Ready(ctx); !errors.Is(err, ErrNotReconciled) {
		t.Fatalf("no mark, a history: %v, want ErrNotReconciled", err)
	}
	if r, due, err := s.Reconciling(ctx); err != nil || !due || r != "run-1" {
		t.Fatalf("no mark, a history: run %q due %v %v, want run-1, due", r, due, err)
	}
	if err := s.MarkReconciled(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("rebuilt and marked: %v", err)
	}
	if _, due, err := s.Reconciling(ctx); err != nil || due {
		t.Fatalf("rebuilt and marked: due %v %v", due, err)
	}
}
