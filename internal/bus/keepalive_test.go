package bus

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// A handler that works longer than the consumer's AckWait keeps its
// message: the loop reports progress, so the message is not redelivered to
// another replica meanwhile.
func TestRunKeepsSlowMessages(t *testing.T) {
	for _, batch := range []bool{false, true} {
		name := "Run"
		if batch {
			name = "RunBatch"
		}
		t.Run(name, func(t *testing.T) {
			b := connect(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const ackWait = time.Second
			spec := messages.ConsumerSpec{Name: "slow", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: ackWait, MaxAckPending: 16}
			var calls atomic.Int64
			var maxDeliveries atomic.Uint64
			hold := func(ctx context.Context, d *Delivery) {
				calls.Add(1)
				if d.Deliveries > maxDeliveries.Load() {
					maxDeliveries.Store(d.Deliveries)
				}
				select { // three times AckWait
				case <-time.After(3 * ackWait):
				case <-ctx.Done():
				}
			}
			var wg sync.WaitGroup
			// Two loops on the one consumer, as two replicas: a redelivery
			// would reach the idle one.
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var err error
					if batch {
						err = b.RunBatch(ctx, spec, RunOptions{Concurrency: 4, Service: "test"}, func(ctx context.Context, ds []*Delivery) []error {
							for _, d := range ds {
								hold(ctx, d)
							}
							return make([]error, len(ds))
						})
					} else {
						err = b.Run(ctx, spec, RunOptions{Concurrency: 4, Service: "test"}, func(ctx context.Context, d *Delivery) error {
							hold(ctx, d)
							return nil
						})
					}
					if err != nil {
						t.Error(err)
					}
				}()
			}
			if err := b.Publish(ctx, messages.Subject(messages.SubjectPropose, "c1"), request("c1", 1)); err != nil {
				t.Fatal(err)
			}
			var cons jetstream.Consumer
			waitFor(t, "the consumer", func() bool {
				c, err := b.JS.Consumer(ctx, b.Stream(spec.Stream), spec.Name)
				cons = c
				return err == nil
			})
			waitFor(t, "the message to be acknowledged", func() bool {
				info, err := cons.Info(ctx)
				return err == nil && info.AckFloor.Stream == 1 && info.NumAckPending == 0
			})
			cancel()
			wg.Wait()
			if n, d := calls.Load(), maxDeliveries.Load(); n != 1 || d != 1 {
				t.Errorf("handled %d times, up to delivery %d; want once, first delivery", n, d)
			}
		})
	}
}
