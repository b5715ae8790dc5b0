package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed/forgery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// secureInstall is what TestSecureInstallation started: the servers, the
// users' passwords and the services.
type secureInstall struct {
	natsURL, redisURL, ca string
	pw                    map[string]string
	// crucible runs the command-line client as a NATS user.
	crucible func(user string, timeout time.Duration, args ...string) (string, error)
	procs    []*proc.Process
}

// busAs connects to NATS as user, as the services do (--provisioned).
func (in *secureInstall) busAs(t *testing.T, ctx context.Context, user string) *bus.Bus {
	t.Helper()
	b, err := bus.Connect(ctx, bus.Options{URL: in.natsURL, Name: "forger-" + user, User: user, Password: in.pw[user], TLSCAFile: in.ca, Provisioned: true})
	if err != nil {
		t.Fatalf("NATS as %s: %v", user, err)
	}
	t.Cleanup(b.Close)
	return b
}

// adminStore opens the store as Redis's default user (the operator's).
func (in *secureInstall) adminStore(t *testing.T, ctx context.Context) *store.Store {
	t.Helper()
	o := store.Options{URL: in.redisURL, Password: in.pw["redis"]}
	if strings.HasPrefix(in.redisURL, "rediss://") {
		o.TLSCAFile = in.ca
	}
	s, err := store.Open(ctx, o)
	if err != nil {
		t.Fatalf("redis as the operator: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// streamBodies reads every message a stream holds on filter now.
func streamBodies(t *testing.T, ctx context.Context, b *bus.Bus, stream, filter string) [][]byte {
	t.Helper()
	s, err := b.JS.Stream(ctx, b.Stream(stream))
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(b.Subject(filter)))
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(0)
	for _, c := range info.State.Subjects {
		n += c
	}
	out := forgery.Messages(t, b.JS, b.Stream(stream), b.Subject(filter), 30*time.Second, func(bs [][]byte) bool { return uint64(len(bs)) >= n })
	if uint64(len(out)) < n {
		t.Fatalf("read %d of the %d messages of %s on %s", len(out), n, stream, filter)
	}
	return out
}

// evaluationsOf reads a campaign's evaluations from EVALUATIONS.
func evaluationsOf(t *testing.T, ctx context.Context, b *bus.Bus, campaign string) []*messages.Evaluation {
	t.Helper()
	var out []*messages.Evaluation
	for _, body := range streamBodies(t, ctx, b, messages.StreamEvaluations, messages.Subject(messages.SubjectEvaluations, campaign)) {
		ev := new(messages.Evaluation)
		if err := messages.Decode(body, ev); err != nil {
			t.Fatalf("evaluation of %s: %v", campaign, err)
		}
		out = append(out, ev)
	}
	return out
}

// judgedIDs are the candidates of a campaign the judge published a
// discovery or a rejection of (DISCOVERIES).
func judgedIDs(t *testing.T, ctx context.Context, b *bus.Bus, campaign string) []string {
	t.Helper()
	var ids []string
	for _, prefix := range []string{messages.SubjectDiscoveries, messages.SubjectVerdicts} {
		for _, body := range streamBodies(t, ctx, b, messages.StreamDiscoveries, messages.Subject(prefix, campaign)) {
			var v messages.Verdict
			if err := messages.Decode(body, &v); err != nil {
				t.Fatalf("verdict of %s: %v", campaign, err)
			}
			ids = append(ids, prefix+"/"+v.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// waitState polls a campaign's state until ok says so.
func waitState(t *testing.T, ctx context.Context, st *store.Store, campaign string, within time.Duration, what string, ok func(*store.State) bool) *store.State {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s, err := st.State(ctx, campaign)
		if err == nil && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("campaign %s: not %s within %v (state %+v, %v)", campaign, what, within, s, err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("campaign %s: %v while waiting until %s", campaign, ctx.Err(), what)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// forgeAsServices forges, with the deployment's per-service NATS users and
// within each user's permissions, each kind of work a service could send:
// as the evaluator, evaluations of a candidate no proposer recorded, of a
// recorded candidate with flags its values contradict, and a second
// evaluation of an evaluated candidate; as the proposer, a candidate id
// never accepted, a recorded candidate altered, and candidates of the
// campaign completed; as the reflector, generation requests nobody
// reserved. Most go to a second campaign under way (paused after its
// first generations, so that it holds still); the work after completion
// to the completed one. Then, as the administrator, each forgery must be
// in DEADLETTER with its reason, and neither campaign's counters, pools,
// verdicts and discoveries may have changed; resumed, the second campaign
// must end at its budget with no trace of the forgeries.
func forgeAsServices(t *testing.T, ctx context.Context, in *secureInstall, task, done string) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range in.procs {
				t.Logf("%s:\n%s", p.Name, p.Tail(15))
			}
		}
	})
	admin := in.busAs(t, ctx, "admin")
	st := in.adminStore(t, ctx)
	specDone, err := st.Spec(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	beforeDone := forgery.Snapshot(t, st, specDone)
	judgedDone := judgedIDs(t, ctx, admin, done)
	evsDone := evaluationsOf(t, ctx, admin, done)

	// A campaign under way while most forgeries arrive: paused after its
	// first generations (the evaluator's cost per candidate keeps it from
	// completing first) and drained, so that its counters, pools and
	// verdicts hold still while the forgeries are handled; then resumed.
	const budget = 120
	out, err := in.crucible("client", time.Minute, "submit", "--task", task, "--budget", fmt.Sprint(budget))
	if err != nil {
		t.Fatalf("crucible submit as client: %v\n%s", err, out)
	}
	running := strings.Fields(out)[0]
	waitState(t, ctx, st, running, 2*time.Minute, "evaluating its first generations", func(s *store.State) bool { return s.Counters.Evaluated >= 6 })
	if out, err := in.crucible("client", time.Minute, "campaign", "pause", running); err != nil {
		t.Fatalf("crucible campaign pause as client: %v\n%s", err, out)
	}
	paused := waitState(t, ctx, st, running, 2*time.Minute, "paused and drained", func(s *store.State) bool {
		return s.Status != messages.StateRunning && s.Inflight == 0
	})
	if paused.Status != messages.StatePaused {
		t.Fatalf("campaign %s is %s, not paused, after %d evaluations: the evaluator is too fast for the test", running, paused.Status, paused.Counters.Evaluated)
	}
	idle := func() {
		t.Helper()
		for _, name := range []string{messages.ConsumerProposer, messages.ConsumerEvaluator, messages.ConsumerReflector, messages.ConsumerJudge} {
			c, err := messages.ConsumerByName(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := forgery.WaitIdle(ctx, admin.JS, admin.Stream(c.Stream), name, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
		}
	}
	idle()
	specRunning, err := st.Spec(ctx, running)
	if err != nil {
		t.Fatal(err)
	}
	beforeRunning := forgery.Snapshot(t, st, specRunning)
	judgedRunning := judgedIDs(t, ctx, admin, running)
	var seed, plain []*messages.Evaluation // a seed's evaluation; proposed candidates' for no judge
	var hit *messages.Evaluation           // a stable hit's, if any (its values make a discovery)
	for _, ev := range append(evaluationsOf(t, ctx, admin, running), evsDone...) {
		switch {
		case ev.ForJudge() && hit == nil:
			hit = ev
		case ev.Campaign != running:
		case ev.Candidate.Seed:
			seed = append(seed, ev)
		case !ev.ForJudge() && ev.Valid:
			plain = append(plain, ev)
		}
	}
	if len(seed) == 0 || len(plain) < 2 {
		t.Fatalf("campaign %s: %d seed evaluations, %d valid ones for no judge; want 1 and 2 to forge from", running, len(seed), len(plain))
	}
	var realDone *messages.Evaluation
	for _, ev := range evsDone {
		if !ev.Candidate.Seed {
			realDone = ev
			break
		}
	}
	if realDone == nil {
		t.Fatalf("campaign %s has no evaluation of a proposed candidate", done)
	}

	type forged struct {
		name, user, subject string
		msg                 messages.Message
		reason              string // in each of its dead letters
		letters             int    // its dead letters: one per service that refuses it
	}
	// An evaluation is refused by the reflector, and by the judge too when
	// it claims flags its values do not give or asks for a verdict.
	evalLetters := func(spec *messages.CampaignSpec, ev *messages.Evaluation) int {
		if evaluator.CheckFlags(spec, ev) != nil || ev.ForJudge() {
			return 2
		}
		return 1
	}
	var forgeries []forged
	// As the evaluator.
	unrecorded := *plain[0]
	unrecorded.Candidate.Generation = 900
	unrecorded.Candidate.ID = messages.CandidateID(running, 900, 0)
	unrecorded.Candidate.Index = 0
	unrecorded.ID = unrecorded.Candidate.ID
	forgeries = append(forgeries, forged{"evaluation of a candidate no proposer recorded", "evaluator", messages.SubjectEvaluations, &unrecorded,
		"generation 900 has no recorded proposal", evalLetters(specRunning, &unrecorded)})
	flags := *plain[0]
	flags.Feasible, flags.Stable, flags.Novel, flags.HullOutlier = true, true, true, false
	if evaluator.CheckFlags(specRunning, &flags) == nil {
		t.Fatalf("evaluation %s: its values give the forged flags", flags.ID)
	}
	forgeries = append(forgeries, forged{"evaluation whose flags make a discovery its values do not", "evaluator", messages.SubjectEvaluations, &flags,
		"its values give", 2})
	second := *plain[1]
	if hit != nil {
		// The values of a stable hit, under the candidate evaluated already.
		second = *hit
		second.ID, second.Campaign, second.Candidate = plain[1].ID, plain[1].Campaign, plain[1].Candidate
		if evaluator.CheckFlags(specRunning, &second) != nil {
			second = *plain[1]
		}
	}
	second.Score += 0.5
	second.Evaluator = "forger"
	forgeries = append(forgeries, forged{"second evaluation of an evaluated candidate", "evaluator", messages.SubjectEvaluations, &second,
		"differs from the evaluation", evalLetters(specRunning, &second)})
	// As the proposer.
	never := plain[0].Candidate
	never.ID, never.Index = messages.CandidateID(running, plain[0].Candidate.Generation, 99), 99
	forgeries = append(forgeries, forged{"candidate id never accepted", "proposer", messages.SubjectCandidates, &never,
		fmt.Sprintf("not accepted for generation %d", never.Generation), 1})
	altered := seed[0].Candidate
	altered.Structure.Lattice[0][0] += 0.2 // a first lattice vector may have no x component
	if altered.Digest() == seed[0].Candidate.Digest() {
		t.Fatal("altering a seed's lattice left its digest")
	}
	forgeries = append(forgeries, forged{"recorded candidate with an altered structure", "proposer", messages.SubjectCandidates, &altered,
		"differs from the recorded seed", 1})
	againDone := realDone.Candidate
	forgeries = append(forgeries, forged{"recorded candidate after completion", "proposer", messages.SubjectCandidates, &againDone,
		"is completed", 1})
	newDone := realDone.Candidate
	newDone.Generation, newDone.Index = 500, 0
	newDone.ID = messages.CandidateID(done, 500, 0)
	forgeries = append(forgeries, forged{"new candidate after completion", "proposer", messages.SubjectCandidates, &newDone,
		"is completed", 1})
	// As the reflector.
	for _, r := range []struct {
		name, campaign, reason string
	}{
		{"generation request nobody reserved", running, "generation 900 of " + running + " was never reserved"},
		{"generation request after completion", done, "is completed"},
	} {
		req := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: r.campaign, Generation: 900, Slots: 8, Trigger: "forged", RequestedAt: time.Now().UTC()}
		forgeries = append(forgeries, forged{r.name, "reflector", messages.SubjectPropose, req, r.reason, 1})
	}

	users := map[string]*bus.Bus{}
	bodies := make([][]byte, len(forgeries))
	want := 0
	for i, f := range forgeries {
		if users[f.user] == nil {
			users[f.user] = in.busAs(t, ctx, f.user)
		}
		data, err := messages.Encode(f.msg)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		bodies[i] = data
		campaign := running
		switch m := f.msg.(type) {
		case *messages.Candidate:
			campaign = m.Campaign
		case *messages.GenerationRequest:
			campaign = m.Campaign
		}
		// Another message id than the real message's, so that the
		// stream's duplicate window does not drop it.
		if err := users[f.user].PublishRaw(ctx, messages.Subject(f.subject, campaign), "forged/"+f.name, data); err != nil {
			t.Fatalf("%s as %s: %v", f.name, f.user, err)
		}
		want += f.letters
	}
	count := func(ls []messages.DeadLetter) (n int) {
		for _, l := range ls {
			for _, b := range bodies {
				if string(l.Data) == string(b) {
					n++
				}
			}
		}
		return n
	}
	letters := forgery.DeadLetters(t, admin.JS, admin.Stream(messages.StreamDeadLetter), 2*time.Minute, func(ls []messages.DeadLetter) bool { return count(ls) >= want })
	for i, f := range forgeries {
		n := 0
		for _, l := range letters {
			if string(l.Data) == string(bodies[i]) {
				n++
				if !strings.Contains(l.Reason, f.reason) {
					t.Errorf("%s (as %s): dead letter from %s/%s says %q, want %q", f.name, f.user, l.Stream, l.Consumer, l.Reason, f.reason)
				}
			}
		}
		if n != f.letters {
			t.Errorf("%s (as %s): %d dead letters, want %d", f.name, f.user, n, f.letters)
		}
	}
	t.Logf("%d forged messages with the services' credentials, %d dead letters of them (%d expected)", len(forgeries), count(letters), want)

	// Neither campaign changed while the forgeries were handled.
	idle()
	if after := forgery.Snapshot(t, st, specRunning); after != beforeRunning {
		t.Errorf("forged traffic changed campaign %s:\n before %s\n after  %s", running, beforeRunning, after)
	}
	if after := judgedIDs(t, ctx, admin, running); !slices.Equal(after, judgedRunning) {
		t.Errorf("forged traffic changed the verdicts and discoveries of %s:\n before %v\n after  %v", running, judgedRunning, after)
	}

	// Resumed, the campaign ends at its budget, and records none of the
	// forgeries.
	if out, err := in.crucible("client", time.Minute, "campaign", "resume", running); err != nil {
		t.Fatalf("crucible campaign resume as client: %v\n%s", err, out)
	}
	end := waitState(t, ctx, st, running, 4*time.Minute, "finished", func(s *store.State) bool {
		return s.Status != messages.StateRunning && s.Status != messages.StatePaused
	})
	if end.Status != messages.StateCompleted || end.Counters.Evaluated != budget {
		t.Errorf("campaign %s: %s with %d evaluated, want completed with its budget %d", running, end.Status, end.Counters.Evaluated, budget)
	}
	forgedIDs := []string{unrecorded.ID, never.ID}
	for _, ev := range []*messages.Evaluation{&flags, &second} {
		i := slices.IndexFunc(forgeries, func(f forged) bool { return f.msg == messages.Message(ev) })
		digest, recorded, err := st.EvaluationDigest(ctx, running, ev.ID)
		if err != nil || !recorded || digest == messages.DigestBytes(bodies[i]) {
			t.Errorf("%s: candidate %s recorded %v, with the forged evaluation %v (%v)", forgeries[i].name, ev.ID, recorded, digest == messages.DigestBytes(bodies[i]), err)
		}
	}
	for i := 0; i < specRunning.Islands; i++ {
		for _, kind := range []string{"success", "failure"} {
			ids, err := st.PoolIDs(ctx, running, i, kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range forgedIDs {
				if slices.Contains(ids, id) {
					t.Errorf("forged candidate %s is in island %d's %s pool", id, i, kind)
				}
			}
		}
	}
	// The candidates under forged ids have no verdict; nor have those of
	// the forged evaluations of real candidates, whose real evaluations
	// are not the judge's to weigh.
	for _, j := range judgedIDs(t, ctx, admin, running) {
		for _, id := range append(forgedIDs, flags.ID, second.ID) {
			if strings.HasSuffix(j, "/"+id) {
				t.Errorf("the judge published %s", j)
			}
		}
	}

	// The completed campaign is as it was.
	if after := forgery.Snapshot(t, st, specDone); after != beforeDone {
		t.Errorf("forged traffic changed campaign %s:\n before %s\n after  %s", done, beforeDone, after)
	}
	if after := judgedIDs(t, ctx, admin, done); !slices.Equal(after, judgedDone) {
		t.Errorf("forged traffic changed the verdicts and discoveries of %s:\n before %v\n after  %v", done, judgedDone, after)
	}
}
