package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Candidate JSON of the scripted answers.
const (
	zns     = `{"formula":"ZnS","lattice":{"a":3.82,"b":3.82,"c":3.82,"alpha":60,"beta":60,"gamma":60},"species":["Zn","S"],"coords":[[0,0,0],[0.25,0.25,0.25]],"rationale":"zinc blende","rule":"1. Same-group elemental substitution"}`
	gan     = `{"formula":"GaN","lattice":{"a":3.19,"b":3.19,"c":5.19,"alpha":90,"beta":90,"gamma":120},"species":["Ga","Ga","N","N"],"coords":[[0.3333,0.6667,0],[0.6667,0.3333,0.5],[0.3333,0.6667,0.375],[0.6667,0.3333,0.875]],"rationale":"wurtzite","rule":"3. Oxidation state substitution"}`
	overlap = `{"formula":"MgO","lattice":{"a":2.98,"b":2.98,"c":2.98,"alpha":60,"beta":60,"gamma":60},"species":["Mg","O"],"coords":[[0,0,0],[0.05,0,0]],"rationale":"compressed rock salt","rule":"none"}`
	xx      = `{"formula":"XxO","lattice":{"a":2.98,"b":2.98,"c":2.98,"alpha":60,"beta":60,"gamma":60},"species":["Xx","O"],"coords":[[0,0,0],[0.5,0.5,0.5]],"rationale":"a new element","rule":"none"}`
	lengths = `{"formula":"MgO","lattice":{"a":2.98,"b":2.98,"c":2.98,"alpha":60,"beta":60,"gamma":60},"species":["Mg","O"],"coords":[[0,0,0]],"rationale":"rock salt","rule":"none"}`
	neutral = `{"formula":"MgF","lattice":{"a":2.98,"b":2.98,"c":2.98,"alpha":60,"beta":60,"gamma":60},"species":["Mg","F"],"coords":[[0,0,0],[0.5,0.5,0.5]],"rationale":"magnesium fluoride","rule":"none"}`
	formula = `{"formula":"MgO2","lattice":{"a":2.98,"b":2.98,"c":2.98,"alpha":60,"beta":60,"gamma":60},"species":["Mg","O"],"coords":[[0,0,0],[0.5,0.5,0.5]],"rationale":"peroxide","rule":"none"}`
)

func candidates(cs ...string) string { return `{"candidates":[` + strings.Join(cs, ",") + `]}` }

// stack starts a proposer (no evaluator) with the llm generator on srv.
func stack(t *testing.T, srv *llmtest.Server, cfg llm.Config) *local.Stack {
	t.Helper()
	return stackLog(t, srv, cfg, nil)
}

