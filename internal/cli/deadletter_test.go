package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/testsrv/testbus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestDeadLetterCommand: messages a consumer gives up on are listed by
// "crucible deadletter list" with their reason and counted, and "retry"
// re-publishes them once their cause has gone, after which the list is
// empty and the consumer has handled each once.
func TestDeadLetterCommand(t *testing.T) {
	redisURL, _ := testsrv.Redis(t)
	ns := testsrv.Namespace()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, natsURL := testbus.Open(t, ctx, ns)
	var broken atomic.Bool
	var handled atomic.Int32
	broken.Store(true)
	spec := messages.ConsumerSpec{Name: "cli-test", Stream: messages.StreamCandidates, FilterSubject: messages.SubjectCandidates + ".>", AckWait: 5 * time.Second, MaxAckPending: 16}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = b.Run(rctx, spec, bus.RunOptions{Concurrency: 2, Service: "test"}, func(context.Context, *bus.Delivery) error {
			if broken.Load() {
				return bus.Permanent(errors.New("model server unreachable"))
			}
			handled.Add(1)
			return nil
		})
	}()
	defer func() { stop(); <-done }()
	for _, id := range []string{"one", "two"} {
		if err := b.PublishRaw(ctx, messages.Subject(messages.SubjectCandidates, "dlcli"), id, []byte(`{"id":"`+id+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"--nats", natsURL, "--redis", redisURL, "--namespace", ns, "--connect-timeout", "20s"}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := runCLI(t, "", append(append([]string{"deadletter"}, args...), flags...)...)
		return out, err
	}
	var (
		out string
		err error
	)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if out, err = run("list"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, "2 dead letters") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{"DELIVERIES", "CANDIDATES", "crucible.candidates.dlcli", "2  model server unreachable"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	out, err = run("list", "dlcli", "--json", "--stream", "candidates")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var first struct {
		Seq      uint64 `json:"seq"`
		Campaign string `json:"campaign"`
		Reason   string `json:"reason"`
	}
	if err != nil || len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || first.Campaign != "dlcli" || first.Seq == 0 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if out, err := run("list", "--stream", "candidates", "--reason", "no such reason"); err != nil || !strings.Contains(out, "no dead letters") {
		t.Errorf("list --reason that matches nothing: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"retry"}, {"purge"}, {"list", "--limit", "-1"}, {"list", "--stream", "nowhere"}, {"list", "bad/id"}} {
		if _, err := run(args...); err == nil {
			t.Errorf("deadletter %v: no error", args)
		}
	}
	if out, err := run("retry", "dlcli", "--dry-run"); err != nil || !strings.Contains(out, "2 selected: 2 would retry") {
		t.Errorf("retry --dry-run: %v\n%s", err, out)
	}
	broken.Store(false)
	if out, err := run("retry", "--seq", "999999"); err != nil || !strings.Contains(out, "0 selected") {
		t.Errorf("retry --seq of none: %v\n%s", err, out)
	}
	if out, err := run("retry", "dlcli"); err != nil || !strings.Contains(out, "2 selected: 2 retried") {
		t.Fatalf("retry: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); handled.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if out, err := run("list"); err != nil || !strings.Contains(out, "no dead letters") || handled.Load() != 2 {
		t.Errorf("after retry: %d handled, %v\n%s", handled.Load(), err, out)
	}
}
