//go:build !unix

package cli

import "time"

// hullCPUTime is not available here: the benchmark falls back to
// wall-clock time.
func hullCPUTime() (time.Duration, bool) { return 0, false }
