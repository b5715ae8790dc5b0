package bus

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestPermissionViolationReported: a publish the server refuses for want
// of permission fails with the server's permissions violation, at once,
// instead of being retried until its context's deadline.
func TestPermissionViolationReported(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "svc", Password: "pw", Permissions: &server.Permissions{
			// The JetStream API and replies, but no subject of Crucible's.
			Publish: &server.SubjectPermission{Allow: []string{"$JS.API.>", "_INBOX.>"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("server not ready")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := Connect(ctx, Options{URL: srv.ClientURL(), User: "svc", Password: "pw", MemoryStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := b.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = b.Publish(ctx, messages.Subject(messages.SubjectPropose, "c1"), request("c1", 1))
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "permissions violation") || !isPermissionViolation(err) {
		t.Fatalf("publish without permission: %v, want the permissions violation", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("reported after %v, want at the first attempt", d)
	}
	if unbounded(err) {
		t.Errorf("a permissions violation is retried as an outage")
	}
}
