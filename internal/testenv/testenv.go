// Package testenv gives tests the environment they may use: the reference
// data folder and the addresses of real NATS and Redis servers.
package testenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/proc"
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

// buildTimeout is how long Binaries gives the build. It is separate from
// the time a test gives its scenario: with an empty build cache, the
// release flags (proc.BuildFlags, proc.BuildEnv) make the go command
// compile the standard library and every dependency again, which takes
// minutes on two cores busy with the rest of the test suite.
const buildTimeout = 10 * time.Minute

// Binaries builds the named programs of proc.Binaries (all when names is
// empty) into a folder under dir as releases are built, and returns the
// folder. The build has its own time, buildTimeout, so a test's scenario
// clock should start after it.
func Binaries(t testing.TB, dir string, names ...string) string {
	t.Helper()
	root, err := proc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	start := time.Now()
	bin, err := proc.Build(ctx, root, filepath.Join(dir, "bin"), names...)
	if err != nil {
		t.Fatal(err)
	}
	what := strings.Join(names, ", ")
	if what == "" {
		what = "every binary"
	}
	t.Logf("built %s in %v", what, time.Since(start).Round(100*time.Millisecond))
	return bin
}
