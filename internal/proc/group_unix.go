//go:build unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// signalGroup sends SIGTERM (graceful) or SIGKILL to the process group
// Start created (the negative pid addresses the group).
func signalGroup(p *os.Process, graceful bool) error {
	sig := syscall.SIGKILL
	if graceful {
		sig = syscall.SIGTERM
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	return nil
}
