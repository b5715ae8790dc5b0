//go:build unix

// Package cputime reads the CPU time a process has used, for benchmarks on
// a shared machine: it measures the work done, where wall-clock time also
// counts the waits for a core.
package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time (user + system) used so far by this process,
// garbage collection included; ok is false where it is not available.
func Process() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
