package local

import (
	"syscall"
	"testing"
	"time"
)

// TestInterrupts: the first SIGINT closes interrupt only, the second
// abort.
func TestInterrupts(t *testing.T) {
	interrupt, abort, stop := Interrupts()
	defer stop()
	closed := func(c <-chan struct{}) bool {
		select {
		case <-c:
			return true
		case <-time.After(2 * time.Second):
			return false
		}
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !closed(interrupt) {
		t.Fatal("the first SIGINT did not interrupt")
	}
	select {
	case <-abort:
		t.Fatal("the first SIGINT aborted")
	case <-time.After(100 * time.Millisecond):
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !closed(abort) {
		t.Fatal("the second signal did not abort")
	}
}
