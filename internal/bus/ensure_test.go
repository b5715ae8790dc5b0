package bus

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Services starting together on a new server all ensure the streams (and
// their consumers) at once. nats-server 2.9 died of a nil pointer when a stream update raced
// that stream's creation, and answered a creation racing another with
// "subjects overlap"; every service must come up and the server must stay
// up. Each round runs on a server of its own (the real program when the
// machine has it), so a crash takes no other test's server down.
func TestEnsureStreamsConcurrently(t *testing.T) {
	const rounds, services = 12, 8
	for round := range rounds {
		dir := t.TempDir()
		srv, err := proc.StartNATS(proc.NATSOptions{Dir: filepath.Join(dir, "jetstream"), Log: filepath.Join(dir, "nats.log")})
		if err != nil {
			t.Fatal(err)
		}
		if round == 0 {
			t.Logf("embedded server: %v", srv.Embedded())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var wg sync.WaitGroup
		errs := make([]error, services)
		buses := make([]*Bus, services)
		for i := range services {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, err := Connect(ctx, Options{URL: srv.URL(), Name: "service"})
				if err != nil {
					errs[i] = err
					return
				}
				buses[i] = b
				if errs[i] = b.EnsureStreams(ctx); errs[i] != nil {
					return
				}
				for _, spec := range messages.Consumers {
					if _, errs[i] = b.EnsureConsumer(ctx, spec); errs[i] != nil {
						return
					}
				}
			}()
		}
		wg.Wait()
		failed := errors.Join(errs...)
		if failed == nil {
			// The server still answers: a submission is stored.
			failed = buses[0].PublishRaw(ctx, messages.Subject(messages.SubjectSubmit, "c"), "submit/c", []byte("{}"))
		}
		for _, b := range buses {
			b.Close()
		}
		cancel()
		srv.Close()
		if failed != nil {
			if p := srv.Process(); p != nil {
				t.Logf("nats-server log:\n%s", p.Tail(30))
			}
			t.Fatalf("round %d: %v", round, failed)
		}
	}
}

// A stream whose configuration differs from the definition is updated; a
// stream of another name holding one of the subjects is an error that
// names it, returned instead of retried.
func TestEnsureStreamsUpdatesAndRefusesOverlap(t *testing.T) {
	b := connect(t)
	url := b.NC.ConnectedUrl()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	spec := messages.Streams[0]
	name := b.Stream(spec.Name)
	st, err := b.JS.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	old := st.CachedInfo().Config
	old.MaxAge = time.Hour
	if _, err := b.JS.UpdateStream(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err = b.JS.Stream(ctx, name); err != nil {
		t.Fatal(err)
	}
	if got := st.CachedInfo().Config.MaxAge; got != spec.MaxAge {
		t.Errorf("stream %s max age %v after EnsureStreams, want %v", name, got, spec.MaxAge)
	}

	other, err := Connect(ctx, Options{URL: url, Name: t.Name(), Namespace: testsrv.Namespace(), MemoryStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign := "FOREIGN_" + other.Namespace()
	if _, err := other.JS.CreateStream(ctx, jetstream.StreamConfig{Name: foreign, Subjects: []string{other.Subject(spec.Subjects[0])}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.JS.DeleteStream(context.Background(), foreign) }()
	err = other.EnsureStreams(ctx)
	if err == nil || !strings.Contains(err.Error(), foreign) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("EnsureStreams with %s holding %s: %v, want an error naming it, not a retry until the deadline", foreign, spec.Subjects[0], err)
	}
}
