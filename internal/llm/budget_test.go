package llm_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TestProposerTokenBudget: a campaign whose model spends 150 tokens an
// answer ends as exhausted once its 400 tokens (max_llm_tokens) are spent,
// with the reason, long before its call budget.
func TestProposerTokenBudget(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: "No.", PromptTokens: 100, CompletionTokens: 50}
	})
	st := stack(t, srv, llm.Config{})
	spec := submit(t, st, "tokens", func(s *messages.CampaignSpec) { s.Generator.MaxLLMTokens = 400 })
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	final, err := cl.WaitDone(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateExhausted || !strings.Contains(final.Message, "the campaign's 400 LLM tokens (max_llm_tokens) are spent: 450 used") {
		t.Fatalf("final status %s: %s", final.State, final.Message)
	}
	// One generation in flight at a time: the third answer reaches the
	// budget, the fourth request is never sent.
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests for a budget of 400 tokens at 150 an answer", n)
	}
	if s := final.Summary; s == nil || s.PromptTokens+s.CompletionTokens != 450 || s.LLMRequests != 3 {
		t.Fatalf("summary %+v", final.Summary)
	}
}

// TestReflectorSharesTheBudgets: the LLM reflector's exchanges count
// against the campaign's one token and call budget with its proposals:
// tokens the proposals spent leave the reflector none, and the reflect
// exchange's own tokens can leave the memory exchange none; a refused
// exchange is recorded as budget_spent and the rules stand in.
func TestReflectorSharesTheBudgets(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Content: `{"bullets":["one","two","three"],"directives":[]}`, PromptTokens: 80, CompletionTokens: 40}
	})
	st := stack(t, srv, llm.Config{})
	c, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake"})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	rules := &reflection.Output{Bullets: []string{"rule a", "rule b", "rule c"}}
	ctx := context.Background()
	cases := []struct {
		name           string
		maxTokens      int
		spent          int // tokens the campaign's proposals spent before
		maxCalls       int
		reflect, memor string
		requests       int
		says           string
	}{
		{"reflect answered, memory refused", 100, 0, 0, messages.PromptAnswered, messages.PromptBudgetSpent, 1,
			"memory: LLM budget spent: the campaign's 100 LLM tokens (max_llm_tokens) are spent: 120 used"},
		{"proposals spent the tokens", 150, 150, 0, messages.PromptBudgetSpent, messages.PromptBudgetSpent, 0,
			"reflect: LLM budget spent: the campaign's 150 LLM tokens (max_llm_tokens) are spent: 150 used"},
		{"proposals spent the calls", 150, 0, 1, messages.PromptBudgetSpent, messages.PromptBudgetSpent, 0,
			"reflect: LLM budget spent: the campaign's 1 LLM calls (max_llm_calls) are spent"},
	}
	for i, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			id := "refl-budget-" + string(rune('a'+i))
			spec := &messages.CampaignSpec{ID: id, Task: tk, Budget: 4, Episodes: 2,
				Generator: messages.GeneratorSpec{Kind: messages.GeneratorEvolve, MaxLLMTokens: cs.maxTokens, MaxLLMCalls: cs.maxCalls},
				Reflector: messages.ReflectorSpec{Mode: messages.ReflectorLLM}}
			if cs.spent > 0 {
				if err := st.Store.AddLLMUsage(ctx, id, 1, cs.spent, 0); err != nil {
					t.Fatal(err)
				}
			}
			if cs.maxCalls > 0 {
				// The proposals made the one call allowed.
				if r, err := st.Store.ReserveLLMCall(ctx, id, cs.maxCalls, 0); err != nil || !r.OK() {
					t.Fatalf("%+v %v", r, err)
				}
			}
			before := len(srv.Requests())
			out, err := llm.NewReflector(c, st.Store, nil).Reflect(ctx, spec, &reflection.Input{Campaign: id, Task: tk}, rules)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Prompts) != 2 || out.Prompts[0].Outcome != cs.reflect || out.Prompts[1].Outcome != cs.memor {
				t.Fatalf("%d exchanges: %s, %s (want %s, %s)", len(out.Prompts), out.Prompts[0].Outcome, out.Prompts[len(out.Prompts)-1].Outcome, cs.reflect, cs.memor)
			}
			for _, p := range out.Prompts {
				if p.Outcome == messages.PromptBudgetSpent && p.ErrorKind != llm.KindBudget {
					t.Errorf("%s: error kind %q", p.Kind, p.ErrorKind)
				}
			}
			if n := len(srv.Requests()) - before; n != cs.requests {
				t.Errorf("%d requests, want %d", n, cs.requests)
			}
			if !strings.Contains(out.Fallback, cs.says) {
				t.Errorf("fallback %q, want it to say %q", out.Fallback, cs.says)
			}
		})
	}
}

