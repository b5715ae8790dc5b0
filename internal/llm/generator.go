package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// OperatorLLM is the operator of the LLM's candidates.
const OperatorLLM = "llm"

// Generator is the llm generator: one chat completion per generation,
// whose answer's candidates go to the proposer's checks and whose
// unusable parts come back as rejections with their reasons, so that the
// island's failure memory shows them to the model next time.
type Generator struct {
	client *Client
	tmpl   *Template
	store  *store.Store
	// lastFailure holds, per campaign, its last exchange's endpoint
	// failure (cleared by an answer), to say why a budget ran out.
	lastFailure sync.Map
}

// NewGenerator builds the generator over a client. The store (nil in
// tests of the generator alone) counts the campaign's LLM calls against
// its max_llm_calls and tells duplicates of earlier candidates apart.
func NewGenerator(c *Client, s *store.Store) (*Generator, error) {
	t, err := LoadTemplate(c.cfg.Template)
	if err != nil {
		return nil, err
	}
	return &Generator{client: c, tmpl: t, store: s}, nil
}

// Concurrency implements proposer.Concurrent: the client's bound on
// requests in flight.
func (g *Generator) Concurrency() int { return g.client.cfg.Concurrency }

// Name implements proposer.Generator.
func (g *Generator) Name() string { return messages.GeneratorLLM }

// model returns the campaign's model and temperature: the spec's, else
// the client's defaults.
func (g *Generator) model(spec *messages.CampaignSpec) (string, float64) {
	model, temp := spec.Generator.Model, spec.Generator.Temperature
	if model == "" {
		model = g.client.cfg.Model
	}
	if temp == 0 {
		temp = g.client.cfg.Temperature
	}
	return model, temp
}

// CheckSpec implements proposer.SpecChecker: a campaign needs a model,
// its own or the proposer's default.
func (g *Generator) CheckSpec(spec *messages.CampaignSpec) error {
	if m, _ := g.model(spec); m == "" {
		return errors.New("generator llm: the campaign names no model (generator.model) and this proposer has no default (--llm-model)")
	}
	return nil
}

// Propose implements proposer.Generator. The answer's candidates are
// parsed with pkg/crystal; those that do not parse (wrong lengths, unknown
// elements, a formula that disagrees with the species, a degenerate cell)
// or repeat an earlier candidate are returned as rejected with the reason,
// the rest go to the proposer's checks (minimum distance, charge
// neutrality, element rules, directives). A prompt refused as too long is
// rendered again within half its size and sent once more. Errors: the
// endpoint's failures after the client's retries (the generation is
// retried by redelivery), or proposer.ErrExhausted when the campaign's
// LLM call budget is spent or the endpoint refuses its requests for good.
// The Output comes with an error too, for the audit trail.
func (g *Generator) Propose(ctx context.Context, in *proposer.Input) (*proposer.Output, error) {
	model, temp := g.model(in.Spec)
	if model == "" {
		return nil, fmt.Errorf("%w: %v", proposer.ErrExhausted, g.CheckSpec(in.Spec))
	}
	data := NewPromptData(in)
	out := &proposer.Output{}
	budget := g.client.cfg.PromptTokens
	estimate := func(system, user string) int { return g.client.EstimatePrompt(model, system, user) }
	seed := int(in.Seed & 0x7fffffff)
	var last *Rendered
	for index := 0; ; index++ {
		r, err := g.tmpl.Render(data, budget, estimate)
		if err != nil {
			return out, err
		}
		if last != nil && r.Tokens >= last.Tokens {
			// Nothing left to leave out: the same prompt would fail again.
			return out, fmt.Errorf("llm %s: the prompt cannot be shortened below %d tokens: %w", model, r.Tokens, ErrContextLength)
		}
		last = r
		rec := &messages.Prompt{
			Schema: messages.SchemaVersion, Campaign: in.Spec.ID, Kind: messages.PromptPropose, Episode: in.Request.Episode, Generation: in.Request.Generation,
			Island: in.Island, Attempt: 1, Index: index, Template: g.tmpl.Version, Model: model, Temperature: temp,
			System: r.System, User: r.User, Dropped: r.Dropped, Endpoint: g.client.cfg.BaseURL, At: time.Now().UTC(),
		}
		out.Prompts = append(out.Prompts, rec)
		comp, err := g.client.Complete(ctx, Request{
			Model: model, Temperature: temp, System: r.System, User: r.User, Seed: &seed,
			Schema: g.tmpl.Schema, SchemaName: "candidates", Reserve: g.reserve(in.Spec), Release: g.release(in.Spec),
		})
		if comp != nil {
			rec.Format, rec.Requests, rec.LatencySeconds = comp.Format, comp.Requests, comp.Latency.Seconds()
		}
		if err == nil {
			g.lastFailure.Delete(in.Spec.ID)
			g.answered(ctx, in, comp, rec, out)
			return out, nil
		}
		rec.Error = err.Error()
		var e *Error
		if errors.As(err, &e) {
			rec.ErrorKind = e.Kind
			if e.Kind != KindBudget {
				g.lastFailure.Store(in.Spec.ID, e)
			}
		}
		switch {
		case errors.Is(err, ErrContextLength) && index == 0:
			rec.Outcome = messages.PromptContextLength
			budget = min(budget, r.Tokens) / 2
			continue
		case errors.Is(err, ErrCallBudget):
			rec.Outcome = messages.PromptBudgetSpent
			msg := budgetMessage(err)
			last := comp.LastFailure
			if v, ok := g.lastFailure.Load(in.Spec.ID); ok && last == nil {
				last = v.(*Error)
			}
			if last != nil {
				msg += "; the last request failed: " + last.Error()
			}
			return out, fmt.Errorf("%w: %s", proposer.ErrExhausted, msg)
		case errors.Is(err, ErrRefused):
			rec.Outcome = messages.PromptFailed
			hint := ""
			if e != nil && e.Status == http.StatusNotFound {
				hint = fmt.Sprintf(" (is the model's name right, and %s the endpoint up to /v1?)", g.client.cfg.BaseURL)
			}
			return out, &failure{err: fmt.Errorf("%w: the LLM endpoint refuses the campaign's requests (model %q): %w%s", proposer.ErrExhausted, model, err, hint)}
		case errors.Is(err, ErrUnreachable):
			rec.Outcome = messages.PromptFailed
			return out, &failure{err: fmt.Errorf("LLM endpoint unreachable: %w (%d requests)", err, rec.Requests)}
		}
		rec.Outcome = messages.PromptFailed
		if errors.Is(err, ErrContextLength) {
			rec.Outcome = messages.PromptContextLength
		}
		return out, &failure{err: fmt.Errorf("llm %s: %w", model, err)}
	}
}

