//go:build unix && !linux

package proc

import "syscall"

// groupAttr starts a child in a process group of its own, which Kill and
// Stop signal as a whole.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
