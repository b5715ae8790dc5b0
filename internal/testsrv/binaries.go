package testsrv

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/testbed"
)

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
//
// It lives here, not in testbed: proc links the embedded NATS server,
// whose process-statistics goroutine allocates every second, and every
// package's tests use testbed, some of them to count allocations.
func Binaries(t testing.TB, dir string, names ...string) string {
	t.Helper()
	root, err := testbed.ModuleRoot()
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
