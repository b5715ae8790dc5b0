package proc

import "syscall"

// groupAttr starts a child in a process group of its own, which Kill and
// Stop signal as a whole, and has the kernel kill it if this process dies
// first (a test binary killed by its timeout leaves no child behind).
func groupAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
