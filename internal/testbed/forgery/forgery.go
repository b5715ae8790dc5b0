// Package forgery holds what the tests that forge traffic share: a
// campaign's snapshot (what forged work must not change) and the reading
// of an installation's dead letters. It is apart from testbed, which the
// store's own tests import.
package forgery

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Snapshot is what forged traffic must not change in a campaign:
// its counters, the judge's verdicts by decision and class, and every
// island's success and failure pools.
func Snapshot(t testing.TB, st *store.Store, spec *messages.CampaignSpec) string {
	t.Helper()
	ctx := context.Background()
	s, err := st.State(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%+v", s.Counters)
	for i := 0; i < spec.Islands; i++ {
		for _, kind := range []string{"success", "failure"} {
			ids, err := st.PoolIDs(ctx, spec.ID, i, kind)
			if err != nil {
				t.Fatal(err)
			}
			out += fmt.Sprintf(" %d/%s=%v", i, kind, ids)
		}
	}
	judged, err := st.Judged(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	return out + fmt.Sprintf(" judged=%v", judged)
}

// Messages reads the bodies of stream's messages on filter (every
// subject when "") from the first, until stop says enough arrived or
// within has passed.
func Messages(t testing.TB, js jetstream.JetStream, stream, filter string, within time.Duration, stop func([][]byte) bool) [][]byte {
	t.Helper()
	cfg := jetstream.OrderedConsumerConfig{}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := js.OrderedConsumer(context.Background(), stream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	deadline := time.Now().Add(within)
	for !stop(out) && time.Now().Before(deadline) {
		batch, err := cons.Fetch(500, jetstream.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			continue
		}
		for m := range batch.Messages() {
			out = append(out, m.Data())
		}
	}
	return out
}

// DeadLetters reads the dead letters of stream (the DEADLETTER stream of
// an installation) from the first, until stop says enough arrived or
// within has passed.
func DeadLetters(t testing.TB, js jetstream.JetStream, stream string, within time.Duration, stop func([]messages.DeadLetter) bool) []messages.DeadLetter {
	t.Helper()
	var out []messages.DeadLetter
	Messages(t, js, stream, "", within, func(bodies [][]byte) bool {
		for _, b := range bodies[len(out):] {
			var l messages.DeadLetter
			if err := messages.Decode(b, &l); err != nil {
				t.Fatalf("dead letter: %v", err)
			}
			out = append(out, l)
		}
		return stop(out)
	})
	return out
}

// WaitIdle waits until the durable consumer has nothing pending or
// unacknowledged (stream and consumer as the installation names them).
func WaitIdle(ctx context.Context, js jetstream.JetStream, stream, consumer string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		c, err := js.Consumer(ctx, stream, consumer)
		if err == nil {
			info, ierr := c.Info(ctx)
			if ierr == nil && info.NumPending == 0 && info.NumAckPending == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer %s of %s not idle after %v", consumer, stream, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
