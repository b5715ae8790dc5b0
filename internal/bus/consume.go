package bus

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Delivery is one message handed to a handler.
type Delivery struct {
	Subject string
	Data    []byte
	// Header is the message's header (nil without one).
	Header     nats.Header
	MsgID      string
	Stream     string
	Consumer   string
	Sequence   uint64
	Deliveries uint64
	msg        jetstream.Msg
}

// InProgress tells the server the handler is still working, resetting the
// message's ack timer.
func (d *Delivery) InProgress() error {
	if d.msg == nil {
		return nil
	}
	return d.msg.InProgress()
}

// Campaign is the campaign token of the subject.
func (d *Delivery) Campaign() string { return messages.CampaignOfSubject(d.Subject) }

// ErrPermanent marks a failure that retrying cannot fix (a message that
// cannot be decoded, a wrong schema version, an invalid field): the message
// is dead-lettered at once.
var ErrPermanent = errors.New("permanent failure")

// Permanent wraps err as a permanent failure.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPermanent, err)
}

// Handler processes one delivery; nil acknowledges it.
type Handler func(ctx context.Context, d *Delivery) error

// BatchHandler processes a batch; it returns one error (or nil) per
// delivery, in order.
type BatchHandler func(ctx context.Context, ds []*Delivery) []error

// Decode decodes a delivery into m; a failure is permanent.
func Decode(d *Delivery, m messages.Message) error {
	if err := messages.Decode(d.Data, m); err != nil {
		return Permanent(err)
	}
	return nil
}

// RunOptions tune a consumer loop.
type RunOptions struct {
	// Concurrency is the number of deliveries handled at once.
	Concurrency int
	// MaxBatch bounds the deliveries handed to one batch call (RunBatch;
	// default Concurrency): with Concurrency = 2 × MaxBatch, a replica
	// evaluates one batch while it publishes the previous one.
	MaxBatch int
	// Linger, when positive, is how long a fetch waits for the rest of a
	// batch once its first delivery is there (RunBatch): messages
	// published together (an evaluator's batch) then reach one handler
	// call instead of several. Without it a fetch takes only what is
	// ready at once.
	Linger time.Duration
	// DrainTimeout bounds how long in-flight handlers may run after ctx is
	// cancelled (SIGTERM): they finish and are acknowledged, unless they
	// take longer, in which case they are redelivered elsewhere.
	DrainTimeout time.Duration
	// Service names the service in dead letters, logs and metrics.
	Service string
	// Ready, when set, is asked before each fetch and before a message is
	// dead-lettered: while it fails (Redis restored from an earlier state
	// and not reconciled yet, store.Ready), nothing is fetched, and a
	// message judged permanently bad — perhaps only because the state it
	// was checked against is behind — is delivered again later instead.
	Ready func(ctx context.Context) error
}

var (
	metricHandled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Name: "messages_handled_total",
		Help: "Messages handled by a consumer, by outcome (ack, retry, deadletter).",
	}, []string{"consumer", "outcome"})
	metricHandleSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "crucible", Name: "message_handle_seconds",
		Help:    "Time to handle one message (or one batch), by consumer.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14),
	}, []string{"consumer"})
)

// Collectors are the bus's Prometheus metrics, for a service's registry.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricHandled, metricHandleSeconds}
}

// Run consumes spec's durable consumer until ctx is cancelled, handing
// each delivery to h with up to o.Concurrency at once. On cancellation it
// stops fetching, lets in-flight handlers finish (DrainTimeout), and
// returns.
func (b *Bus) Run(ctx context.Context, spec messages.ConsumerSpec, o RunOptions, h Handler) error {
	return b.run(ctx, spec, o, func(hctx context.Context, ds []*Delivery) {
		var wg sync.WaitGroup
		for _, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				stop := keepAlive([]*Delivery{d}, spec.AckWait)
				err := oversize(d)
				if err == nil {
					err = safeHandle(hctx, d, h)
				}
				stop()
				metricHandleSeconds.WithLabelValues(spec.Name).Observe(time.Since(start).Seconds())
				b.settle(hctx, spec, o, d, err)
			}()
		}
		wg.Wait()
	})
}