// stackLog is stack with the services logging to log.
func stackLog(t *testing.T, srv *llmtest.Server, cfg llm.Config, log *zap.Logger) *local.Stack {
	t.Helper()
	cfg.BaseURL = srv.URL
	c, err := llm.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := local.Start(ctx, local.Options{
		NATSURL: testbed.NATSURL(), RedisURL: testbed.RedisURL(), Namespace: testsrv.Namespace(), MemoryStreams: true,
		NoServices: true, Log: log,
		Proposer: func(s *store.Store) proposer.Config {
			gen, err := llm.NewGenerator(c, s)
			if err != nil {
				t.Error(err)
			}
			return proposer.Config{Generators: map[string]proposer.Generator{messages.GeneratorLLM: gen},
				RuleCount: len(evolve.Rules), MaxAttempts: 3}
		},
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
	st.StartService("proposer")
	return st
}

func submit(t *testing.T, st *local.Stack, id string, edit func(*messages.CampaignSpec)) *messages.CampaignSpec {
	t.Helper()
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: id, Task: tk, Budget: 2, Islands: 1, MaxInFlight: 1, Seed: 1,
		Generator: messages.GeneratorSpec{Kind: messages.GeneratorLLM, Model: "fake", MaxLLMCalls: 100}}
	if edit != nil {
		edit(spec)
	}
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	if err := cl.Submit(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	return spec
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func follow[T any, P interface {
	*T
	messages.Message
}](t *testing.T, st *local.Stack, stream, subject string) []*T {
	t.Helper()
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	var out []*T
	err := cl.Follow(context.Background(), stream, subject, true, func(_ string, data []byte) (bool, error) {
		v := new(T)
		if err := messages.Decode(data, P(v)); err != nil {
			return false, err
		}
		out = append(out, v)
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProposerWithScriptedModel runs one campaign through a proposer whose
// model answers, generation after generation, with each kind of bad answer
// and each kind of endpoint failure, then with two good candidates. A
// generation without a publishable candidate gives its slots back and the
// next generation is asked for at once, so each scripted answer is one
// generation; its rejections land in the island's failure memory and the
// next prompt shows them.
func TestProposerWithScriptedModel(t *testing.T) {
	srv := llmtest.New(t, nil)
	steps := []struct {
		name    string
		replies []llmtest.Reply
		reason  string // reason code the next prompt must show
	}{
		{"overlapping atoms, fenced", []llmtest.Reply{{Content: "```json\n" + candidates(overlap) + "\n```"}}, "overlap"},
		{"hallucinated element, prose around", []llmtest.Reply{{Content: "Here you go: " + candidates(xx) + " Enjoy!"}}, "unknown_element"},
		{"wrong lengths", []llmtest.Reply{{Content: candidates(lengths)}}, "length_mismatch"},
		{"truncated JSON", []llmtest.Reply{{Content: candidates(zns)[:80], Finish: "length"}}, "truncated"},
		{"no JSON", []llmtest.Reply{{Content: "I cannot help with that."}}, "no_json"},
		{"formula disagrees with species", []llmtest.Reply{{Content: candidates(formula)}}, "formula_mismatch"},
		{"429 with Retry-After, then not charge neutral", []llmtest.Reply{
			{Status: 429, Error: "Rate limit reached", Header: llmtest.RetryAfter(1)}, {Content: candidates(neutral)}}, "charge_neutrality"},
		{"500s beyond the retries (redelivered), then a duplicate pair", []llmtest.Reply{
			{Status: 500, Error: "boom"}, {Status: 502, Body: "bad gateway"}, {Content: candidates(overlap, overlap)}}, "overlap"},
		{"a timeout, then overlapping atoms", []llmtest.Reply{{Hang: true}, {Content: candidates(overlap)}}, "overlap"},
		{"context length, then wrong lengths", []llmtest.Reply{
			{Status: 400, Error: "This model's maximum context length is 2048 tokens", ErrorCode: "context_length_exceeded"},
			{Content: candidates(lengths)}}, "length_mismatch"},
		{"well formed", []llmtest.Reply{{Content: candidates(zns, gan), PromptTokens: 800, CompletionTokens: 200}}, ""},
	}
	for _, s := range steps {
		srv.Script(s.replies...)
	}
	st := stack(t, srv, llm.Config{MaxRetries: 1, Timeout: time.Second})
	spec := submit(t, st, "scripted", nil)

	waitFor(t, "the good answer's candidates", func() bool {
		s, err := st.Store.State(context.Background(), spec.ID)
		return err == nil && s.Counters.Proposed == 2
	})
	reqs := srv.Requests()
	// Answered requests, in order (failed ones are followed by their retry).
	var answered []llmtest.Request
	for i, r := range reqs {
		if i+1 < len(reqs) && reqs[i+1].User == r.User {
			continue // retried after a 429, a 500 or a timeout
		}
		answered = append(answered, r)
	}
	if len(answered) != len(steps)+1 { // the context-length prompt and its shorter retry differ
		t.Fatalf("%d distinct prompts for %d steps", len(answered), len(steps))
	}
	// Each step's rejection shows in the next prompt (the shortened retry
	// after the context-length error is step 9's next prompt too).
	next := 1
	for i, s := range steps[:len(steps)-1] {
		if i == len(steps)-2 {
			next++ // skip the prompt refused as too long
		}
		if !strings.Contains(answered[next].User, ": "+s.reason+": ") {
			t.Errorf("after %q the prompt does not show %q:\n%s", s.name, s.reason, answered[next].User)
		}
		next++
	}
	if strings.Contains(answered[0].User, "## Rejected") {
		t.Error("the first prompt shows rejections")
	}

	// The island's failure memory holds every reason.
	view, err := st.Store.Island(context.Background(), spec.ID, 0, store.MaxRejectsKept)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, r := range view.Rejects {
		for _, reason := range r.Reasons {
			codes[reason.Code]++
		}
	}
	for _, want := range []string{"overlap", "unknown_element", "length_mismatch", "truncated", "no_json", "formula_mismatch", "charge_neutrality", "duplicate"} {
		if codes[want] == 0 {
			t.Errorf("the island's rejects lack %q: %v", want, codes)
		}
	}

	// Only the good candidates reached the evaluators' queue (a work queue:
	// read it message by message). They are published after they are
	// recorded.
	ctx := context.Background()
	stream, err := st.Bus.JS.Stream(ctx, st.Bus.Stream(messages.StreamCandidates))
	if err != nil {
		t.Fatal(err)
	}
	var info *jetstream.StreamInfo
	waitFor(t, "the good answer's candidates published", func() bool {
		info, err = stream.Info(ctx)
		return err == nil && info.State.Msgs >= 2
	})
	var cands []*messages.Candidate
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var c messages.Candidate
		if err := messages.Decode(m.Data, &c); err != nil {
			t.Fatal(err)
		}
		cands = append(cands, &c)
	}
	var formulas []string
	for _, c := range cands {
		formulas = append(formulas, c.Formula)
		if c.Generator != messages.GeneratorLLM || c.Operator != llm.OperatorLLM || c.Rationale == "" {
			t.Errorf("candidate %+v", c)
		}
	}
	if strings.Join(formulas, ",") != "ZnS,GaN" {
		t.Fatalf("published %v, want ZnS, GaN", formulas)
	}

	// The audit trail has every exchange; the 500s were retried by
	// redelivery (attempt 2).
	prompts := follow[messages.Prompt](t, st, messages.StreamCampaigns, messages.Subject(messages.SubjectPrompts, spec.ID))
	outcomes := map[string]int{}
	redelivered := false
	for _, p := range prompts {
		outcomes[p.Outcome]++
		redelivered = redelivered || p.Attempt == 2
	}
	if outcomes[messages.PromptAnswered] != len(steps) || outcomes[messages.PromptContextLength] != 1 || outcomes[messages.PromptFailed] != 1 || !redelivered {
		t.Fatalf("audit outcomes %v (redelivered %v)", outcomes, redelivered)
	}
	s, err := st.Store.State(context.Background(), spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.Counters.LLMCalls != len(steps) || s.Counters.LLMRequests != len(reqs) || s.Counters.CompletionTokens == 0 || s.Counters.EmptyGenerations != len(steps)-1 {
		t.Fatalf("counters %+v after %d requests", s.Counters, len(reqs))
	}
}

// TestProposerCallBudget: a model that never answers usefully ends the
// campaign as exhausted when its LLM call budget is spent, with the reason.
func TestProposerCallBudget(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Content: "No."} })
	st := stack(t, srv, llm.Config{})
	spec := submit(t, st, "budget", func(s *messages.CampaignSpec) { s.Generator.MaxLLMCalls = 5 })
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	final, err := cl.WaitDone(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateExhausted || !strings.Contains(final.Message, "5 LLM calls") {
		t.Fatalf("final status %s: %s", final.State, final.Message)
	}
	if n := len(srv.Requests()); n != 5 {
		t.Fatalf("%d requests for a budget of 5", n)
	}
	if final.Summary == nil || final.Summary.LLMRequests != 5 || final.Summary.LLMCalls != 5 || final.Summary.Evaluated != 0 {
		t.Fatalf("summary %+v", final.Summary)
	}
}

// TestProposerEndpointFailures: an endpoint that refuses the key ends the
// campaign at once; one that answers with server errors ends it when the
// retries of its generations have spent the call budget, saying what the
// last request met; one that is down ends it when a generation's every
// attempt failed to connect, saying so, and costs no call. None stalls.
func TestProposerEndpointFailures(t *testing.T) {
	cases := []struct {
		name    string
		answer  func(llmtest.Request) llmtest.Reply
		down    bool
		message string
	}{
		{name: "wrong key", answer: func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Status: 401, Error: "Incorrect API key provided"}
		}, message: "refuses"},
		{name: "server errors", answer: func(llmtest.Request) llmtest.Reply {
			return llmtest.Reply{Status: 503, Error: "overloaded"}
		}, message: "LLM calls (max_llm_calls) are spent; the last request failed: server error (HTTP 503) at http://"},
		{name: "connection refused", down: true, message: "LLM endpoint unreachable: connection refused at http://127.0.0.1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, c.answer)
			core, logs := observer.New(zap.WarnLevel)
			st := stackLog(t, srv, llm.Config{MaxRetries: 1}, zap.New(core))
			if c.down {
				srv.Close()
			}
			spec := submit(t, st, "failing", func(s *messages.CampaignSpec) { s.Generator.MaxLLMCalls = 8 })
			cl := &client.Client{Bus: st.Bus, Store: st.Store}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			final, err := cl.WaitDone(ctx, spec.ID)
			if err != nil {
				t.Fatal(err)
			}
			if final.State != messages.StateExhausted || !strings.Contains(final.Message, c.message) {
				t.Fatalf("final status %s: %s", final.State, final.Message)
			}
			t.Logf("%s: %s", final.State, final.Message)
			if c.down && (final.Summary == nil || final.Summary.LLMRequests != 0) {
				t.Fatalf("requests that never reached the endpoint were counted: %+v", final.Summary)
			}
			// The audit says what failed, and where.
			prompts := follow[messages.Prompt](t, st, messages.StreamCampaigns, messages.Subject(messages.SubjectPrompts, spec.ID))
			failed := 0
			for _, p := range prompts {
				if p.Outcome == messages.PromptFailed {
					failed++
					if p.ErrorKind == "" || p.Endpoint != srv.URL || !strings.Contains(p.Error, srv.URL) {
						t.Errorf("audit record %d/%d: kind %q, endpoint %q, error %q", p.Generation, p.Attempt, p.ErrorKind, p.Endpoint, p.Error)
					}
				}
			}
			if failed == 0 {
				t.Error("no failed exchange in the audit")
			}
			// The proposer's warnings name the endpoint and the kind.
			warned := false
			for _, e := range logs.FilterLevelExact(zap.WarnLevel).All() {
				f := e.ContextMap()
				if f["llm_endpoint"] == srv.URL && f["error_kind"] != "" && f["campaign"] == spec.ID {
					warned = true
				}
			}
			if !warned {
				t.Errorf("no warning with the endpoint and kind: %v", logs.All())
			}
		})
	}
}

// TestProposerRejectsCampaignWithoutModel: a campaign naming no model on a
// proposer without a default is rejected at submission.
func TestProposerRejectsCampaignWithoutModel(t *testing.T) {
	srv := llmtest.New(t, nil)
	st := stack(t, srv, llm.Config{})
	spec := submit(t, st, "nomodel", func(s *messages.CampaignSpec) { s.Generator.Model = "" })
	cl := &client.Client{Bus: st.Bus, Store: st.Store}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	final, err := cl.WaitDone(ctx, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.State != messages.StateRejected || !strings.Contains(final.Message, "model") {
		t.Fatalf("final status %s: %s", final.State, final.Message)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}
