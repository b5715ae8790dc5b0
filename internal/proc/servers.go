package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/nats-io/nats-server/v2/server"
)

// FreePort returns a TCP port on the loopback interface that was free a
// moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// WaitTCP waits until addr accepts connections, or timeout.
func WaitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not accepting connections after %v: %w", addr, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findBinary returns the named server program: on PATH, else in the
// directories Debian's packages install it to.
func findBinary(name string, dirs ...string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// NATSServerBinary is the nats-server program of this machine, or "".
func NATSServerBinary() string { return findBinary("nats-server", "/usr/sbin", "/usr/local/bin") }

// RedisServerBinary is the redis-server program of this machine, or "".
func RedisServerBinary() string { return findBinary("redis-server", "/usr/bin", "/usr/local/bin") }

// NATSOptions configure a NATS server.
type NATSOptions struct {
	// Dir stores JetStream's streams (file storage); required, and kept
	// across restarts.
	Dir string
	// Port to listen on (0: a free one, kept across restarts).
	Port int
	// Config is a nats-server configuration file (authorization, TLS);
	// the port and the storage directory given here win over it.
	Config string
	// Binary is the nats-server program; "" looks for one on this machine
	// and falls back to an embedded server when there is none.
	Binary string
	// Embedded runs the server in this process even if a program exists.
	Embedded bool
	// Log is the child's log file.
	Log string
}

// NATS is a NATS server with JetStream on file storage that can be killed
// and restarted on the same port with the same storage: a child process
// (nats-server) or, without one, an embedded server.
type NATS struct {
	opts NATSOptions
	proc *Process
	srv  *server.Server
	tls  bool
}

// StartNATS starts the server and waits until it accepts connections.
func StartNATS(o NATSOptions) (*NATS, error) {
	if o.Dir == "" {
		return nil, errors.New("proc: nats: no storage directory")
	}
	if o.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		o.Port = p
	}
	if o.Binary == "" && !o.Embedded {
		o.Binary = NATSServerBinary()
	}
	n := &NATS{opts: o}
	if o.Config != "" {
		opts, err := server.ProcessConfigFile(o.Config)
		if err != nil {
			return nil, fmt.Errorf("proc: nats config: %w", err)
		}
		n.tls = opts.TLSConfig != nil
	}
	if !n.Embedded() {
		args := []string{"-a", "127.0.0.1", "-p", strconv.Itoa(o.Port), "-js", "-sd", o.Dir}
		if o.Config != "" {
			args = append([]string{"-c", o.Config}, args...)
		}
		n.proc = &Process{Name: "nats-server", Path: o.Binary, Args: args, Log: o.Log}
	}
	if err := n.Start(); err != nil {
		return nil, err
	}
	return n, nil
}

// Embedded reports whether the server runs in this process.
func (n *NATS) Embedded() bool { return n.opts.Embedded || n.opts.Binary == "" }

// URL is the client URL (tls:// when the configuration enables TLS).
func (n *NATS) URL() string {
	scheme := "nats"
	if n.tls {
		scheme = "tls"
	}
	return scheme + "://127.0.0.1:" + strconv.Itoa(n.opts.Port)
}

// Port is the client port.
func (n *NATS) Port() int { return n.opts.Port }

// Process is the child process (nil for an embedded server).
func (n *NATS) Process() *Process { return n.proc }

