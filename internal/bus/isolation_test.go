package bus

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// deadLetters reads the namespace's dead letters until want arrived or
// the deadline passed.
func deadLetters(t *testing.T, b *Bus, want int, within time.Duration) []messages.DeadLetter {
	t.Helper()
	ctx := context.Background()
	dl, err := b.JS.OrderedConsumer(ctx, b.Stream(messages.StreamDeadLetter), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var letters []messages.DeadLetter
	deadline := time.Now().Add(within)
	for len(letters) < want && time.Now().Before(deadline) {
		m, err := dl.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			continue
		}
		var l messages.DeadLetter
		if err := messages.Decode(m.Data(), &l); err != nil {
			t.Fatalf("dead letter: %v", err)
		}
		letters = append(letters, l)
	}
	return letters
}

// TestDeadLetterOfLargeMessage: a message near the server's max_payload
// that cannot be decoded is dead-lettered at once with its body cut to
// MaxDeadLetterData and its size, instead of failing to dead-letter and
// being redelivered forever.
func TestDeadLetterOfLargeMessage(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	spec := messages.ConsumerSpec{Name: "large", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxAckPending: 16}
	size := int(b.NC.MaxPayload()) * 9 / 10
	body := bytes.Repeat([]byte("x"), size)
	if err := b.PublishRaw(ctx, messages.Subject(messages.SubjectPropose, "c1"), "large-1", body); err != nil {
		t.Fatal(err)
	}
	var calls sync.Map
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.Run(ctx, spec, RunOptions{Concurrency: 2, Service: "test"}, func(ctx context.Context, d *Delivery) error {
			n, _ := calls.LoadOrStore(d.Sequence, new(int))
			*n.(*int)++
			var r messages.GenerationRequest
			return Decode(d, &r)
		})
	}()
	letters := deadLetters(t, b, 1, 30*time.Second)
	cancel()
	wg.Wait()
	if len(letters) != 1 {
		t.Fatalf("got %d dead letters, want 1", len(letters))
	}
	l := letters[0]
	if l.Size != size || !l.Truncated || len(l.Data) != MaxDeadLetterData || l.Deliveries != 1 {
		t.Fatalf("dead letter size %d truncated %v data %d deliveries %d; want size %d, truncated, %d bytes, 1 delivery",
			l.Size, l.Truncated, len(l.Data), l.Deliveries, size, MaxDeadLetterData)
	}
}

// TestFailurePolicy: waits and outages are retried past MaxDeliver and
// never dead-lettered; other failures are dead-lettered on the
// MaxDeliver-th delivery; a panic in a batch handler dead-letters the
// message that causes it, alone, at once.
func TestFailurePolicy(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	spec := messages.ConsumerSpec{Name: "policy", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 2, MaxAckPending: 64}
	var mu sync.Mutex
	attempts := map[int]int{}
	done := map[int]bool{}
	h := func(ctx context.Context, ds []*Delivery) []error {
		errs := make([]error, len(ds))
		for i, d := range ds {
			var r messages.GenerationRequest
			if err := Decode(d, &r); err != nil {
				errs[i] = err
				continue
			}
			if r.Generation == 13 {
				panic("poison")
			}
			mu.Lock()
			attempts[r.Generation]++
			n := attempts[r.Generation]
			mu.Unlock()
			switch {
			case r.Generation == 1 && n < 4:
				errs[i] = Later(errors.New("not my turn"), 10*time.Millisecond)
			case r.Generation == 2 && n < 4:
				errs[i] = Unavailable(errors.New("redis restarting"))
			case r.Generation == 3:
				errs[i] = errors.New("always fails")
			default:
				mu.Lock()
				done[r.Generation] = true
				mu.Unlock()
			}
		}
		return errs
	}
	subj := messages.Subject(messages.SubjectPropose, "c1")
	for _, g := range []int{1, 2, 3, 4, 13, 5} {
		if err := b.Publish(ctx, subj, request("c1", g)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.RunBatch(ctx, spec, RunOptions{Concurrency: 8, MaxBatch: 8, Linger: 50 * time.Millisecond, Service: "test"}, h)
	}()
	letters := deadLetters(t, b, 2, 60*time.Second)
	waitFor(t, "generations 1, 2, 4 and 5", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done[1] && done[2] && done[4] && done[5]
	})
	cancel()
	wg.Wait()
	reasons := map[string]messages.DeadLetter{}
	for _, l := range letters {
		var r messages.GenerationRequest
		if err := messages.Decode(l.Data, &r); err != nil {
			t.Fatal(err)
		}
		reasons[r.MsgID()] = l
	}
	if l, ok := reasons[request("c1", 3).MsgID()]; !ok || l.Deliveries != 2 {
		t.Errorf("always-failing message: dead letter %+v, want one after 2 deliveries", l)
	}
	if l, ok := reasons[request("c1", 13).MsgID()]; !ok || l.Deliveries != 1 {
		t.Errorf("panicking message: dead letter %+v, want one at the first delivery", l)
	}
	if len(letters) != 2 {
		t.Errorf("%d dead letters, want 2: %+v", len(letters), letters)
	}
}

func TestViolatedSubject(t *testing.T) {
	got := violatedSubject(`nats: permissions violation: Permissions Violation for Publish to "crucible.evaluations.c1"`)
	if got != "crucible.evaluations.c1" {
		t.Fatalf("got %q", got)
	}
}
