package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TestCampaignFlags: extend needs a budget, and the extension's flags go
// with extend only; both are refused (exit 2) before connecting.
func TestCampaignFlags(t *testing.T) {
	for _, args := range [][]string{
		{"campaign", "pause", "c1", "--max-llm-calls", "10"},
		{"campaign", "show", "c1", "--budget", "10"},
		{"campaign", "extend", "c1", "--max-llm-tokens", "10"},
	} {
		if _, _, err := runCLI(t, "", args...); exitStatusOf(err) != 2 {
			t.Errorf("%v: %v, want exit 2", args, err)
		}
	}
}

// TestSubmitWaitProgress: submit --wait prints the campaign id first,
// then its summary on stdout, and its progress on stderr (lines, off a
// terminal), to the budget spent.
func TestSubmitWaitProgress(t *testing.T) {
	natsURL, redisURL := testbed.NATSURL(), testbed.RedisURL()
	if natsURL == "" || redisURL == "" {
		t.Skip("CRUCIBLE_TEST_NATS_URL and CRUCIBLE_TEST_REDIS_URL name no servers")
	}
	const taskName, budget = "Stable Wide-Bandgap Semiconductors", 12
	tk, err := task.ByName(taskName)
	if err != nil {
		t.Fatal(err)
	}
	ns := testsrv.Namespace()
	opts, loaded, err := local.WithData(local.Options{NATSURL: natsURL, RedisURL: redisURL, Namespace: ns, MemoryStreams: true},
		testbed.DataDir(t), false, &messages.CampaignSpec{Task: tk, Budget: budget}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := loaded.Oracle.Prepare(tk.Required()); err != nil {
		t.Fatal(err)
	}
	opts.Evaluator.Delay = 100 * time.Millisecond // a run of a few seconds
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := local.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := st.Purge(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		st.Close()
	}()
	stdout, stderr, err := runCLI(t, "", "submit", "--task", taskName, "--budget", fmt.Sprint(budget), "--id", "followed", "--wait",
		"--nats", natsURL, "--redis", redisURL, "--namespace", ns)
	if err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if f := strings.Fields(stdout); len(f) < 2 || f[0] != "followed" || !strings.Contains(stdout, "completed") {
		t.Errorf("stdout, want the campaign id, then its summary:\n%s", stdout)
	}
	if strings.Contains(stdout, "eval/s") || !strings.Contains(stderr, fmt.Sprintf("%d/%d evaluated · ", budget, budget)) {
		t.Errorf("the progress, on stderr:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
