package local_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestSubmitExistingID: submitting an id the installation holds is an
// error that says the campaign's state and how to raise its budget,
// never a silent repeat of the old campaign's summary; the campaign is
// left as it was.
func TestSubmitExistingID(t *testing.T) {
	st := start(t, local.Options{})
	spec := &messages.CampaignSpec{ID: "twice", Task: easyTask(), Budget: 8, Seed: 3}
	if _, err := local.Run(context.Background(), st, spec, local.RunOptions{Timeout: 3 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	before, err := st.Store.State(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	again := &messages.CampaignSpec{ID: "twice", Task: easyTask(), Budget: 50, Seed: 3}
	err = cl.Submit(ctx, again)
	if !errors.Is(err, client.ErrExists) || !strings.Contains(err.Error(), "completed, 8 of 8 evaluated") || !strings.Contains(err.Error(), "crucible campaign extend twice --budget N") {
		t.Fatalf("resubmitting an existing id: %v", err)
	}
	after, err := st.Store.State(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Budget != before.Budget || after.Counters != before.Counters {
		t.Errorf("the resubmission changed the campaign: budget %d → %d, counters %+v → %+v", before.Budget, after.Budget, before.Counters, after.Counters)
	}
}
