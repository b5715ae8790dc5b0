package local_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestDeadLetterRetryOnStack: the services dead-letter a generation
// request of an unknown campaign and a candidate that does not decode;
// the client lists both with their reasons, refuses nothing, and a retry
// of the request reaches the proposer again, which dead-letters it again
// (its cause is permanent) with the retry's mark, once.
func TestDeadLetterRetryOnStack(t *testing.T) {
	st := start(t, local.Options{})
	ctx := context.Background()
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	req := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: "ghost", Generation: 1, Slots: 4, Trigger: "test", RequestedAt: time.Now().UTC()}
	if err := st.Bus.Publish(ctx, messages.Subject(messages.SubjectPropose, "ghost"), req); err != nil {
		t.Fatal(err)
	}
	if err := st.Bus.PublishRaw(ctx, messages.Subject(messages.SubjectCandidates, "garbled"), "garbled-1", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	wait := func(f client.DeadLetterFilter, want int) []client.DeadLetterEntry {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			got, err := cl.DeadLetters(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == want {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("dead letters %+v: %d, want %d: %+v", f, len(got), want, got)
			}
		}
	}
	all := wait(client.DeadLetterFilter{}, 2)
	counts := client.DeadLetterCounts(all)
	if counts["generation N: unknown campaign CAMPAIGN"] != 1 || len(counts) != 2 {
		t.Errorf("dead letters by reason: %v", counts)
	}
	ghost := wait(client.DeadLetterFilter{Campaign: "ghost", Stream: "propose"}, 1)
	if g := ghost[0]; g.Consumer != messages.ConsumerProposer || g.Service == "" || g.Deliveries != 1 {
		t.Errorf("dead letter of the unknown campaign's request: %+v", g)
	}
	if bad := wait(client.DeadLetterFilter{Stream: "candidates", Reason: "invalid"}, 1); bad[0].Campaign != "garbled" || string(bad[0].Data) != "not json" {
		t.Errorf("dead letter of the undecodable candidate: %+v", bad[0])
	}

	outcomes, err := cl.Retry(ctx, ghost, false)
	if err != nil || len(outcomes) != 1 || outcomes[0].Outcome != client.RetryPublished {
		t.Fatalf("retry: %+v, %v", outcomes, err)
	}
	again := wait(client.DeadLetterFilter{Campaign: "ghost"}, 1)[0]
	if again.Seq == ghost[0].Seq || again.Reason != ghost[0].Reason || string(again.Data) != string(ghost[0].Data) ||
		again.Headers[messages.HeaderRetryOf][0] != strconv.FormatUint(ghost[0].Seq, 10) {
		t.Errorf("dead-lettered again: %+v (first %+v)", again, ghost[0])
	}
	// A second retry of the first dead letter, gone now, publishes nothing.
	if outcomes, err := cl.Retry(ctx, ghost, false); err != nil || outcomes[0].Outcome != client.RetryDuplicate {
		t.Errorf("second retry: %+v, %v", outcomes, err)
	}
	time.Sleep(2 * time.Second)
	wait(client.DeadLetterFilter{Campaign: "ghost"}, 1)
}
