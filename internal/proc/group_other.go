//go:build !unix

package proc

import (
	"os"
	"syscall"
)

// groupAttr: no process groups here.
func groupAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the process: there is no SIGTERM to drain with.
func signalGroup(p *os.Process, _ bool) error { return p.Kill() }
