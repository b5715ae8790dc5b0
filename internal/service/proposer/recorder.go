package proposer

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// recordWait bounds how long a finished proposal waits for the campaign's
// other generations in progress on this replica, so that they are recorded
// in one store call. Generation requests arrive in bursts (a batch of
// evaluations completes several generations at once), and the evolve
// generator takes about a millisecond each; an LLM generator takes seconds,
// so its proposals go on their own after this wait.
const recordWait = 5 * time.Millisecond

// maxRecordBatch bounds the proposals of one store call.
const maxRecordBatch = 32

var metricRecordBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
	Namespace: "crucible", Subsystem: "proposer", Name: "record_batch_proposals",
	Help:    "Generations' proposals recorded by one store call.",
	Buckets: []float64{1, 2, 3, 4, 6, 8, 12, 16, 24, 32},
})

// proposalStore records proposals; *store.Store is one.
type proposalStore interface {
	RecordProposals(ctx context.Context, campaign string, ps []*store.Proposal) []store.Recorded
}

// recorder records the proposals of the generations a replica handles at
// the same time in one store call (group commit): the proposal script is
// the proposer's one call per generation, and a call costs an embedded
// Redis-protocol server a fresh Lua interpreter, a real one a round trip.
// Proposals of one campaign recorded together are recorded in the order
// they finished, exactly as one call each would record them.
type recorder struct {
	store proposalStore
	wait  time.Duration
	mu    sync.Mutex
	camps map[string]*recordQueue
}

// recordQueue is one campaign's proposals waiting to be recorded.
type recordQueue struct {
	active  int // generations begun and neither queued nor given up
	queue   []*queuedProposal
	running bool          // a goroutine is recording the queue
	kick    chan struct{} // capacity 1: active or the queue changed
}

type queuedProposal struct {
	ctx  context.Context
	p    *store.Proposal
	done chan store.Recorded // capacity 1
}

func newRecorder(s proposalStore, wait time.Duration) *recorder {
	return &recorder{store: s, wait: wait, camps: map[string]*recordQueue{}}
}

// recordTicket is one generation's place in its campaign's queue: record
// its proposal, or end it when the generation records nothing.
type recordTicket struct {
	r        *recorder
	campaign string
	open     bool
}

// begin notes that a generation of campaign is being generated, so that
// proposals finished meanwhile wait (up to the recorder's wait) to be
// recorded with its own.
func (r *recorder) begin(campaign string) *recordTicket {
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.camps[campaign]
	if q == nil {
		q = &recordQueue{kick: make(chan struct{}, 1)}
		r.camps[campaign] = q
	}
	q.active++
	return &recordTicket{r: r, campaign: campaign, open: true}
}

// end gives the generation's place up, if it still holds it: proposals
// waiting for it go on without it.
func (t *recordTicket) end() {
	if !t.open {
		return
	}
	t.open = false
	r := t.r
	r.mu.Lock()
	defer r.mu.Unlock()
	q := r.camps[t.campaign]
	q.active--
	r.signal(t.campaign, q)
}

// record records p with whatever else of its campaign is ready and returns
// the candidates to publish, as store.RecordProposal would.
func (t *recordTicket) record(ctx context.Context, p *store.Proposal) ([]*messages.Candidate, error) {
	r := t.r
	qp := &queuedProposal{ctx: ctx, p: p, done: make(chan store.Recorded, 1)}
	r.mu.Lock()
	q := r.camps[t.campaign]
	if t.open {
		t.open = false
		q.active--
	}
	q.queue = append(q.queue, qp)
	if !q.running {
		q.running = true
		go r.flush(t.campaign, q)
	}
	r.signal(t.campaign, q)
	r.mu.Unlock()
	select {
	case res := <-qp.done:
		return res.Published, res.Err
	case <-ctx.Done():
		// The proposal may still be recorded; a redelivery of the request
		// publishes what was.
		return nil, ctx.Err()
	}
}

// signal wakes the campaign's flushing goroutine, and forgets a campaign
// with nothing in progress. Called with r.mu held.
func (r *recorder) signal(campaign string, q *recordQueue) {
	select {
	case q.kick <- struct{}{}:
	default:
	}
	if q.active == 0 && len(q.queue) == 0 && !q.running {
		delete(r.camps, campaign)
	}
}

// flush records the campaign's queue until it is empty: each round waits
// until every generation in progress has queued its proposal (or given
// up), the batch is full, or the wait since the round began is over.
func (r *recorder) flush(campaign string, q *recordQueue) {
	timer := time.NewTimer(r.wait)
	defer timer.Stop()
	for {
		timer.Reset(r.wait)
		r.mu.Lock()
		for q.active > 0 && len(q.queue) < maxRecordBatch {
			r.mu.Unlock()
			waited := false
			select {
			case <-q.kick:
			case <-timer.C:
				waited = true
			}
			r.mu.Lock()
			if waited {
				break
			}
		}
		n := min(len(q.queue), maxRecordBatch)
		batch := q.queue[:n:n]
		q.queue = q.queue[n:]
		if n == 0 {
			q.running = false
			r.signal(campaign, q)
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		ps := make([]*store.Proposal, n)
		for i, qp := range batch {
			ps[i] = qp.p
		}
		metricRecordBatch.Observe(float64(n))
		for i, res := range r.store.RecordProposals(batch[0].ctx, campaign, ps) {
			batch[i].done <- res
		}
	}
}
