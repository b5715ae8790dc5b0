//go:build !unix

// Package cputime reads the CPU time a process has used, for benchmarks on
// a shared machine: it measures the work done, where wall-clock time also
// counts the waits for a core.
package cputime

import "time"

// Process is not available here (ok is false): benchmarks fall back to
// wall-clock time or leave their CPU figures out.
func Process() (d time.Duration, ok bool) { return 0, false }
