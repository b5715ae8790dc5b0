// Package testenv gives tests the environment they may use: the reference
// data folder and the addresses of real NATS and Redis servers.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// DataDir returns the folder named by CRUCIBLE_DATA (laid out like the
// project's data folder: data/, models/cgcnn/, golden/). Tests that need the
// real data call it and are skipped, with the reason, when it is not set or
// does not exist; CI always sets it.
func DataDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CRUCIBLE_DATA")
	if dir == "" {
		t.Skip("CRUCIBLE_DATA not set: skipping a test that needs the reference data")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("CRUCIBLE_DATA=%s: %v", dir, err)
	}
	return dir
}

// DataPath joins parts onto DataDir and skips the test when the file is
// absent.
func DataPath(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{DataDir(t)}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference file missing: %v", err)
	}
	return p
}

// NATSURL is the real NATS server to test against (CRUCIBLE_TEST_NATS_URL),
// or "" when tests should start an embedded one.
func NATSURL() string { return os.Getenv("CRUCIBLE_TEST_NATS_URL") }

// RedisURL is the real Redis server to test against
// (CRUCIBLE_TEST_REDIS_URL), or "" when tests should start an embedded one.
func RedisURL() string { return os.Getenv("CRUCIBLE_TEST_REDIS_URL") }