// RunBatch consumes spec's durable consumer in batches of up to
// o.MaxBatch deliveries, with up to o.Concurrency deliveries in flight.
func (b *Bus) RunBatch(ctx context.Context, spec messages.ConsumerSpec, o RunOptions, h BatchHandler) error {
	return b.run(ctx, spec, o, func(hctx context.Context, ds []*Delivery) {
		// Oversize messages never reach the handler.
		var ok []*Delivery
		for _, d := range ds {
			if err := oversize(d); err != nil {
				b.settle(hctx, spec, o, d, err)
				continue
			}
			ok = append(ok, d)
		}
		if len(ok) == 0 {
			return
		}
		start := time.Now()
		stop := keepAlive(ok, spec.AckWait)
		errs := safeHandleBatch(hctx, ok, h)
		stop()
		metricHandleSeconds.WithLabelValues(spec.Name).Observe(time.Since(start).Seconds())
		for i, d := range ok {
			b.settle(hctx, spec, o, d, errs[i])
		}
	})
}

// run is the fetch loop shared by Run and RunBatch: each fetched group is
// processed in the background while the loop fetches more for the free
// slots.
func (b *Bus) run(ctx context.Context, spec messages.ConsumerSpec, o RunOptions, process func(context.Context, []*Delivery)) error {
	if o.Concurrency < 1 {
		o.Concurrency = 1
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = 30 * time.Second
	}
	log := b.log.With(zap.String("consumer", spec.Name), zap.String("service", o.Service))
	cons, err := b.EnsureConsumer(ctx, spec)
	if err != nil {
		return err
	}
	// Handlers run on a context that outlives ctx by the drain timeout.
	hctx, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hcancel()
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(o.DrainTimeout, hcancel)
	})
	defer stop()

	slots := make(chan struct{}, o.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	backoff := 50 * time.Millisecond
	waiting := false
	for ctx.Err() == nil {
		if o.Ready != nil {
			if err := o.Ready(ctx); err != nil {
				if !waiting {
					log.Warn("not consuming until the state is ready", zap.Error(err))
					waiting = true
				}
				select {
				case <-ctx.Done():
				case <-time.After(250 * time.Millisecond):
				}
				continue
			}
			if waiting {
				log.Info("state ready; consuming again")
				waiting = false
			}
		}
		// Take one free slot (blocking), then every other free slot.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		n := 1
		limit := o.Concurrency
		if o.MaxBatch > 0 {
			limit = min(limit, o.MaxBatch)
		}
	more:
		for n < limit {
			select {
			case slots <- struct{}{}:
				n++
			default:
				break more
			}
		}
		ds, err := b.fetch(cons, spec, n, o.Linger)
		for i := len(ds); i < n; i++ {
			<-slots
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			log.Warn("fetch failed", zap.Error(err))
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				if err := b.EnsureStreams(ctx); err == nil {
					if c, err := b.EnsureConsumer(ctx, spec); err == nil {
						cons = c
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff + time.Duration(rand.Int64N(int64(backoff)))):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		if len(ds) == 0 {
			continue
		}
		release := func() {
			for range ds {
				<-slots
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer release()
			process(hctx, ds)
		}()
	}
	return nil
}

// fetch waits up to a second for one message, then takes whatever else is
// ready, up to n in all, waiting up to linger for more (not at all without
// one).
func (b *Bus) fetch(cons jetstream.Consumer, spec messages.ConsumerSpec, n int, linger time.Duration) ([]*Delivery, error) {
	first, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		return nil, err
	}
	out := b.collect(first, spec.Name)
	if err := first.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && len(out) == 0 {
		return nil, err
	}
	if len(out) == 0 || n == 1 {
		return out, nil
	}
	var rest jetstream.MessageBatch
	if linger > 0 {
		rest, err = cons.Fetch(n-1, jetstream.FetchMaxWait(linger))
	} else {
		rest, err = cons.FetchNoWait(n - 1)
	}
	if err != nil {
		return out, nil
	}
	return append(out, b.collect(rest, spec.Name)...), nil
}

func (b *Bus) collect(batch jetstream.MessageBatch, consumer string) []*Delivery {
	var out []*Delivery
	for m := range batch.Messages() {
		d := &Delivery{Subject: b.Unsubject(m.Subject()), Data: m.Data(), Consumer: consumer, msg: m}
		if h := m.Headers(); h != nil {
			d.Header, d.MsgID = h, h.Get(jetstream.MsgIDHeader)
		}
		if md, err := m.Metadata(); err == nil {
			d.Stream = strings.TrimSuffix(md.Stream, "_"+b.opts.Namespace)
			d.Sequence = md.Sequence.Stream
			d.Deliveries = md.NumDelivered
		}
		out = append(out, d)
	}
	return out
}

// keepAlive tells the server every third of ackWait that ds are still
// being worked on, until the returned function is called. A handler may so
// take longer than the consumer's AckWait, which can then be short: the
// messages of a process that dies (SIGKILL, a lost node) are redelivered
// to the other replicas after AckWait, not after the longest time a
// handler may need.
func keepAlive(ds []*Delivery, ackWait time.Duration) (stop func()) {
	if ackWait <= 0 || len(ds) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				for _, d := range ds {
					// A failure (the connection is down) is left to the
					// next tick; the worst outcome is a redelivery, which
					// handlers tolerate.
					_ = d.InProgress()
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// safeHandle turns a handler panic into a permanent failure with the panic
// as its reason, so one poison message cannot crash a service.
func safeHandle(ctx context.Context, d *Delivery, h Handler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Permanent(fmt.Errorf("handler panic: %v", r))
		}
	}()
	return h(ctx, d)
}

// safeHandleBatch calls h on ds; a panic is bounded: the batch's
// deliveries are then handled one at a time, so that the one that panics
// alone is dead-lettered with the panic as its reason (a permanent
// failure) and the others are handled as usual.
func safeHandleBatch(ctx context.Context, ds []*Delivery, h BatchHandler) []error {
	errs, panicked := callBatch(ctx, ds, h)
	if panicked == nil {
		return errs
	}
	if len(ds) == 1 {
		return []error{Permanent(fmt.Errorf("handler panic: %v", panicked))}
	}
	errs = make([]error, len(ds))
	for i, d := range ds {
		one, p := callBatch(ctx, []*Delivery{d}, h)
		if p != nil {
			errs[i] = Permanent(fmt.Errorf("handler panic: %v", p))
			continue
		}
		errs[i] = one[0]
	}
	return errs
}

// callBatch calls h, recovering a panic.
func callBatch(ctx context.Context, ds []*Delivery, h BatchHandler) (errs []error, panicked any) {
	defer func() {
		if r := recover(); r != nil {
			errs, panicked = nil, r
		}
	}()
	errs = h(ctx, ds)
	if len(errs) != len(ds) {
		n := len(errs)
		errs = make([]error, len(ds))
		for i := range errs {
			errs[i] = fmt.Errorf("batch handler returned %d results for %d messages", n, len(ds))
		}
	}
	return errs, nil
}

// settle acknowledges, retries or dead-letters a handled delivery (see
// the failure policy in failure.go).
func (b *Bus) settle(ctx context.Context, spec messages.ConsumerSpec, o RunOptions, d *Delivery, err error) {
	log := b.log.With(zap.String("consumer", spec.Name), zap.String("subject", d.Subject), zap.String("msg_id", d.MsgID))
	limit := spec.MaxDeliver
	if limit <= 0 {
		limit = DefaultMaxDeliver
	}
	switch {
	case err == nil:
		metricHandled.WithLabelValues(spec.Name, "ack").Inc()
		if aerr := d.msg.Ack(); aerr != nil {
			log.Warn("ack failed; the message will be redelivered and handled idempotently", zap.Error(aerr))
		}
	case (errors.Is(err, ErrPermanent) || (d.Deliveries >= uint64(limit) && !unbounded(err))) && o.Ready != nil && o.Ready(ctx) != nil:
		// Judged against a state that may be behind the streams: judged
		// again once it is reconciled.
		metricHandled.WithLabelValues(spec.Name, "retry").Inc()
		log.Info("state not ready; a failed message is delivered again later", zap.Error(err))
		_ = d.msg.NakWithDelay(time.Second)
	case errors.Is(err, ErrPermanent) || (d.Deliveries >= uint64(limit) && !unbounded(err)):
		reason := err.Error()
		if !errors.Is(err, ErrPermanent) {
			reason = fmt.Sprintf("failed %d deliveries: %v", d.Deliveries, err)
		}
		if perr := b.deadLetter(ctx, spec, o, d, reason); perr != nil {
			// Never drop: leave it to be redelivered and dead-lettered
			// later, backing off as any failure does.
			log.Error("dead-letter publish failed; message left for redelivery", zap.Error(perr))
			_ = d.msg.NakWithDelay(retryDelay(d.Deliveries))
			return
		}
		metricHandled.WithLabelValues(spec.Name, "deadletter").Inc()
		log.Warn("message dead-lettered", zap.String("reason", reason))
		_ = d.msg.Term()
	default:
		metricHandled.WithLabelValues(spec.Name, "retry").Inc()
		delay := nakDelay(d.Deliveries, err)
		log.Info("handler failed; retrying", zap.Error(err), zap.Uint64("deliveries", d.Deliveries), zap.Duration("delay", delay))
		_ = d.msg.NakWithDelay(delay)
	}
}

// deadLetter publishes d's dead letter with the reason; a body longer
// than MaxDeadLetterData is cut, its size recorded.
func (b *Bus) deadLetter(ctx context.Context, spec messages.ConsumerSpec, o RunOptions, d *Delivery, reason string) error {
	data, truncated := deadLetterData(d.Data)
	dl := &messages.DeadLetter{
		Schema: messages.SchemaVersion, Stream: d.Stream, Consumer: spec.Name, Subject: d.Subject,
		Sequence: d.Sequence, Deliveries: d.Deliveries, Reason: reason, Service: o.Service,
		Data: data, Size: len(d.Data), Truncated: truncated, At: time.Now().UTC(),
	}
	if d.Header != nil {
		dl.Headers = d.Header
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return b.Publish(pctx, messages.DeadLetterSubject(d.Stream, d.Campaign()), dl)
}

// oversize is the permanent failure of a delivery larger than
// MaxMessageBytes, or nil.
func oversize(d *Delivery) error {
	if len(d.Data) <= MaxMessageBytes {
		return nil
	}
	return Permanent(fmt.Errorf("oversize message: %d bytes, more than the %d a consumer accepts", len(d.Data), MaxMessageBytes))
}

// DelayError asks for a failed message to be redelivered no sooner than
// after Delay: the handler depends on a service that said when to come
// back (an LLM endpoint's Retry-After).
type DelayError struct {
	Delay time.Duration
	Err   error
}

func (e *DelayError) Error() string { return e.Err.Error() }

func (e *DelayError) Unwrap() error { return e.Err }

// RetryAfter wraps err so that the message is redelivered after at least
// d (at most MaxRetryAfter).
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &DelayError{Delay: min(d, MaxRetryAfter), Err: err}
}

// MaxRetryAfter bounds the redelivery delay a handler may ask for.
const MaxRetryAfter = 10 * time.Minute

// nakDelay is the redelivery delay of a failed message: the backoff, or
// the delay the handler asked for when longer.
func nakDelay(deliveries uint64, err error) time.Duration {
	delay := retryDelay(deliveries)
	var de *DelayError
	if errors.As(err, &de) && de.Delay > delay {
		delay = de.Delay
	}
	return delay
}

// retryDelay backs off exponentially with jitter: ~0.2 s, 0.4 s, … ≤ 10 s.
func retryDelay(deliveries uint64) time.Duration {
	d := 200 * time.Millisecond << min(deliveries, 6)
	d = min(d, 10*time.Second)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}
