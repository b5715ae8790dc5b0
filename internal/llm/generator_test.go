package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func testGenerator(t *testing.T, srv *llmtest.Server, cfg Config) *Generator {
	t.Helper()
	cfg.BaseURL = srv.URL
	c, _ := testClient(t, cfg)
	g, err := NewGenerator(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func reasonCodes(rs []proposer.Rejected) []string {
	var out []string
	for _, r := range rs {
		for _, reason := range r.Reasons {
			out = append(out, reason.Code)
		}
	}
	return out
}

func TestProposeAnswers(t *testing.T) {
	cases := []struct {
		file       string
		slots      int
		formulas   []string
		rejected   []string // reason codes
		rejFormula string   // formula of the first rejected, if any
	}{
		{file: "well_formed.json", formulas: []string{"ZnS", "GaN"}},
		{file: "fenced.md", formulas: []string{"ZnS", "GaN"}},
		{file: "prose.txt", formulas: []string{"ZnS", "GaN"}},
		{file: "think.txt", formulas: []string{"ZnS", "GaN"}},
		// Candidates beyond the slots are handed on (up to twice as many):
		// the proposer publishes the first that pass its checks.
		{file: "well_formed.json", slots: 1, formulas: []string{"ZnS", "GaN"}},
		{file: "truncated.txt", formulas: []string{"ZnS"}, rejected: []string{"truncated"}},
		{file: "malformed_second.txt", formulas: []string{"ZnS"}, rejected: []string{"missing_field"}, rejFormula: "GaN"},
		{file: "malformed_brackets.txt", formulas: []string{"ZnS"}, rejected: []string{"bad_json"}},
		{file: "wrong_lengths.json", formulas: []string{"ZnS"}, rejected: []string{"length_mismatch"}, rejFormula: "MgO"},
		{file: "unknown_element.json", formulas: []string{"ZnS"}, rejected: []string{"unknown_element"}, rejFormula: "XxO"},
		{file: "formula_mismatch.json", formulas: []string{"ZnS"}, rejected: []string{"formula_mismatch"}, rejFormula: "MgO2"},
		// Overlapping atoms parse: the proposer's validity checks reject
		// them (see the proposer test).
		{file: "overlap.json", formulas: []string{"MgO", "ZnS"}},
		{file: "duplicate.json", formulas: []string{"ZnS"}, rejected: []string{"duplicate"}},
		{file: "no_json.txt", rejected: []string{"no_json"}},
		{file: "empty.txt", rejected: []string{"empty_answer"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			srv := llmtest.New(t, nil)
			srv.Script(llmtest.Reply{Content: answer(t, c.file), PromptTokens: 900, CompletionTokens: 250})
			g := testGenerator(t, srv, Config{})
			in := fixtureInput(t)
			if c.slots > 0 {
				in.Request.Slots = c.slots
			}
			out, err := g.Propose(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range out.Candidates {
				got = append(got, p.Structure.Composition().ReducedFormula())
				if p.Operator != OperatorLLM || p.Fingerprint == "" || p.Formula == "" || p.Rationale == "" {
					t.Errorf("candidate %+v lacks provenance", p)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.formulas, ",") {
				t.Fatalf("candidates %v, want %v", got, c.formulas)
			}
			if codes := reasonCodes(out.Rejected); strings.Join(codes, ",") != strings.Join(c.rejected, ",") {
				t.Fatalf("rejected %v, want %v (%+v)", codes, c.rejected, out.Rejected)
			}
			if c.rejFormula != "" && out.Rejected[0].Proposed.Formula != c.rejFormula {
				t.Fatalf("rejected formula %q, want %q", out.Rejected[0].Proposed.Formula, c.rejFormula)
			}
			for _, r := range out.Rejected {
				if r.Reasons[0].Detail == "" {
					t.Errorf("a rejection without detail: %+v", r)
				}
			}
			if out.Calls != 1 || out.PromptTokens != 900 || out.CompletionTokens != 250 || len(out.Prompts) != 1 {
				t.Fatalf("accounting: %d calls, %d + %d tokens, %d prompts", out.Calls, out.PromptTokens, out.CompletionTokens, len(out.Prompts))
			}
			rec := out.Prompts[0]
			rec.Attempt = 1
			if err := rec.Validate(); err != nil {
				t.Fatal(err)
			}
			if rec.Outcome != messages.PromptAnswered || rec.Candidates != len(c.formulas) || rec.Rejected != len(c.rejected) ||
				rec.Answer != answer(t, c.file) || rec.User != srv.Requests()[0].User || rec.Format != FormatJSONSchema ||
				rec.Template != "v1" || rec.Generation != 3 || rec.Island != 1 || rec.Model != "test-model" {
				t.Fatalf("audit record %+v", rec)
			}
		})
	}
}

func TestProposeContextLengthShrinksOnce(t *testing.T) {
	tooLong := llmtest.Reply{Status: 400, Error: "This model's maximum context length is 1024 tokens", ErrorCode: "context_length_exceeded"}
	srv := llmtest.New(t, nil)
	srv.Script(tooLong, llmtest.Reply{Content: answer(t, "well_formed.json"), PromptTokens: 400, CompletionTokens: 200})
	g := testGenerator(t, srv, Config{})
	out, err := g.Propose(context.Background(), fixtureInput(t))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[1].User) >= len(reqs[0].User) {
		t.Fatalf("%d requests; the retry was not shorter", len(reqs))
	}
	if len(out.Candidates) != 2 || out.Calls != 1 || len(out.Prompts) != 2 {
		t.Fatalf("output: %d candidates, %d calls, %d prompts", len(out.Candidates), out.Calls, len(out.Prompts))
	}
	if p := out.Prompts; p[0].Outcome != messages.PromptContextLength || p[1].Outcome != messages.PromptAnswered || p[1].Dropped == 0 || p[1].Index != 1 {
		t.Fatalf("prompts %+v / %+v", p[0], p[1])
	}

	// Refused twice: the generation fails (and is retried by redelivery).
	srv = llmtest.New(t, nil)
	srv.Script(tooLong, tooLong)
	g = testGenerator(t, srv, Config{})
	out, err = g.Propose(context.Background(), fixtureInput(t))
	if !errors.Is(err, ErrContextLength) || errors.Is(err, proposer.ErrExhausted) || len(out.Prompts) != 2 {
		t.Fatalf("error %v with %d prompts", err, len(out.Prompts))
	}
}

func TestProposeFailures(t *testing.T) {
	cases := []struct {
		name      string
		script    []llmtest.Reply
		exhausted bool
		err       error
		outcome   string
	}{
		{name: "server errors", script: []llmtest.Reply{{Status: 500, Error: "boom"}, {Status: 500, Error: "boom"}},
			err: ErrUnavailable, outcome: messages.PromptFailed},
		{name: "rate limited", script: []llmtest.Reply{{Status: 429, Error: "slow down"}, {Status: 429, Error: "slow down"}},
			err: ErrRateLimited, outcome: messages.PromptFailed},
		{name: "wrong key", script: []llmtest.Reply{{Status: 401, Error: "Incorrect API key"}},
			exhausted: true, err: ErrRefused, outcome: messages.PromptFailed},
		{name: "unknown model", script: []llmtest.Reply{{Status: 404, Error: "model not found"}},
			exhausted: true, err: ErrRefused, outcome: messages.PromptFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, nil)
			srv.Script(c.script...)
			g := testGenerator(t, srv, Config{MaxRetries: 1})
			out, err := g.Propose(context.Background(), fixtureInput(t))
			if err == nil || errors.Is(err, proposer.ErrExhausted) != c.exhausted {
				t.Fatalf("error %v, exhausted %v", err, c.exhausted)
			}
			if !c.exhausted && !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			if out == nil || len(out.Prompts) != 1 || out.Prompts[0].Outcome != c.outcome || out.Prompts[0].Error == "" ||
				out.Prompts[0].Requests != len(c.script) || out.Calls != 0 {
				t.Fatalf("output %+v", out)
			}
		})
	}
}

func TestProposeModelAndTemperature(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Content: answer(t, "well_formed.json")}, llmtest.Reply{Content: answer(t, "well_formed.json")})
	g := testGenerator(t, srv, Config{Model: "default-model", Temperature: 0.5})
	in := fixtureInput(t)
	if _, err := g.Propose(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	in.Spec.Generator.Model, in.Spec.Generator.Temperature = "campaign-model", 1.2
	if _, err := g.Propose(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()
	if r[0].Model != "default-model" || r[0].Temperature != 0.5 || r[1].Model != "campaign-model" || r[1].Temperature < 1.19 || r[1].Temperature > 1.21 {
		t.Fatalf("requests %+v", r)
	}
	if r[0].Seed == nil || *r[0].Seed != int(in.Seed) {
		t.Fatalf("seed %v, want the generation's", r[0].Seed)
	}

	// No model at all: rejected at submission, exhausted if it gets that
	// far.
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	g, err = NewGenerator(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Spec.Generator.Model = ""
	if err := g.CheckSpec(in.Spec); err == nil {
		t.Fatal("a campaign without a model passed CheckSpec")
	}
	if _, err := g.Propose(context.Background(), in); !errors.Is(err, proposer.ErrExhausted) {
		t.Fatalf("error %v, want ErrExhausted", err)
	}
}

func TestProposeLongRetryAfterIsPassedOn(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Status: 429, Error: "Rate limit reached", Header: llmtest.RetryAfter(300)})
	g := testGenerator(t, srv, Config{})
	_, err := g.Propose(context.Background(), fixtureInput(t))
	var later interface{ RetryDelay() time.Duration }
	if !errors.Is(err, ErrRateLimited) || !errors.As(err, &later) || later.RetryDelay() != 300*time.Second {
		t.Fatalf("error %v: the proposer cannot tell when to retry", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests: a wait longer than MaxRetryAfter is not waited in place", n)
	}
}
