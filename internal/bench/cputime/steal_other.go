//go:build !linux

package cputime

import "time"

// Steal is not available here (ok is false): only Linux reports the time
// a hypervisor took from the machine's CPUs.
func Steal() (d time.Duration, cpus int, ok bool) { return 0, 0, false }
