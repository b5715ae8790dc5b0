//go:build unix

package cli

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time (user + system) used so far by this process,
// garbage collection included. On a shared machine it measures the work
// done, where wall-clock time would also count the waits for a core.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