// failure is a generation's failed exchange: its error, with the
// endpoint's classified failure as log fields for the proposer's warning.
type failure struct{ err error }

func (f *failure) Error() string { return f.err.Error() }

func (f *failure) Unwrap() error { return f.err }

// LogFields describe the endpoint's failure (endpoint, kind, status).
func (f *failure) LogFields() []zap.Field {
	var e *Error
	if errors.As(f.err, &e) {
		return e.LogFields()
	}
	return nil
}

func budgetMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

// reserve counts each request against the campaign's call budget.
func (g *Generator) reserve(spec *messages.CampaignSpec) func(context.Context) error {
	return reserveCall(g.store, spec, false)
}

// release gives back the call of a request that never reached the
// endpoint.
func (g *Generator) release(spec *messages.CampaignSpec) func(context.Context) {
	return releaseCall(g.store, spec, false)
}

// reserveCall counts each request against the campaign's call budget
// (max_llm_calls) and checks its token budget (max_llm_tokens), both
// shared by every kind of exchange; a debate's request (debates) is
// counted in the debates' account, which the judge may write. nil without
// a store.
func reserveCall(s *store.Store, spec *messages.CampaignSpec, debates bool) func(context.Context) error {
	if s == nil {
		return nil
	}
	reserve := s.ReserveLLMCall
	if debates {
		reserve = s.ReserveDebateCall
	}
	return func(ctx context.Context) error {
		r, err := reserve(ctx, spec.ID, spec.Generator.MaxLLMCalls, spec.Generator.MaxLLMTokens)
		if err != nil {
			return err
		}
		switch r.Spent {
		case store.BudgetCalls:
			return &Error{Kind: KindBudget, Message: fmt.Sprintf("the campaign's %d LLM calls (max_llm_calls) are spent", r.MaxCalls)}
		case store.BudgetTokens:
			return &Error{Kind: KindBudget, Message: fmt.Sprintf("the campaign's %d LLM tokens (max_llm_tokens) are spent: %d used by its proposals, reflections, memory edits and debates", r.MaxTokens, r.Used)}
		}
		return nil
	}
}

// releaseCall gives back the call of a request that never reached the
// endpoint, in the account reserveCall counted it in; nil without a
// store.
func releaseCall(s *store.Store, spec *messages.CampaignSpec, debates bool) func(context.Context) {
	if s == nil {
		return nil
	}
	release := s.ReleaseLLMCall
	if debates {
		release = s.ReleaseDebateCall
	}
	return func(ctx context.Context) {
		_ = release(ctx, spec.ID) // at worst the call stays counted
	}
}

