package client

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func connect(t *testing.T) *Client {
	t.Helper()
	url, _ := testsrv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := bus.Connect(ctx, bus.Options{URL: url, Name: t.Name(), Namespace: testsrv.Namespace(), MemoryStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.DeleteStreams(ctx); err != nil {
			t.Errorf("delete streams: %v", err)
		}
		b.Close()
	})
	return &Client{Bus: b}
}

func publish(t *testing.T, c *Client, campaign string, g int) {
	t.Helper()
	st := &messages.Status{Schema: messages.SchemaVersion, Campaign: campaign, State: messages.StateEpisode, Episode: g}
	if err := c.Bus.Publish(context.Background(), messages.Subject(messages.SubjectStatus, campaign), st); err != nil {
		t.Fatal(err)
	}
}

// episodes decodes the episode numbers of the status events Follow hands
// over.
func episodes(got *[]int, mu *sync.Mutex, stopAt int) func(string, []byte) (bool, error) {
	return func(_ string, data []byte) (bool, error) {
		var s messages.Status
		if err := messages.Decode(data, &s); err != nil {
			return false, err
		}
		mu.Lock()
		defer mu.Unlock()
		*got = append(*got, s.Episode)
		return s.Episode == stopAt, nil
	}
}

// TestFollowReadsToTheEnd: Follow with stopAtEnd reads every message of
// the filter in order and returns, also when the last message of the
// stream is another campaign's.
func TestFollowReadsToTheEnd(t *testing.T) {
	c := connect(t)
	for g := 0; g < 50; g++ {
		publish(t, c, "a", g)
	}
	publish(t, c, "b", 0)
	var mu sync.Mutex
	var got []int
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Follow(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, "a"), true, episodes(&got, &mu, -1)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 50 || got[0] != 0 || got[49] != 49 {
		t.Fatalf("read %d messages (%v), want episodes 0..49", len(got), got)
	}
	// A filter without messages returns too.
	got = nil
	if err := c.Follow(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, "none"), true, episodes(&got, &mu, -1)); err != nil || len(got) != 0 {
		t.Fatalf("empty filter: %v %v", got, err)
	}
}

// TestFollowNewSkipsThePast: FollowNew hands over only messages published
// after it started, until the callback says done.
func TestFollowNewSkipsThePast(t *testing.T) {
	c := connect(t)
	for g := 0; g < 5; g++ {
		publish(t, c, "a", g)
	}
	var mu sync.Mutex
	var got []int
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	subscribed := make(chan struct{})
	go func() {
		done <- c.FollowNew(ctx, messages.StreamCampaigns, messages.Subject(messages.SubjectStatus, "a"), func() { close(subscribed) }, episodes(&got, &mu, 9))
	}()
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("FollowNew returned before subscribing: %v", err)
	}
	for g := 5; g < 10; g++ {
		publish(t, c, "a", g)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 5 || got[0] != 5 || got[4] != 9 {
		t.Fatalf("followed %v, want episodes 5..9", got)
	}
}

// TestControlNote: what an applied lifecycle action says it left to
// happen.
func TestControlNote(t *testing.T) {
	for _, c := range []struct {
		verb string
		r    store.ControlResult
		x    Extension
		want string
	}{
		{"pause", store.ControlResult{}, Extension{}, " (nothing to do)"},
		{"pause", store.ControlResult{Changed: true}, Extension{}, ""},
		{"cancel", store.ControlResult{Changed: true}, Extension{}, ": in-flight work is being evaluated; the final summary follows (crucible campaign show)"},
		{"cancel", store.ControlResult{Changed: true, Finish: true}, Extension{}, ""},
		{"extend", store.ControlResult{Changed: true}, Extension{Budget: 40}, ", budget 40"},
		{"extend", store.ControlResult{Changed: true}, Extension{Budget: 40, OldMaxLLMCalls: 40, MaxLLMCalls: 80, MaxLLMTokens: 9000},
			", budget 40, max_llm_calls 40 → 80, max_llm_tokens unbounded → 9000"},
		{"extend", store.ControlResult{}, Extension{Budget: 40, MaxLLMCalls: 80}, " (nothing to do)"},
	} {
		if got := ControlNote(c.verb, c.r, &c.x); got != c.want {
			t.Errorf("%s %+v: %q, want %q", c.verb, c.r, got, c.want)
		}
	}
}
