package llm_test

import (
	"context"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/judge"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TestCampaignWithLLMDebate runs a whole campaign (evolve generator) whose
// judge debates with LLM agents against the fake endpoint: every verdict
// of a hit that passed the screen-level checks carries an llm debate of
// four roles whose first round holds the models' tool calls, the
// exchanges reach the prompt audit, and the calls count in the summary.
func TestCampaignWithLLMDebate(t *testing.T) {
	data := testbed.DataDir(t)
	_, oracle, err := wire.Oracle(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := wire.Reference(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Debater())
	client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake-debater"})
	if err != nil {
		t.Fatal(err)
	}
	dc, err := judge.DebateData(db)
	if err != nil {
		t.Fatal(err)
	}
	dc.Agents = func(s *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
		return llm.DebateAgents(client, s, spec)
	}
	ctx := context.Background()
	st, err := local.Start(ctx, local.Options{
		NATSURL: testbed.NATSURL(), RedisURL: testbed.RedisURL(), Namespace: testsrv.Namespace(), MemoryStreams: true,
		Oracle: oracle, Judge: judge.Config{Debate: dc},
		Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Purge(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		st.Close()
	})
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "llm-debate", Task: tk, Budget: 40, Seed: 3, Judge: messages.JudgeSpec{Debate: messages.DebateLLM}}
	res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := append(append([]*messages.Verdict{}, res.Discoveries...), res.Verdicts...)
	debated := 0
	for _, v := range verdicts {
		if v.JudgedBy != messages.JudgedByDebate {
			continue
		}
		debated++
		d := v.Debate
		if d.Mode != debate.ModeLLM || len(d.Roles) != 4 || d.Judge != "llm:fake-debater" || d.Calls == 0 {
			t.Errorf("%s: mode %s, %d roles, judge %s, %d calls", v.ID, d.Mode, len(d.Roles), d.Judge, d.Calls)
		}
		for _, p := range d.Rounds[0].Positions {
			if p.Agent != "llm:fake-debater" || len(p.ToolCalls) == 0 {
				t.Errorf("%s: %s argued by %q with %d tool calls (%s)", v.ID, p.Role, p.Agent, len(p.ToolCalls), p.Fallback)
			}
		}
	}
	if debated == 0 {
		t.Fatalf("no debated verdict among %d", len(verdicts))
	}
	audited := 0
	for _, p := range res.Prompts {
		if p.Kind == messages.PromptDebate {
			audited++
		}
	}
	// The summary is written when the last evaluation is recorded, before
	// the judge is done; the store's counter has every request.
	state, err := st.Store.State(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if audited < 10*debated || state.Counters.LLMRequests < audited {
		t.Errorf("%d debate exchanges audited for %d debates, %d LLM requests counted", audited, debated, state.Counters.LLMRequests)
	}
	t.Logf("%d verdicts, %d debated, %d exchanges", len(verdicts), debated, audited)
}
