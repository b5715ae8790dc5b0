package bus

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// A provisioned bus creates nothing: it waits until an administrator's
// bus has created the streams and the consumer, then uses them.
func TestProvisionedWaitsForSetup(t *testing.T) {
	url, _ := testsrv.NATS(t)
	ns := testsrv.Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc, err := Connect(ctx, Options{URL: url, Name: "service", Namespace: ns, MemoryStorage: true, Provisioned: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	admin, err := Connect(ctx, Options{URL: url, Name: "admin", Namespace: ns, MemoryStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.DeleteStreams(context.Background())
		admin.Close()
	})
	spec, err := messages.ConsumerByName(messages.ConsumerJudge)
	if err != nil {
		t.Fatal(err)
	}

	ready := make(chan error, 1)
	go func() {
		if err := svc.EnsureStreams(ctx); err != nil {
			ready <- err
			return
		}
		_, err := svc.EnsureConsumer(ctx, spec)
		ready <- err
	}()
	// Nothing exists yet: the service must be waiting, not creating.
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if _, err := admin.JS.Stream(short, admin.Stream(messages.StreamEvaluations)); err == nil {
		t.Fatal("a provisioned bus created a stream")
	}
	select {
	case err := <-ready:
		t.Fatalf("the service went ahead before the setup: %v", err)
	default:
	}

	if err := admin.ProvisionStreams(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateConsumer(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if err := <-ready; err != nil {
		t.Fatalf("after the setup: %v", err)
	}
}
