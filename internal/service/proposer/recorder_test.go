package proposer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// fakeProposals records the batches it is given; a proposal of generation
// < 0 fails.
type fakeProposals struct {
	mu      sync.Mutex
	batches [][]int
	called  chan struct{} // when set, told of each call
	release chan struct{} // when set, each call waits for it
}

func (f *fakeProposals) RecordProposals(_ context.Context, _ string, ps []*store.Proposal) []store.Recorded {
	if f.called != nil {
		f.called <- struct{}{}
	}
	if f.release != nil {
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var gens []int
	out := make([]store.Recorded, len(ps))
	for i, p := range ps {
		gens = append(gens, p.Generation)
		if p.Generation < 0 {
			out[i].Err = errors.New("unknown generation")
			continue
		}
		out[i].Published = []*messages.Candidate{{ID: fmt.Sprint(p.Generation)}}
	}
	f.batches = append(f.batches, gens)
	return out
}

// TestRecorderGroupsConcurrentGenerations: proposals of generations begun
// together are recorded in one call once the last has finished; each gets
// its own result; a generation that gives up holds nobody up; a campaign
// with nothing in progress is forgotten.
func TestRecorderGroupsConcurrentGenerations(t *testing.T) {
	f := &fakeProposals{}
	// A wait far longer than the test: the batch must form because every
	// generation in progress queued, not because time ran out.
	r := newRecorder(f, time.Hour)
	ctx := context.Background()
	tickets := make([]*recordTicket, 5)
	for i := range tickets {
		tickets[i] = r.begin("c")
	}
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range 4 {
		wg.Go(func() {
			g := i
			if i == 2 {
				g = -1
			}
			pub, err := tickets[i].record(ctx, &store.Proposal{Generation: g})
			results[i] = fmt.Sprint(len(pub), err)
			if err == nil {
				results[i] = pub[0].ID
			}
		})
	}
	// Once the four proposals wait for it, the fifth generation gives up
	// (a redelivery of a recorded one, say).
	waitQueued(t, r, "c", 4)
	tickets[4].end()
	tickets[4].end() // ending twice changes nothing
	wg.Wait()
	if want := []string{"0", "1", "0 unknown generation", "3"}; !slices.Equal(results, want) {
		t.Errorf("results %q, want %q", results, want)
	}
	if len(f.batches) != 1 || len(f.batches[0]) != 4 {
		t.Fatalf("batches %v, want the four proposals in one", f.batches)
	}
	waitForget(t, r)
}

// TestRecorderWaitsNoLongerThanItsWait: a finished proposal does not wait
// for a generation still in progress beyond the recorder's wait; proposals
// queued while a call is in flight go together in the next.
func TestRecorderWaitsNoLongerThanItsWait(t *testing.T) {
	f := &fakeProposals{called: make(chan struct{}, 2), release: make(chan struct{})}
	r := newRecorder(f, 5*time.Millisecond)
	ctx := context.Background()
	slow := r.begin("c") // an LLM call, say, that takes long
	first := r.begin("c")
	done := make(chan error, 3)
	go func() { _, err := first.record(ctx, &store.Proposal{Generation: 1}); done <- err }()
	// The first call is in flight (held by release); two more queue.
	<-f.called
	a, b := r.begin("c"), r.begin("c")
	go func() { _, err := a.record(ctx, &store.Proposal{Generation: 2}); done <- err }()
	go func() { _, err := b.record(ctx, &store.Proposal{Generation: 3}); done <- err }()
	waitQueued(t, r, "c", 2)
	f.release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.release <- struct{}{}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	f.mu.Lock()
	batches := fmt.Sprint(f.batches)
	f.mu.Unlock()
	if batches != "[[1] [2 3]]" && batches != "[[1] [3 2]]" {
		t.Errorf("batches %s, want [1] then 2 and 3 together", batches)
	}
	slow.end()
	waitForget(t, r)
}

// TestRecorderGivesUpWithItsContext: a handler whose context ends stops
// waiting for the store.
func TestRecorderGivesUpWithItsContext(t *testing.T) {
	f := &fakeProposals{called: make(chan struct{}, 1), release: make(chan struct{})}
	r := newRecorder(f, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	tk := r.begin("c")
	done := make(chan error, 1)
	go func() { _, err := tk.record(ctx, &store.Proposal{Generation: 1}); done <- err }()
	<-f.called // the store call is in flight, held by release
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("record returned %v, want the context's error", err)
	}
	close(f.release)
	waitForget(t, r)
}

// waitQueued waits until n proposals of campaign wait in the recorder's
// queue.
func waitQueued(t *testing.T, r *recorder, campaign string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		queued := len(r.camps[campaign].queue)
		r.mu.Unlock()
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d proposals queued after 10 s, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitForget waits for the recorder to forget every campaign (its flushing
// goroutine exits after the store call returns).
func waitForget(t *testing.T, r *recorder) {
	t.Helper()
	for range 1000 {
		r.mu.Lock()
		n := len(r.camps)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the recorder still holds %d campaigns", len(r.camps))
}
