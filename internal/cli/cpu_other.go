//go:build !unix

package cli

import "time"

// processCPUTime is not available here (ok is false): benchmarks fall
// back to wall-clock time or leave their CPU figures out.
func processCPUTime() (time.Duration, bool) { return 0, false }
