// Package testsrv gives tests a NATS server with JetStream and a Redis
// server: the real ones named by CRUCIBLE_TEST_NATS_URL and
// CRUCIBLE_TEST_REDIS_URL when set, embedded ones on random ports
// otherwise. Each test gets its own namespace, so tests can run in parallel
// against one real server and leave nothing behind.
package testsrv

import (
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/crucible-sci/crucible/internal/embedded"
	"github.com/crucible-sci/crucible/internal/testbed"
)

// Namespace returns a fresh namespace for one test ("t" + 10 hex digits).
func Namespace() string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

// NATS returns the URL of a NATS server with JetStream for the test, and
// whether it is the real one.
func NATS(t testing.TB) (url string, real bool) {
	t.Helper()
	if u := testbed.NATSURL(); u != "" {
		return u, true
	}
	n, err := embedded.StartNATS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	return n.URL(), false
}

// Redis returns the URL of a Redis server for the test, and whether it is
// the real one.
func Redis(t testing.TB) (url string, real bool) {
	t.Helper()
	if u := testbed.RedisURL(); u != "" {
		return u, true
	}
	r, err := embedded.StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r.URL(), false
}
