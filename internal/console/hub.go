package console

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// hub reads the campaigns' states once for every event stream open: one
// poller, started by the first subscriber and stopped with the last, hands
// each subscriber the campaigns that changed. A subscriber that is slow to
// read gets only each campaign's latest state, never a backlog.
type hub struct {
	read func(context.Context) ([]Campaign, error)

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	stop   context.CancelFunc
	last   map[string]Campaign
	keys   map[string]string
	period time.Duration
}

// subscriber is one event stream's view of the hub.
type subscriber struct {
	filter  string // a campaign id, or "*"
	mu      sync.Mutex
	pending map[string]Campaign
	notify  chan struct{} // a value when pending is not empty
}

func (s *subscriber) put(c Campaign) {
	if s.filter != "*" && s.filter != c.Campaign {
		return
	}
	s.mu.Lock()
	s.pending[c.Campaign] = c
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// take returns the pending campaigns in id order and empties them.
func (s *subscriber) take() []Campaign {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Campaign, 0, len(s.pending))
	for _, c := range s.pending {
		out = append(out, c)
	}
	clear(s.pending)
	sort.Slice(out, func(i, j int) bool { return out[i].Campaign < out[j].Campaign })
	return out
}

// subscribe adds a subscriber for filter, handed every campaign's last
// known state at once; done removes it.
func (h *hub) subscribe(filter string) (sub *subscriber, done func()) {
	sub = &subscriber{filter: filter, pending: map[string]Campaign{}, notify: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs, h.last, h.keys = map[*subscriber]struct{}{}, map[string]Campaign{}, map[string]string{}
	}
	for _, c := range h.last {
		sub.put(c)
	}
	h.subs[sub] = struct{}{}
	if h.stop == nil {
		ctx, cancel := context.WithCancel(context.Background())
		h.stop = cancel
		go h.poll(ctx)
	}
	return sub, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs, sub)
		if len(h.subs) == 0 && h.stop != nil {
			h.stop()
			h.stop = nil
		}
	}
}

// poll reads the campaigns every period until ctx ends, handing the
// subscribers those whose state, counters or budget changed.
func (h *hub) poll(ctx context.Context) {
	t := time.NewTicker(h.period)
	defer t.Stop()
	for {
		if cs, err := h.read(ctx); err == nil && ctx.Err() == nil {
			h.mu.Lock()
			for _, c := range cs {
				key := fmt.Sprintf("%s %+v %d", c.State, c.Counters, c.Budget)
				if h.keys[c.Campaign] == key {
					continue
				}
				h.keys[c.Campaign], h.last[c.Campaign] = key, c
				for s := range h.subs {
					s.put(c)
				}
			}
			h.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
