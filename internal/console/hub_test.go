package console

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

func TestHub(t *testing.T) {
	var mu sync.Mutex
	state := map[string]int{"a": 1, "b": 5}
	reads := 0
	h := &hub{period: time.Millisecond, read: func(context.Context) ([]Campaign, error) {
		mu.Lock()
		defer mu.Unlock()
		reads++
		var out []Campaign
		for _, id := range []string{"a", "b"} {
			out = append(out, Campaign{Campaign: id, Counters: messages.Counters{Evaluated: state[id]}})
		}
		return out, nil
	}}
	// next waits for the subscriber's next batch.
	next := func(s *subscriber) []Campaign {
		t.Helper()
		select {
		case <-s.notify:
			return s.take()
		case <-time.After(10 * time.Second):
			t.Fatal("no progress within 10 s")
			return nil
		}
	}
	all, doneAll := h.subscribe("*")
	// The first look hands over every campaign (maybe in two wake-ups:
	// the poller hands them one by one).
	first := map[string]int{}
	for len(first) < 2 {
		for _, c := range next(all) {
			first[c.Campaign] = c.Counters.Evaluated
		}
	}
	if first["a"] != 1 || first["b"] != 5 {
		t.Fatalf("first look %v, want a 1 and b 5", first)
	}
	onlyB, doneB := h.subscribe("b")
	if got := onlyB.take(); len(got) != 1 || got[0].Campaign != "b" {
		t.Fatalf("a new subscriber's snapshot %+v, want b alone", got)
	}
	// Three changes of a before the subscriber reads: the last one only.
	for n := 2; n <= 4; n++ {
		mu.Lock()
		state["a"] = n
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // let the poller see each value; the test is about coalescing
	}
	var got []Campaign
	for len(got) == 0 || got[len(got)-1].Counters.Evaluated != 4 {
		got = next(all)
	}
	if len(got) != 1 || got[0].Campaign != "a" {
		t.Errorf("changes of a: %+v", got)
	}
	if pending := onlyB.take(); len(pending) != 0 {
		t.Errorf("the subscriber of b got %+v", pending)
	}
	doneB()
	doneAll()
	// The poller stops with the last subscriber.
	mu.Lock()
	before := reads
	mu.Unlock()
	time.Sleep(50 * time.Millisecond) // nothing to wait for: the point is that nothing happens
	mu.Lock()
	after := reads
	mu.Unlock()
	if after > before+1 {
		t.Errorf("the poller read %d times after the last subscriber left", after-before)
	}
}
