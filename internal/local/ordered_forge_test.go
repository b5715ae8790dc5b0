package local_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// gateOracle holds the first oracle call made while hold says so, until
// release is closed; other calls go straight to the oracle.
type gateOracle struct {
	evaluator.Oracle
	hold    func() bool
	held    chan struct{} // closed when a call is held
	release chan struct{}
	once    sync.Once
}

func (g *gateOracle) Evaluate(ctx context.Context, items []evaluator.Item) ([]evaluator.Outcome, error) {
	if g.hold() {
		g.once.Do(func() { close(g.held) })
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Oracle.Evaluate(ctx, items)
}

// TestOrderedForgedEvaluationDoesNotStall forges, in an ordered campaign,
// the first evaluation of a candidate the proposer recorded, before its
// evaluator answers: flags claiming a stable feasible candidate (for the
// judge) that its values contradict. Both the reflector and the judge
// must refuse it (dead letters with the reason), nothing may be counted
// for the judge, and the next generation must not wait for a verdict that
// never comes; the real evaluation is then recorded.
func TestOrderedForgedEvaluationDoesNotStall(t *testing.T) {
	o, _ := deps(t)
	spec := &messages.CampaignSpec{ID: "ordforged", Task: easyTask(), Budget: 24, Seed: 5, Ordered: true}
	spec.ApplyDefaults()
	var stp atomic.Pointer[store.Store]
	gate := &gateOracle{Oracle: o, held: make(chan struct{}), release: make(chan struct{})}
	// Seeds pass; the first call once generation 0 is proposed is held.
	gate.hold = func() bool {
		select {
		case <-gate.release:
			return false
		default:
		}
		s := stp.Load()
		if s == nil {
			return false
		}
		done, cands, err := s.GenerationStatus(context.Background(), spec.ID, 0)
		return err == nil && (done || len(cands) > 0)
	}
	core, logs := observer.New(zap.WarnLevel)
	st := start(t, local.Options{Oracle: gate, Log: zap.New(core)})
	stp.Store(st.Store)
	ctx := context.Background()

	type outcome struct {
		res *local.Result
		err error
	}
	finished := make(chan outcome, 1)
	go func() {
		res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 4 * time.Minute})
		finished <- outcome{res, err}
	}()
	released := false
	defer func() {
		if !released {
			close(gate.release)
		}
	}()
	select {
	case <-gate.held:
	case r := <-finished:
		t.Fatalf("the campaign ended before generation 0 was evaluated: %v", r.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("generation 0 was not evaluated within 2 minutes")
	}
	_, cands, err := st.Store.GenerationStatus(ctx, spec.ID, 0)
	if err != nil || len(cands) == 0 {
		t.Fatalf("generation 0: %d candidates, %v", len(cands), err)
	}
	c := cands[0] // the first of the generation an ordered campaign records
	zero := 0.0
	forged := &messages.Evaluation{Schema: messages.SchemaVersion, ID: c.ID, Campaign: spec.ID, Candidate: *c,
		Valid: true, Feasible: true, Stable: true, Novel: true, Score: 1, EAboveHull: &zero, EvaluatedAt: time.Now().UTC()}
	if !forged.ForJudge() {
		t.Fatal("the forged evaluation is not one for the judge")
	}
	if re := evaluator.Rederive(spec, forged); re.Feasible {
		t.Fatal("the forged evaluation's values make it feasible: its flags agree with them")
	}
	data, err := messages.Encode(forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Bus.PublishRaw(ctx, messages.Subject(messages.SubjectEvaluations, spec.ID), "forged/"+c.ID, data); err != nil {
		t.Fatal(err)
	}
	mine := func(ls []messages.DeadLetter) (n int) {
		for _, l := range ls {
			if string(l.Data) == string(data) {
				n++
				if !strings.Contains(l.Reason, "its values give") {
					t.Errorf("dead letter of the forged evaluation: reason %q, want the values' flags", l.Reason)
				}
			}
		}
		return n
	}
	letters := deadLetters(t, st, time.Minute, func(ls []messages.DeadLetter) bool { return mine(ls) >= 2 })
	for _, c := range []string{"reflector", "judge"} {
		if err := waitConsumerIdle(ctx, st, c); err != nil {
			t.Fatal(err)
		}
	}
	if n := mine(letters); n != 2 {
		t.Errorf("%d dead letters of the forged evaluation, want 2 (the reflector's and the judge's)", n)
	}
	if _, recorded, err := st.Store.EvaluationDigest(ctx, spec.ID, c.ID); err != nil || recorded {
		t.Errorf("the forged evaluation was recorded (%v, %v)", recorded, err)
	}
	if n, err := st.Store.JudgePending(ctx, spec.ID); err != nil || n != 0 {
		t.Errorf("the judge has %d evaluations pending (%v) after the forgery, want 0: the next generation would wait for it", n, err)
	}

	close(gate.release)
	released = true
	r := <-finished
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Summary.Evaluated != spec.Budget {
		t.Errorf("%d evaluated, budget %d", r.res.Summary.Evaluated, spec.Budget)
	}
	digest, recorded, err := st.Store.EvaluationDigest(ctx, spec.ID, c.ID)
	if err != nil || !recorded || digest == messages.DigestBytes(data) {
		t.Errorf("candidate %s: recorded %v, the forged evaluation %v (%v)", c.ID, recorded, digest == messages.DigestBytes(data), err)
	}
	for _, e := range logs.FilterMessageSnippet("judge has not weighed").All() {
		t.Errorf("a generation waited for the judge: %s %v", e.Message, e.ContextMap())
	}
}
