package local_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestWaitDoneProgress: following a campaign to its end as crucible
// submit --wait does shows its progress (not on a terminal: lines, from
// none evaluated to the budget spent) and returns its final status.
func TestWaitDoneProgress(t *testing.T) {
	opts := local.Options{}
	opts.Evaluator.Delay = 40 * time.Millisecond // a few seconds' run
	st := start(t, opts)
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	spec := &messages.CampaignSpec{ID: "followed", Task: easyTask(), Budget: 40, Seed: 4, BatchSize: 4, MaxInFlight: 2}
	if err := cl.Submit(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	status, err := cl.WaitDoneProgress(ctx, spec.ID, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	if status.State != messages.StateCompleted {
		t.Fatalf("final status %s, want completed", status.State)
	}
	t.Logf("progress:\n%s", out.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if len(lines) < 3 || !strings.HasPrefix(last, fmt.Sprintf("%d/%d evaluated · ", spec.Budget, spec.Budget)) ||
		!strings.HasSuffix(last, "eval/s") {
		t.Errorf("progress:\n%s", out.String())
	}
	if strings.Contains(out.String(), "\r") || strings.Contains(out.String(), "waiting for") {
		t.Errorf("progress off a terminal, without an outage:\n%s", out.String())
	}
}
