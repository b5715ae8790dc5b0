package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
)

// TestMain lets the test binary play a child process: with
// PROC_TEST_CHILD set it prints a line and waits for SIGTERM.
func TestMain(m *testing.M) {
	if os.Getenv("PROC_TEST_CHILD") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		fmt.Println("child up")
		<-ctx.Done()
		fmt.Println("child got SIGTERM")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(t *testing.T) *Process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Name: "child", Path: exe, Args: []string{"-test.run=^$"}, Env: []string{"PROC_TEST_CHILD=1"}, Log: filepath.Join(t.TempDir(), "child.log")}
	t.Cleanup(func() {
		if p.Running() {
			_ = p.Kill()
		}
	})
	return p
}

// waitLog waits until the process's log holds want.
func waitLog(t *testing.T, p *Process, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Tail(100), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log never showed %q:\n%s", want, p.Tail(20))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessLifecycle(t *testing.T) {
	p := child(t)
	if err := p.Stop(time.Second); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Stop before Start: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err == nil {
		t.Error("a second Start of a running process succeeded")
	}
	waitLog(t, p, "child up")
	if rss, err := p.RSS(); err != nil || rss <= 0 {
		t.Errorf("RSS = %d, %v", rss, err)
	}
	// SIGTERM: the child shuts down on its own, with status 0.
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.ExitErr() != nil || !strings.Contains(p.Tail(5), "child got SIGTERM") {
		t.Errorf("after Stop: running %v, exit %v, log:\n%s", p.Running(), p.ExitErr(), p.Tail(5))
	}
	// Restart, then SIGKILL: no chance to react.
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	waitLog(t, p, "--- start 2")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if p.Running() || p.ExitErr() == nil || p.Starts() != 2 {
		t.Errorf("after Kill: running %v, exit %v, starts %d", p.Running(), p.ExitErr(), p.Starts())
	}
}

// A NATS server killed with SIGKILL (or shut down, embedded) comes back on
// its port with its streams.
func TestNATSRestartKeepsStreams(t *testing.T) {
	for _, embedded := range []bool{false, true} {
		t.Run(fmt.Sprintf("embedded=%v", embedded), func(t *testing.T) {
			if !embedded && NATSServerBinary() == "" {
				t.Skip("no nats-server on this machine")
			}
			n, err := StartNATS(NATSOptions{Dir: t.TempDir(), Embedded: embedded, Log: filepath.Join(t.TempDir(), "nats.log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(n.Close)
			if n.Embedded() != embedded {
				t.Fatalf("embedded %v, want %v", n.Embedded(), embedded)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			publish := func() {
				nc, err := nats.Connect(n.URL())
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				js, _ := jetstream.New(nc)
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}, Storage: jetstream.FileStorage}); err != nil {
					t.Fatal(err)
				}
				if _, err := js.Publish(ctx, "s.1", []byte("kept")); err != nil {
					t.Fatal(err)
				}
			}
			publish()
			if err := n.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := n.Start(); err != nil {
				t.Fatal(err)
			}
			nc, err := nats.Connect(n.URL(), nats.RetryOnFailedConnect(true))
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			var msg *jetstream.RawStreamMsg
			for msg == nil { // JetStream recovers the stream after the listener is up
				s, err := js.Stream(ctx, "S")
				if err == nil {
					msg, err = s.GetMsg(ctx, 1)
				}
				if ctx.Err() != nil {
					t.Fatalf("stream after restart: %v", err)
				}
				if msg == nil {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if string(msg.Data) != "kept" {
				t.Errorf("message after restart: %q", msg.Data)
			}
		})
	}
}

// A Redis server killed with SIGKILL comes back with what it
// acknowledged (the append-only file; miniredis keeps its memory).
func TestRedisRestartKeepsData(t *testing.T) {
	for _, embedded := range []bool{false, true} {
		t.Run(fmt.Sprintf("embedded=%v", embedded), func(t *testing.T) {
			if !embedded && RedisServerBinary() == "" {
				t.Skip("no redis-server on this machine")
			}
			dir := t.TempDir()
			r, err := StartRedis(RedisOptions{Dir: dir, Password: "pw", Embedded: embedded, Log: filepath.Join(dir, "redis.log")})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			opts, err := redis.ParseURL(r.URL())
			if err != nil {
				t.Fatal(err)
			}
			opts.Password = "pw"
			rdb := redis.NewClient(opts)
			defer rdb.Close()
			if err := rdb.Set(ctx, "k", "kept", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if err := r.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			var v string
			for v == "" { // redis answers LOADING until the file is read
				v, err = rdb.Get(ctx, "k").Result()
				if ctx.Err() != nil {
					t.Fatalf("get after restart: %v", err)
				}
				if v == "" {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if v != "kept" {
				t.Errorf("after restart: %q", v)
			}
			bad := redis.NewClient(&redis.Options{Addr: opts.Addr, Password: "wrong"})
			defer bad.Close()
			if err := bad.Ping(ctx).Err(); err == nil {
				t.Error("a wrong password was accepted")
			}
		})
	}
}

func TestBuildRejectsUnknownBinary(t *testing.T) {
	if _, err := Build(context.Background(), t.TempDir(), t.TempDir(), "no-such-binary"); err == nil {
		t.Error("Build of an unknown binary succeeded")
	}
}
