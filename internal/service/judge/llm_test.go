package judge

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// runJudge runs a judge replica with the LLM client until the test ends.
func runJudge(t *testing.T, h *harness, client *llm.Client) {
	t.Helper()
	s := New(h.connect("judge"), h.store, zap.NewNop(), Config{Debate: DebateConfig{Agents: func(st *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
		return llm.DebateAgents(client, st, spec)
	}}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// prompts reads the campaign's prompt audit.
func (h *harness) prompts(campaign string) []messages.Prompt {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := h.admin.JS.OrderedConsumer(ctx, h.admin.Stream(messages.StreamCampaigns), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{h.admin.Subject(messages.Subject(messages.SubjectPrompts, campaign))}})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []messages.Prompt
	for {
		msg, err := cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return out
		}
		var p messages.Prompt
		if err := json.Unmarshal(msg.Data(), &p); err != nil {
			h.t.Fatal(err)
		}
		out = append(out, p)
	}
}

// TestLLMDebateEndToEnd runs debates through the judge service against a
// fake OpenAI-compatible server that answers role prompts with function
// calls and then positions, and the judge's prompt with a ruling: a new
// compound is a discovery, an ordered mixture a rejection; the roles'
// tool calls, tokens and exchanges are recorded.
func TestLLMDebateEndToEnd(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	srv := llmtest.New(t, llmtest.Debater())
	client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake-debater", MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec, ev := debateFixture(t, messages.DebateLLM)
	if _, err := h.store.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	runJudge(t, h, client)
	mixture := *ev
	mixture.Candidate.Index++
	mixture.ID, mixture.Candidate.ID = "sse-1-g3-c2", "sse-1-g3-c2"
	mixture.Novel = false
	mixture.Novelty = &messages.Novelty{Class: messages.NoveltyOrderedMixture, EndMembers: map[string]float64{"Li4P2O7": 0.72, "LiPO3": 0.28}}
	recordEvaluations(t, h.store, ev, &mixture)
	for _, e := range []*messages.Evaluation{ev, &mixture} {
		if err := h.admin.Publish(ctx, messages.Subject(messages.SubjectEvaluations, e.Campaign), e); err != nil {
			t.Fatal(err)
		}
	}
	var vs []messages.Verdict
	deadline := time.Now().Add(60 * time.Second)
	for len(vs) < 2 && time.Now().Before(deadline) {
		vs = h.verdicts(time.Second)
	}
	if len(vs) != 2 {
		t.Fatalf("%d verdicts, want 2", len(vs))
	}
	for _, v := range vs {
		d := v.Debate
		if d == nil || d.Mode != debate.ModeLLM || d.Judge != "llm:fake-debater" || d.JudgeFallback != "" {
			t.Fatalf("%s: not an llm debate: %+v", v.ID, d)
		}
		want := messages.DebateDiscovery
		if v.ID == mixture.ID {
			want = messages.DebateReject
		}
		if d.Verdict != want {
			t.Errorf("%s: verdict %s, want %s", v.ID, d.Verdict, want)
		}
		if d.Calls < 5 || d.PromptTokens == 0 || d.CompletionTokens == 0 {
			t.Errorf("%s: %d calls, %d+%d tokens", v.ID, d.Calls, d.PromptTokens, d.CompletionTokens)
		}
		for _, p := range d.Rounds[0].Positions {
			// Without reference hulls the synthesis role's hull tools
			// answer that the data is missing; its hazard tool answers.
			answered := slices.ContainsFunc(p.ToolCalls, func(tc messages.ToolCall) bool { return tc.Error == "" && len(tc.Result) > 0 })
			if p.Agent != "llm:fake-debater" || p.Fallback != "" || !answered {
				t.Errorf("%s: round 1 %s: agent %q fallback %q tool calls %+v", v.ID, p.Role, p.Agent, p.Fallback, p.ToolCalls)
			}
		}
	}
	var debates, calls, tokens int
	for _, v := range vs {
		calls += v.Debate.Calls
		tokens += v.Debate.PromptTokens + v.Debate.CompletionTokens
	}
	for _, p := range h.prompts(ev.Campaign) {
		if p.Kind == messages.PromptDebate && p.Candidate != "" && p.Role != "" {
			debates++
		}
	}
	if debates < 10 {
		t.Errorf("%d debate exchanges in the prompt audit", debates)
	}
	st, err := h.store.State(ctx, ev.Campaign)
	if err != nil {
		t.Fatal(err)
	}
	// The debates' exchanges are the campaign's (max_llm_calls,
	// max_llm_tokens): every answered call and its tokens.
	c := st.Counters
	if c.LLMRequests < calls || c.LLMCalls != calls || c.PromptTokens+c.CompletionTokens != tokens {
		t.Errorf("campaign counts %d requests, %d calls, %d tokens; the debates made %d calls with %d tokens",
			c.LLMRequests, c.LLMCalls, c.PromptTokens+c.CompletionTokens, calls, tokens)
	}
}

// TestLLMDebateFallsBack: with the endpoint failing every request, the
// debate runs on the offline roles and judge and says why.
func TestLLMDebateFallsBack(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 400, Error: "model overloaded"}
	})
	client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "broken", MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	spec, ev := debateFixture(t, messages.DebateLLM)
	if _, err := h.store.CreateCampaign(ctx, spec, 0); err != nil {
		t.Fatal(err)
	}
	s := New(nil, h.store, zap.NewNop(), Config{Debate: DebateConfig{Agents: func(st *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
		return llm.DebateAgents(client, st, spec)
	}}})
	tr, err := s.runDebate(ctx, spec, ev)
	if err != nil {
		t.Fatal(err)
	}
	d := tr.Debate
	if d.Verdict != messages.DebateDiscovery || d.Judge != "rules" || !strings.Contains(d.JudgeFallback, "overloaded") {
		t.Fatalf("verdict %s by %s, judge fallback %q", d.Verdict, d.Judge, d.JudgeFallback)
	}
	for _, p := range d.Rounds[0].Positions {
		if p.Agent != "rules" || !strings.Contains(p.Fallback, "overloaded") || len(p.ToolCalls) == 0 {
			t.Errorf("%s: agent %q fallback %q", p.Role, p.Agent, p.Fallback)
		}
	}
}