// Start (re)starts the server on its port and storage directory.
func (n *NATS) Start() error {
	addr := "127.0.0.1:" + strconv.Itoa(n.opts.Port)
	if n.proc != nil {
		if err := n.proc.Start(); err != nil {
			return err
		}
		if err := WaitTCP(addr, 15*time.Second); err != nil {
			_ = n.proc.Kill()
			return fmt.Errorf("proc: nats-server: %w\n%s", err, n.proc.Tail(20))
		}
		return nil
	}
	opts := &server.Options{}
	if n.opts.Config != "" {
		var err error
		if opts, err = server.ProcessConfigFile(n.opts.Config); err != nil {
			return fmt.Errorf("proc: nats config: %w", err)
		}
	}
	opts.ServerName = "crucible-proc"
	opts.Host, opts.Port = "127.0.0.1", n.opts.Port
	opts.JetStream, opts.StoreDir = true, n.opts.Dir
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("proc: embedded nats: %w", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(15 * time.Second) {
		srv.Shutdown()
		return errors.New("proc: embedded nats: not ready after 15 s")
	}
	n.srv = srv
	return nil
}

// Kill stops the server abruptly: SIGKILL for a child; an embedded server
// can only be shut down.
func (n *NATS) Kill() error {
	if n.proc != nil {
		return n.proc.Kill()
	}
	return n.shutdown()
}

// Stop stops the server gracefully.
func (n *NATS) Stop() error {
	if n.proc != nil {
		return n.proc.Stop(10 * time.Second)
	}
	return n.shutdown()
}

func (n *NATS) shutdown() error {
	if n.srv == nil {
		return ErrNotRunning
	}
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
	n.srv = nil
	return nil
}

// Close stops the server if it runs.
func (n *NATS) Close() {
	if n.proc != nil {
		if n.proc.Running() {
			_ = n.proc.Kill()
		}
		return
	}
	_ = n.shutdown()
}

// RedisOptions configure a Redis server.
type RedisOptions struct {
	// Dir holds the append-only file; required for a child, kept across
	// restarts.
	Dir string
	// Port to listen on (0: a free one, kept across restarts).
	Port int
	// Password turns on AUTH (requirepass).
	Password string
	// TLS serves TLS only, with these PEM files (a child only).
	TLSCert, TLSKey, TLSCA string
	// Binary is the redis-server program; "" looks for one on this
	// machine and falls back to an embedded server when there is none.
	Binary string
	// Embedded runs miniredis in this process even if a program exists.
	// Its "restart" keeps the data in memory: it cannot test the
	// append-only file.
	Embedded bool
	// Log is the child's log file.
	Log string
}

// Redis is a Redis server with the append-only file on (fsync every
// second), killable and restartable on the same port with the same data: a
// child process (redis-server) or, without one, miniredis.
type Redis struct {
	opts RedisOptions
	proc *Process
	mr   *miniredis.Miniredis
}

// StartRedis starts the server and waits until it accepts connections.
func StartRedis(o RedisOptions) (*Redis, error) {
	if o.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		o.Port = p
	}
	if o.Binary == "" && !o.Embedded {
		o.Binary = RedisServerBinary()
	}
	r := &Redis{opts: o}
	if r.Embedded() {
		if o.TLSCert != "" {
			return nil, errors.New("proc: the embedded Redis cannot serve TLS here")
		}
		r.mr = miniredis.NewMiniRedis()
		if o.Password != "" {
			r.mr.RequireAuth(o.Password)
		}
	} else {
		if o.Dir == "" {
			return nil, errors.New("proc: redis: no data directory")
		}
		args := []string{"--bind", "127.0.0.1", "--dir", o.Dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""}
		if o.TLSCert != "" {
			args = append(args, "--port", "0", "--tls-port", strconv.Itoa(o.Port),
				"--tls-cert-file", o.TLSCert, "--tls-key-file", o.TLSKey, "--tls-ca-cert-file", o.TLSCA, "--tls-auth-clients", "no")
		} else {
			args = append(args, "--port", strconv.Itoa(o.Port))
		}
		if o.Password != "" {
			args = append(args, "--requirepass", o.Password)
		}
		if o.Log != "" {
			args = append(args, "--logfile", o.Log)
		}
		r.proc = &Process{Name: "redis-server", Path: o.Binary, Args: args}
	}
	if err := r.Start(); err != nil {
		return nil, err
	}
	return r, nil
}

// Embedded reports whether the server is miniredis in this process.
func (r *Redis) Embedded() bool { return r.opts.Embedded || r.opts.Binary == "" }

// URL is the client URL (rediss:// with TLS), without the password.
func (r *Redis) URL() string {
	scheme := "redis"
	if r.opts.TLSCert != "" {
		scheme = "rediss"
	}
	return scheme + "://127.0.0.1:" + strconv.Itoa(r.opts.Port)
}

// Process is the child process (nil for miniredis).
func (r *Redis) Process() *Process { return r.proc }

// Miniredis is the embedded server (nil for a child).
func (r *Redis) Miniredis() *miniredis.Miniredis { return r.mr }

// Start (re)starts the server; a child reloads its append-only file.
func (r *Redis) Start() error {
	addr := "127.0.0.1:" + strconv.Itoa(r.opts.Port)
	if r.mr != nil {
		return r.mr.StartAddr(addr)
	}
	if err := r.proc.Start(); err != nil {
		return err
	}
	if err := WaitTCP(addr, 15*time.Second); err != nil {
		_ = r.proc.Kill()
		return fmt.Errorf("proc: redis-server: %w", err)
	}
	return nil
}

// Kill stops the server abruptly (SIGKILL; miniredis is closed, keeping
// its data).
func (r *Redis) Kill() error {
	if r.mr != nil {
		r.mr.Close()
		return nil
	}
	return r.proc.Kill()
}

// ErrNoSnapshot: the embedded server keeps no files to go back to.
var ErrNoSnapshot = errors.New("proc: the embedded Redis keeps no append-only file to snapshot")

// snapshotDir is where Snapshot keeps its copy.
func (r *Redis) snapshotDir() string { return filepath.Clean(r.opts.Dir) + ".snapshot" }

// Snapshot copies the server's append-only files as they are now, while
// it runs: a copy taken mid-write may end in a partial command, which
// Redis drops when it loads the file, as after a crash that truncated it.
func (r *Redis) Snapshot() error {
	if r.mr != nil {
		return ErrNoSnapshot
	}
	dst := r.snapshotDir()
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return copyTree(r.opts.Dir, dst)
}

// RestoreSnapshot replaces the server's files with the last Snapshot's:
// started again, the server has the state of that moment and has lost
// everything written since (a power loss with a lagging disk, a failover
// to a replica behind). The server must be stopped.
func (r *Redis) RestoreSnapshot() error {
	if r.mr != nil {
		return ErrNoSnapshot
	}
	if r.proc.Running() {
		return errors.New("proc: redis-server runs: stop it before restoring a snapshot")
	}
	src := r.snapshotDir()
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("proc: no snapshot: %w", err)
	}
	if err := os.RemoveAll(r.opts.Dir); err != nil {
		return err
	}
	return copyTree(src, r.opts.Dir)
}

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// Close stops the server if it runs.
func (r *Redis) Close() {
	if r.mr != nil {
		r.mr.Close()
		return
	}
	if r.proc.Running() {
		_ = r.proc.Kill()
	}
}

// WaitContext waits for ctx or d, whichever ends first, and reports
// whether d elapsed.
func WaitContext(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
