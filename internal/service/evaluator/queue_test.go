package evaluator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// recordingOracle answers each item with its stated formula as a reason,
// records the size of every call, and holds its first call until release
// is closed.
type recordingOracle struct {
	mu      sync.Mutex
	calls   []int
	release chan struct{}
	err     error
}

func (o *recordingOracle) Evaluate(ctx context.Context, items []Item) ([]Outcome, error) {
	o.mu.Lock()
	o.calls = append(o.calls, len(items))
	first := len(o.calls) == 1
	o.mu.Unlock()
	if first {
		<-o.release
	}
	if o.err != nil {
		return nil, o.err
	}
	outs := make([]Outcome, len(items))
	for i, it := range items {
		outs[i] = Outcome{Reasons: []messages.Reason{{Code: it.StatedFormula}}}
	}
	return outs, nil
}

func (o *recordingOracle) sizes() []int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]int(nil), o.calls...)
}

func items(prefix string, n int) []Item {
	out := make([]Item, n)
	for i := range out {
		out[i] = Item{StatedFormula: fmt.Sprintf("%s%d", prefix, i)}
	}
	return out
}

func (s *Service) queued() int {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	return len(s.queue)
}

type evalResult struct {
	outs    []Outcome
	elapsed time.Duration
	err     error
}

// startCalls starts one evaluate call per item count and waits until the
// first has reached the oracle and the others are queued behind it, in
// order.
func startCalls(t *testing.T, s *Service, o *recordingOracle, counts ...int) []chan evalResult {
	t.Helper()
	res := make([]chan evalResult, len(counts))
	for k, n := range counts {
		res[k] = make(chan evalResult, 1)
		go func() {
			outs, elapsed, err := s.evaluate(context.Background(), items(fmt.Sprintf("c%d-", k), n))
			res[k] <- evalResult{outs, elapsed, err}
		}()
		if k == 0 {
			waitUntil(t, func() bool { return len(o.sizes()) == 1 })
		} else {
			waitUntil(t, func() bool { return s.queued() == k }) // in order
		}
	}
	return res
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}

// Calls made while the oracle is busy are evaluated together in its next
// call, up to Batch candidates (whole calls, in order), and each gets its
// own outcomes and its share of the oracle's time.
func TestEvaluateCoalescesQueuedCalls(t *testing.T) {
	o := &recordingOracle{release: make(chan struct{})}
	s := New(nil, nil, o, zap.NewNop(), Config{Batch: 8})
	res := startCalls(t, s, o, 2, 2, 3, 2, 4)
	close(o.release)
	got := make([]evalResult, len(res))
	for k := range res {
		got[k] = <-res[k]
	}
	// The first call alone; then 2+3+2 = 7 (the next call, 4, would make
	// 11 > 8); then 4.
	if sizes := o.sizes(); fmt.Sprint(sizes) != "[2 7 4]" {
		t.Fatalf("oracle calls of %v candidates, want [2 7 4]", sizes)
	}
	for k, n := range []int{2, 2, 3, 2, 4} {
		r := got[k]
		if r.err != nil || len(r.outs) != n {
			t.Fatalf("call %d: %d outcomes, err %v; want %d", k, len(r.outs), r.err, n)
		}
		for i, out := range r.outs {
			if want := fmt.Sprintf("c%d-%d", k, i); out.Reasons[0].Code != want {
				t.Errorf("call %d item %d got the outcome of %s", k, i, out.Reasons[0].Code)
			}
		}
	}
	// Calls 1 and 3 (two candidates each) shared one oracle call with
	// call 2 (three): their time is 2/7 of it each.
	if d := got[1].elapsed*3 - got[2].elapsed*2; got[1].elapsed != got[3].elapsed || d < -3 || d > 3 {
		t.Errorf("shares of one oracle call: %v, %v, %v; want 2:3:2", got[1].elapsed, got[2].elapsed, got[3].elapsed)
	}
}

// An oracle failure reaches every call it served, and the queue goes on.
func TestEvaluateSharesErrors(t *testing.T) {
	boom := errors.New("oracle down")
	o := &recordingOracle{release: make(chan struct{}), err: boom}
	s := New(nil, nil, o, zap.NewNop(), Config{Batch: 16})
	res := startCalls(t, s, o, 1, 2, 3)
	close(o.release)
	for k := range res {
		if r := <-res[k]; !errors.Is(r.err, boom) || r.outs != nil {
			t.Errorf("call %d: outcomes %v, err %v; want the oracle's error", k, r.outs, r.err)
		}
	}
	if sizes := o.sizes(); fmt.Sprint(sizes) != "[1 5]" {
		t.Errorf("oracle calls of %v candidates, want [1 5]", sizes)
	}
}
