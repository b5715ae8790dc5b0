package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func connect(t *testing.T) *Bus {
	t.Helper()
	url, _ := testsrv.NATS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := Connect(ctx, Options{URL: url, Name: t.Name(), Namespace: testsrv.Namespace(), MemoryStorage: true})
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
	return b
}

func request(campaign string, g int) *messages.GenerationRequest {
	return &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: campaign, Generation: g, Slots: 2, Trigger: "test"}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPublishDeduplicates(t *testing.T) {
	b := connect(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if err := b.Publish(ctx, messages.Subject(messages.SubjectPropose, "c1"), request("c1", 7)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Publish(ctx, messages.Subject(messages.SubjectPropose, "c1"), request("c1", 8)); err != nil {
		t.Fatal(err)
	}
	st, err := b.JS.Stream(ctx, b.Stream(messages.StreamPropose))
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Fatalf("stream holds %d messages, want 2 (duplicates dropped)", info.State.Msgs)
	}
}

func TestPublishRejectsInvalid(t *testing.T) {
	b := connect(t)
	bad := request("c1", 1)
	bad.Slots = 0
	if err := b.Publish(context.Background(), messages.Subject(messages.SubjectPropose, "c1"), bad); !errors.Is(err, messages.ErrInvalid) {
		t.Fatalf("got %v, want a validation error", err)
	}
}

// TestRunRetriesAndDeadLetters sends one good message, one that fails twice
// then succeeds, one that always fails, and one that cannot be decoded.
func TestRunRetriesAndDeadLetters(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	spec := messages.ConsumerSpec{Name: "test", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 3, MaxAckPending: 16}

	var mu sync.Mutex
	done := map[int]int{}
	attempts := map[int]int{}
	h := func(ctx context.Context, d *Delivery) error {
		var r messages.GenerationRequest
		if err := Decode(d, &r); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		attempts[r.Generation]++
		switch {
		case r.Generation == 2 && attempts[2] < 3:
			return fmt.Errorf("transient failure %d", attempts[2])
		case r.Generation == 3:
			return errors.New("always fails")
		}
		done[r.Generation]++
		return nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := b.Run(ctx, spec, RunOptions{Concurrency: 4, Service: "test"}, h); err != nil {
			t.Error(err)
		}
	}()
	subj := messages.Subject(messages.SubjectPropose, "c1")
	for g := 1; g <= 3; g++ {
		if err := b.Publish(ctx, subj, request("c1", g)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PublishRaw(ctx, subj, "garbage-1", []byte("{not json")); err != nil {
		t.Fatal(err)
	}

	// Dead letters arrive for generation 3 (after 3 deliveries) and for the
	// undecodable message (at once).
	dl, err := b.JS.OrderedConsumer(ctx, b.Stream(messages.StreamDeadLetter), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var letters []messages.DeadLetter
	deadline := time.Now().Add(30 * time.Second)
	for len(letters) < 2 && time.Now().Before(deadline) {
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
	if len(letters) != 2 {
		t.Fatalf("got %d dead letters, want 2", len(letters))
	}
	var gotGarbage, gotFailing bool
	for _, l := range letters {
		switch string(l.Data) {
		case "{not json":
			gotGarbage = l.Deliveries == 1 && l.Stream == messages.StreamPropose
		default:
			gotFailing = l.Deliveries == 3 && l.Reason != ""
		}
	}
	if !gotGarbage || !gotFailing {
		t.Fatalf("dead letters %+v", letters)
	}
	waitFor(t, "generations 1 and 2", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done[1] == 1 && done[2] == 1
	})
	cancel()
	wg.Wait()
	if attempts[3] != 3 {
		t.Errorf("generation 3 tried %d times, want 3", attempts[3])
	}
}

// TestRunDrainsOnCancel: a handler in progress when the context is
// cancelled finishes and is acknowledged.
func TestRunDrainsOnCancel(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	spec := messages.ConsumerSpec{Name: "drain", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 3, MaxAckPending: 16}
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.Run(ctx, spec, RunOptions{Concurrency: 1, Service: "test"}, func(ctx context.Context, d *Delivery) error {
			close(started)
			<-release
			finished.Add(1)
			return nil
		})
	}()
	if err := b.Publish(ctx, messages.Subject(messages.SubjectPropose, "c1"), request("c1", 1)); err != nil {
		t.Fatal(err)
	}
	<-started
	cancel()
	close(release)
	wg.Wait()
	if finished.Load() != 1 {
		t.Fatal("in-flight handler did not finish")
	}
	// The message was acknowledged: the work queue is empty.
	waitFor(t, "empty work queue", func() bool {
		st, err := b.JS.Stream(context.Background(), b.Stream(messages.StreamPropose))
		if err != nil {
			return false
		}
		info, err := st.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
}

// TestRunBatch hands several messages to one batch call.
func TestRunBatch(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subj := messages.Subject(messages.SubjectPropose, "c1")
	for g := 0; g < 10; g++ {
		if err := b.Publish(ctx, subj, request("c1", g)); err != nil {
			t.Fatal(err)
		}
	}
	spec := messages.ConsumerSpec{Name: "batch", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 3, MaxAckPending: 64}
	var got atomic.Int32
	var maxBatch atomic.Int32
	go func() {
		_ = b.RunBatch(ctx, spec, RunOptions{Concurrency: 8, Service: "test"}, func(ctx context.Context, ds []*Delivery) []error {
			if int32(len(ds)) > maxBatch.Load() {
				maxBatch.Store(int32(len(ds)))
			}
			got.Add(int32(len(ds)))
			return make([]error, len(ds))
		})
	}()
	waitFor(t, "10 messages", func() bool { return got.Load() == 10 })
	if maxBatch.Load() < 2 || maxBatch.Load() > 8 {
		t.Errorf("largest batch %d, want 2..8", maxBatch.Load())
	}
}

// TestRunBatchLinger: with a linger, messages published one after another
// just after the first reach one batch call; a fetch without one takes
// only what is there.
func TestRunBatchLinger(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	spec := messages.ConsumerSpec{Name: "linger", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 3, MaxAckPending: 64}
	if _, err := b.EnsureConsumer(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sizes []int
	go func() {
		_ = b.RunBatch(ctx, spec, RunOptions{Concurrency: 16, MaxBatch: 16, Linger: 2 * time.Second, Service: "test"}, func(ctx context.Context, ds []*Delivery) []error {
			mu.Lock()
			sizes = append(sizes, len(ds))
			mu.Unlock()
			return make([]error, len(ds))
		})
	}()
	subj := messages.Subject(messages.SubjectPropose, "c1")
	for g := 0; g < 10; g++ {
		if err := b.Publish(ctx, subj, request("c1", g)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	waitFor(t, "a batch", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sizes) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 1 || sizes[0] != 10 {
		t.Errorf("batches of %v, want one of 10", sizes)
	}
}

// headeredRequest is a generation request that states a header field.
type headeredRequest struct {
	*messages.GenerationRequest
	value string
}

func (h headeredRequest) Headers() map[string]string {
	return map[string]string{"Crucible-Test": h.value}
}

// TestHeadersTravel: a Headered message's fields reach the consumer's
// Delivery.Header, through Publish and PublishAll alike.
func TestHeadersTravel(t *testing.T) {
	b := connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	subj := messages.Subject(messages.SubjectPropose, "c1")
	if err := b.Publish(ctx, subj, headeredRequest{request("c1", 0), "single"}); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(b.PublishAll(ctx, []Outgoing{{Subject: subj, Message: headeredRequest{request("c1", 1), "all"}}, {Subject: subj, Message: request("c1", 2)}})...); err != nil {
		t.Fatal(err)
	}
	spec := messages.ConsumerSpec{Name: "headers", Stream: messages.StreamPropose, FilterSubject: messages.SubjectPropose + ".>", AckWait: 5 * time.Second, MaxDeliver: 3, MaxAckPending: 64}
	var mu sync.Mutex
	got := map[string]string{}
	go func() {
		_ = b.Run(ctx, spec, RunOptions{Concurrency: 4, Service: "test"}, func(_ context.Context, d *Delivery) error {
			mu.Lock()
			defer mu.Unlock()
			got[d.MsgID] = d.Header.Get("Crucible-Test")
			return nil
		})
	}()
	waitFor(t, "3 messages", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	want := map[string]string{request("c1", 0).MsgID(): "single", request("c1", 1).MsgID(): "all", request("c1", 2).MsgID(): ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("headers by message %v, want %v", got, want)
	}
}
