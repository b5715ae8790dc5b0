//go:build unix

package hull

import (
	"syscall"
	"time"
)

// processCPUTime is the CPU time used so far by the test process (garbage
// collection included), for benchmarks run on a shared machine.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