// TestSummaryLog: the reflect exchange's summary carries the episode's
// chronological log, its most recent 60 evaluations, one line each, and
// each composition's stability rate.
func TestSummaryLog(t *testing.T) {
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	in := &reflection.Input{Task: tk, Episode: 1,
		Compositions: []discovery.CompositionStat{{Formula: "ZnS", Queries: 3, Stable: 2, Hits: 1}}}
	e := 0.0346
	for i := 1; i <= 70; i++ {
		q := reflection.Query{Index: 100 + i, Formula: "ZnS", Valid: i%7 != 0, EAboveHull: &e, Stable: i%2 == 0, Hit: i%3 == 0, Novel: true}
		in.Log = append(in.Log, q)
	}
	s := llm.NewSummary(&messages.CampaignSpec{Episodes: 2}, in)
	if len(s.Log) != 60 || s.LogOmitted != 10 {
		t.Fatalf("%d log lines, %d omitted", len(s.Log), s.LogOmitted)
	}
	if s.Log[0] != "#111 ZnS E_hull 0.035 novel" || s.Log[1] != "#112 ZnS E_hull 0.035 stable hit novel" || s.Log[9] != "#120 ZnS E_hull 0.035 stable novel" || s.Log[59] != "#170 ZnS invalid" {
		t.Errorf("log lines %q … %q", s.Log[:3], s.Log[59])
	}
	if s.Log[7] != "#118 ZnS E_hull 0.035 stable hit novel" || s.Log[8] != "#119 ZnS E_hull 0.035 novel" {
		t.Errorf("log lines %q", s.Log[7:9])
	}
	for _, l := range s.Log {
		if strings.HasPrefix(l, "#163 ") && l != "#163 ZnS invalid" {
			t.Errorf("an invalid evaluation reads %q", l)
		}
	}
	if c := s.Compositions[0]; c.StableRate != 0.667 {
		t.Errorf("stable rate %v, want 0.667", c.StableRate)
	}
}

// TestExtendRaisesLLMCalls: a campaign that stopped on its LLM call budget
// and is extended gets its max_llm_calls raised in proportion, and runs
// on to the new limit instead of stopping at once on the old one.
func TestExtendRaisesLLMCalls(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "No."} })
	st := stack(t, srv, llm.Config{})
	st.StartService("reflector") // applies the extension
	spec := submit(t, st, "extend-calls", func(s *messages.CampaignSpec) { s.Generator.MaxLLMCalls = 3 })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exhausted := func(calls int) func() bool {
		return func() bool {
			s, err := st.Store.State(ctx, spec.ID)
			return err == nil && s.Status == messages.StateExhausted && s.Inflight == 0 &&
				strings.Contains(s.ExhaustedReason(), fmt.Sprintf("the campaign's %d LLM calls (max_llm_calls) are spent", calls))
		}
	}
	waitFor(t, "the 3 calls spent", exhausted(3))
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests for max_llm_calls 3", n)
	}
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	x := &client.Extension{Budget: 4}
	if _, err := cl.Extend(ctx, spec.ID, x); err != nil {
		t.Fatal(err)
	}
	if x.OldMaxLLMCalls != 3 || x.MaxLLMCalls != 6 || x.MaxLLMTokens != 0 {
		t.Fatalf("extension from budget 2 to 4 set %+v, want max_llm_calls 3 → 6, tokens unbounded", x)
	}
	waitFor(t, "the 6 calls spent", exhausted(6))
	if n := len(srv.Requests()); n != 6 {
		t.Fatalf("%d requests after the extension to max_llm_calls 6", n)
	}
	// Limits given explicitly are kept as given.
	x = &client.Extension{Budget: 5, MaxLLMCalls: 7, MaxLLMTokens: 1 << 20}
	if _, err := cl.Extend(ctx, spec.ID, x); err != nil {
		t.Fatal(err)
	}
	if s, err := st.Store.State(ctx, spec.ID); err != nil || s.MaxLLMCalls != 7 || s.MaxLLMTokens != 1<<20 || x.OldMaxLLMCalls != 6 {
		t.Fatalf("explicit limits: state %+v, %v; extension %+v", s, err, x)
	}
	waitFor(t, "the 7 calls spent", exhausted(7))
	if n := len(srv.Requests()); n != 7 {
		t.Fatalf("%d requests after the extension to max_llm_calls 7", n)
	}
}
