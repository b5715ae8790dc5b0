package local_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/testbed/forgery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// deadLetters reads every dead letter of the stack's namespace until
// stop says enough arrived or the deadline passes.
func deadLetters(t *testing.T, st *local.Stack, within time.Duration, stop func([]messages.DeadLetter) bool) []messages.DeadLetter {
	t.Helper()
	return forgery.DeadLetters(t, st.Bus.JS, st.Bus.Stream(messages.StreamDeadLetter), within, stop)
}

// snapshot is what forged traffic must not change (forgery.Snapshot).
func snapshot(t *testing.T, st *local.Stack, spec *messages.CampaignSpec) string {
	t.Helper()
	return forgery.Snapshot(t, st.Store, spec)
}

// TestForgedTrafficIsDeadLettered forges each kind of work a service user
// could publish within its permissions — candidates no proposer recorded
// and recorded ones altered, evaluations of them and evaluations whose
// flags disagree with their values, generation requests nobody reserved,
// and real work sent again after the campaign completed — and checks that
// each becomes a dead letter with its reason while nothing the campaign
// counts, pools or publishes changes.
func TestForgedTrafficIsDeadLettered(t *testing.T) {
	st := start(t, local.Options{})
	spec := &messages.CampaignSpec{ID: "forged", Task: easyTask(), Budget: 20, Seed: 5}
	res, err := local.Run(context.Background(), st, spec, local.RunOptions{Timeout: 4 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Evaluated != spec.Budget {
		t.Fatalf("%d evaluated before forging, budget %d", res.Summary.Evaluated, spec.Budget)
	}
	ctx := context.Background()
	filled, err := st.Store.Spec(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, st, filled)
	// A real evaluation the judge was not asked about: forged flags make
	// it look like a discovery.
	var real *messages.Evaluation
	for _, ev := range res.Evaluations {
		if !ev.ForJudge() {
			real = ev
			break
		}
	}
	if real == nil {
		t.Fatal("every evaluation was a stable hit")
	}

	type forgery struct {
		name    string
		subject string
		msg     messages.Message
		reason  string // in every dead letter of it
		letters int    // dead letters expected (the reflector's and the judge's for an evaluation)
	}
	var forged []forgery
	// A candidate no proposer recorded.
	fake := real.Candidate
	fake.ID = messages.CandidateID(spec.ID, 999, 0)
	fake.Generation = 999
	forged = append(forged, forgery{"candidate of an unreserved generation", messages.SubjectCandidates, &fake, "campaign forged is completed", 1})
	// A real candidate sent again after completion.
	again := real.Candidate
	again.Structure.Lattice[0][0] *= 1.01
	forged = append(forged, forgery{"altered candidate after completion", messages.SubjectCandidates, &again, "campaign forged is completed", 1})
	// An evaluation of a candidate no proposer recorded (the reflector
	// dead-letters it; its values make no hit, so the judge leaves it).
	ev := *real
	ev.Candidate = fake
	ev.ID = fake.ID
	forged = append(forged, forgery{"evaluation of an unrecorded candidate", messages.SubjectEvaluations, &ev, "campaign forged is completed", 1})
	// A discovery's evaluation under an unrecorded candidate's id: a hit
	// by its values, which both the reflector and the judge refuse.
	if len(res.Discoveries) > 0 {
		hit := res.Discoveries[0].Evaluation
		hit.Candidate = fake
		hit.Candidate.ID = messages.CandidateID(spec.ID, 999, 1)
		hit.Candidate.Index = 1
		hit.ID = hit.Candidate.ID
		forged = append(forged, forgery{"discovery under an unrecorded candidate", messages.SubjectEvaluations, &hit, "campaign forged is completed", 2})
	}
	// A recorded evaluation with flags its values contradict (the
	// reflector and the judge both derive them again).
	flags := *real
	flags.Feasible, flags.Stable, flags.Novel, flags.HullOutlier = true, true, true, false
	forged = append(forged, forgery{"evaluation with forged flags", messages.SubjectEvaluations, &flags, "its values give", 2})
	// A generation request nobody reserved, and one of an unknown campaign.
	req := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: spec.ID, Generation: 500, Slots: 8, Trigger: "forged", RequestedAt: time.Now().UTC()}
	forged = append(forged, forgery{"generation request after completion", messages.SubjectPropose, req, "campaign forged is completed", 1})
	unknown := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: "nosuch", Generation: 0, Slots: 8, Trigger: "forged", RequestedAt: time.Now().UTC()}
	forged = append(forged, forgery{"generation request of an unknown campaign", messages.SubjectPropose, unknown, "unknown campaign nosuch", 1})

	want := 0
	for _, f := range forged {
		// Another message id than the real message's, so the stream's
		// duplicate window does not drop it.
		data, err := messages.Encode(f.msg)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		if err := st.Bus.PublishRaw(ctx, messages.Subject(f.subject, campaignOf(f.msg)), "forged/"+f.name, data); err != nil {
			t.Fatal(err)
		}
		want += f.letters
	}
	letters := deadLetters(t, st, time.Minute, func(ls []messages.DeadLetter) bool { return len(ls) >= want })
	for _, f := range forged {
		data, _ := messages.Encode(f.msg)
		n := 0
		for _, l := range letters {
			if string(l.Data) == string(data) {
				n++
				if !strings.Contains(l.Reason, f.reason) {
					t.Errorf("%s: dead letter reason %q, want it to say %q", f.name, l.Reason, f.reason)
				}
			}
		}
		if n != f.letters {
			t.Errorf("%s: %d dead letters, want %d", f.name, n, f.letters)
		}
	}
	t.Logf("%d forged messages, %d dead letters", len(forged), len(letters))
	for _, c := range []string{"evaluator", "reflector", "judge", "proposer"} {
		if err := waitConsumerIdle(ctx, st, c); err != nil {
			t.Fatal(err)
		}
	}
	if after := snapshot(t, st, filled); after != before {
		t.Errorf("forged traffic changed the campaign:\n before %s\n after  %s", before, after)
	}
}

func campaignOf(m messages.Message) string {
	switch m := m.(type) {
	case *messages.Candidate:
		return m.Campaign
	case *messages.Evaluation:
		return m.Campaign
	case *messages.GenerationRequest:
		return m.Campaign
	}
	return "unknown"
}

// waitConsumerIdle waits until a durable consumer has nothing pending or
// unacknowledged.
func waitConsumerIdle(ctx context.Context, st *local.Stack, consumer string) error {
	spec, err := messages.ConsumerByName(consumer)
	if err != nil {
		return err
	}
	return forgery.WaitIdle(ctx, st.Bus.JS, st.Bus.Stream(spec.Stream), consumer, time.Minute)
}
