package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Verify accepts an undisturbed campaign and reports each kind of damage
// done to it afterwards.
func TestVerify(t *testing.T) {
	data := testbed.DataDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, oracle, err := wire.Oracle(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := wire.Reference(data)
	if err != nil {
		t.Fatal(err)
	}
	ns := testsrv.Namespace()
	st, err := local.Start(ctx, local.Options{Namespace: ns, Oracle: oracle, Evaluators: 2,
		Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "verify", Task: tk, Budget: 24, Episodes: 2, Seed: 7}
	res, err := local.Run(ctx, st, spec, local.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range st.Services() {
		if err := st.StopService(name); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Verify(ctx, st.Bus, st.Store, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Evaluated != spec.Budget || rep.Proposed != spec.Budget {
		t.Fatalf("an undisturbed campaign: %s", rep)
	}

	// Damage, one kind after the other; each must be reported.
	rdb := st.Store.Client()
	key := func(parts ...string) string {
		return "crucible:" + ns + ":{" + spec.ID + "}:" + strings.Join(parts, ":")
	}
	var infeasible *messages.Evaluation
	for _, ev := range res.Evaluations {
		if !ev.Feasible && infeasible == nil {
			infeasible = ev
		}
	}
	if infeasible == nil {
		t.Fatal("no infeasible evaluation to work with")
	}
	for _, c := range []struct {
		name   string
		damage func() error
		want   string
	}{
		{"a counter counted twice", func() error { return rdb.HIncrBy(ctx, key("state"), "hits", 1).Err() }, "counter hits"},
		{"a pool member never evaluated", func() error {
			return rdb.ZAdd(ctx, key("island", "0", "failure"), redis.Z{Score: -1, Member: "ghost"}).Err()
		}, "never evaluated"},
		{"an evaluation recorded twice in an island", func() error {
			return rdb.HIncrBy(ctx, key("islands"), "0:n", 1).Err()
		}, "island 0 counts"},
		{"a discovery of an infeasible candidate", func() error {
			v := &messages.Verdict{Schema: messages.SchemaVersion, ID: infeasible.ID, Campaign: spec.ID, Formula: infeasible.Candidate.Formula,
				Accepted: true, Checks: []messages.Check{{Name: "forged", Passed: true}}, Evaluation: *infeasible, JudgedAt: time.Now().UTC()}
			return st.Bus.Publish(ctx, v.Subject(), v)
		}, "not feasible and stable"},
		{"a structure evaluated twice", func() error {
			ev := *infeasible
			ev.Candidate.Generation, ev.Candidate.Index = 998, 0
			ev.ID = messages.CandidateID(spec.ID, 998, 0)
			ev.Candidate.ID = ev.ID
			return st.Bus.Publish(ctx, messages.Subject(messages.SubjectEvaluations, spec.ID), &ev)
		}, "of the same structure"},
		{"a candidate left undelivered", func() error {
			c := infeasible.Candidate
			c.Generation, c.Index = 999, 0
			c.ID = messages.CandidateID(spec.ID, c.Generation, c.Index)
			return st.Bus.Publish(ctx, messages.Subject(messages.SubjectCandidates, spec.ID), &c)
		}, "never done"},
	} {
		if err := c.damage(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rep, err := Verify(ctx, st.Bus, st.Store, spec)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, v := range rep.Violations {
			found = found || strings.Contains(v, c.want)
		}
		if !found {
			t.Errorf("%s: not reported (want %q):\n%s", c.name, c.want, rep)
		}
	}
}
