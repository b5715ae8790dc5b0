// Package proc runs Crucible's service binaries and its servers (NATS with
// JetStream, Redis) as child processes on this machine: it builds the
// binaries as the Dockerfile does, starts each child in its own process
// group with its output in a log file, kills it with SIGKILL or stops it
// with SIGTERM, restarts it, and reads its resident memory. The chaos test
// and `crucible bench load --processes` use it.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Process is a restartable child process. Its configuration (Path, Args,
// Env, Log) is fixed before the first Start; each Start runs a new
// process with it.
type Process struct {
	// Name identifies the process in errors ("evaluator-2").
	Name string
	// Path is the executable; Args its arguments (without the program
	// name).
	Path string
	Args []string
	// Env is added to this process's environment.
	Env []string
	// Log is the file stdout and stderr are appended to ("" discards
	// them).
	Log string

	mu      sync.Mutex
	cmd     *exec.Cmd
	done    chan struct{}
	exitErr error
	starts  int
}

// ErrNotRunning is returned when a process that is not running is asked
// to stop.
var ErrNotRunning = errors.New("not running")

// Start runs the process in a new process group. It fails if the process
// is already running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !closed(p.done) {
		return fmt.Errorf("%s: already running (pid %d)", p.Name, p.cmd.Process.Pid)
	}
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env = append(os.Environ(), p.Env...)
	cmd.SysProcAttr = groupAttr()
	var logFile *os.File
	if p.Log != "" {
		f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("%s: log: %w", p.Name, err)
		}
		fmt.Fprintf(f, "--- start %d at %s\n", p.starts+1, time.Now().UTC().Format(time.RFC3339Nano))
		cmd.Stdout, cmd.Stderr, logFile = f, f, f
	}
	if err := cmd.Start(); err != nil {
		if logFile != nil {
			logFile.Close()
		}
		return fmt.Errorf("%s: start %s: %w", p.Name, p.Path, err)
	}
	p.starts++
	done := make(chan struct{})
	p.cmd, p.done, p.exitErr = cmd, done, nil
	go func() {
		err := cmd.Wait()
		if logFile != nil {
			logFile.Close()
		}
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Running reports whether the process is running.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !closed(p.done)
}

// Pid is the process id of the running process (0 if none).
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || closed(p.done) {
		return 0
	}
	return p.cmd.Process.Pid
}

// Starts is how many times the process was started.
func (p *Process) Starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// Done is closed when the current run of the process ends (nil before the
// first Start).
func (p *Process) Done() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// ExitErr is how the last run ended (nil: exit status 0, or still
// running).
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitErr
}

// Kill sends SIGKILL to the process group and waits for the process to
// end.
func (p *Process) Kill() error {
	return p.signal(false, 0)
}

// Stop sends SIGTERM to the process group and waits up to timeout for the
// process to end, then kills it. (Where there is no SIGTERM, it kills.)
func (p *Process) Stop(timeout time.Duration) error {
	return p.signal(true, timeout)
}

func (p *Process) signal(graceful bool, timeout time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || closed(done) {
		return fmt.Errorf("%s: %w", p.Name, ErrNotRunning)
	}
	if err := signalGroup(cmd.Process, graceful); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if !graceful {
		<-done
		return nil
	}
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
		_ = signalGroup(cmd.Process, false)
		<-done
		return fmt.Errorf("%s: did not stop within %v; killed", p.Name, timeout)
	}
}

// RSS is the resident memory of the running process in bytes, from
// /proc/<pid>/status (VmRSS).
func (p *Process) RSS() (int64, error) {
	pid := p.Pid()
	if pid == 0 {
		return 0, fmt.Errorf("%s: %w", p.Name, ErrNotRunning)
	}
	return RSSOf(pid)
}

// RSSOf reads VmRSS of a process from /proc/<pid>/status.
func RSSOf(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("rss of %d: %w", pid, err)
	}
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("rss of %d: unexpected line %q", pid, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("rss of %d: %w", pid, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("rss of %d: no VmRSS line", pid)
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string {
	if p.Log == "" {
		return ""
	}
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