// answered records an answer: its accounting, and its candidates and
// rejections in the output.
func (g *Generator) answered(ctx context.Context, in *proposer.Input, comp *Completion, rec *messages.Prompt, out *proposer.Output) {
	rec.Outcome = messages.PromptAnswered
	rec.Answer = comp.Content
	if len(rec.Answer) > messages.MaxPromptAnswer {
		rec.Answer = strings.ToValidUTF8(rec.Answer[:messages.MaxPromptAnswer-len("…")], "") + "…"
	}
	rec.FinishReason = comp.FinishReason
	rec.PromptTokens, rec.CompletionTokens, rec.TokensEstimated = comp.PromptTokens, comp.CompletionTokens, comp.Estimated
	out.Calls++
	out.PromptTokens += comp.PromptTokens
	out.CompletionTokens += comp.CompletionTokens
	cands, rejs := g.parse(ctx, in, comp, rec)
	rec.Candidates, rec.Rejected = len(cands), len(rejs)
	for _, r := range rejs {
		for _, reason := range r.Reasons {
			count(&rec.Reasons, reason.Code)
		}
	}
	out.Candidates = append(out.Candidates, cands...)
	out.Rejected = append(out.Rejected, rejs...)
	metricCandidates.WithLabelValues("parsed").Add(float64(len(cands)))
	metricCandidates.WithLabelValues("rejected").Add(float64(len(rejs)))
}

// count adds one to m[key], making the map when needed.
func count(m *map[string]int, key string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[key]++
}

// parse reads an answer's candidates (decodeCandidate), noting in rec how
// they departed from the asked-for format and the keys left unread. Up to
// twice the generation's slots are handed on (the proposer publishes the
// first that pass its checks, up to the slots); candidates beyond them are
// ignored.
func (g *Generator) parse(ctx context.Context, in *proposer.Input, comp *Completion, rec *messages.Prompt) ([]proposer.Proposed, []proposer.Rejected) {
	reject := func(p proposer.Proposed, code, detail string) proposer.Rejected {
		return proposer.Rejected{Proposed: p, Reasons: []messages.Reason{{Code: code, Detail: detail}}}
	}
	ex, err := extractCandidates(comp.Content)
	if err != nil {
		code := "no_json"
		switch {
		case errors.Is(err, ErrTruncated):
			code = "truncated"
		case errors.Is(err, ErrEmptyAnswer):
			code = "empty_answer"
		}
		detail := err.Error()
		if comp.FinishReason == "length" {
			detail += " (the answer reached the token limit)"
		}
		return nil, []proposer.Rejected{reject(proposer.Proposed{Operator: OperatorLLM}, code, detail)}
	}
	if ex.Repaired {
		count(&rec.Adapted, "json_repaired")
	}
	var cands []proposer.Proposed
	var rejs []proposer.Rejected
	fingerprints := map[string]int{}
	for i, raw := range ex.Candidates {
		if len(cands) >= 2*in.Request.Slots {
			break
		}
		c, s, rd, err := decodeCandidate(raw)
		for _, a := range rd.Adapted {
			count(&rec.Adapted, a)
		}
		for _, k := range rd.Ignored {
			count(&rec.IgnoredKeys, k)
		}
		p := proposer.Proposed{Operator: OperatorLLM, Structure: s}
		if c != nil {
			p.Formula, p.Rationale, p.Rule = c.Formula, c.Rationale, c.Rule
		}
		if err != nil {
			rejs = append(rejs, reject(p, parseCode(err), err.Error()))
			continue
		}
		if fp, err := crystal.Fingerprint(s); err == nil {
			p.Fingerprint = fp
			if j, ok := fingerprints[fp]; ok {
				rejs = append(rejs, reject(p, "duplicate", fmt.Sprintf("the same structure as candidate %d of the same answer", j)))
				continue
			}
			fingerprints[fp] = i + 1
			if g.store != nil {
				seen, err := g.store.Seen(ctx, in.Spec.ID, fp)
				if err == nil && seen {
					rejs = append(rejs, reject(p, "duplicate", "this structure was already proposed in the campaign"))
					continue
				}
			}
		}
		cands = append(cands, p)
	}
	switch {
	case ex.Truncated:
		rejs = append(rejs, reject(proposer.Proposed{Operator: OperatorLLM}, "truncated",
			fmt.Sprintf("the answer was cut off at the token limit after %d complete candidates", len(ex.Candidates))))
	case ex.Malformed != "":
		rejs = append(rejs, reject(proposer.Proposed{Operator: OperatorLLM}, "bad_json",
			fmt.Sprintf("the answer's JSON breaks after %d complete candidates: %s", len(ex.Candidates), ex.Malformed)))
	}
	return cands, rejs
}

// parseCode names a candidate's parse failure (a stable code to count by).
func parseCode(err error) string {
	var de *decodeError
	switch {
	case errors.As(err, &de):
		return de.Code
	case errors.Is(err, crystal.ErrUnknownElement):
		return "unknown_element"
	case errors.Is(err, crystal.ErrFormulaMismatch):
		return string(crystal.ReasonFormulaMismatch)
	case errors.Is(err, crystal.ErrBadLattice):
		return "bad_lattice"
	case errors.Is(err, crystal.ErrTooManySites):
		return string(crystal.ReasonTooManyAtoms)
	case errors.Is(err, crystal.ErrBadFormula):
		return "bad_formula"
	case errors.Is(err, crystal.ErrBadStructureJSON) && strings.Contains(err.Error(), "species and coords"):
		return "length_mismatch"
	case errors.Is(err, crystal.ErrBadStructureJSON):
		return "bad_json"
	}
	return string(crystal.ReasonUnreadable)
}
