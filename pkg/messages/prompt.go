package messages

import (
	"fmt"
	"math"
	"time"
)

// SubjectPrompts carries the audit trail of LLM prompts:
// crucible.campaigns.prompts.<campaign>, in the CAMPAIGNS stream (kept as
// long as the campaign's other events, readable with `crucible prompts`).
const SubjectPrompts = "crucible.campaigns.prompts"

// Outcomes of an LLM exchange (Prompt.Outcome).
const (
	// PromptAnswered: the model answered (whatever the answer was worth).
	PromptAnswered = "answered"
	// PromptContextLength: the endpoint refused the prompt as longer than
	// the model's context; a shorter prompt follows.
	PromptContextLength = "context_length"
	// PromptFailed: the endpoint did not answer after every retry (rate
	// limits, server errors, timeouts, refused connections) or refused the
	// request; Error says why.
	PromptFailed = "failed"
	// PromptBudgetSpent: not sent, the campaign's LLM call budget is spent.
	PromptBudgetSpent = "budget_spent"
)

// Kinds of LLM exchange (Prompt.Kind).
const (
	// PromptPropose: the generator asks for candidates.
	PromptPropose = "propose"
	// PromptReflect: the reflector asks for an episode's bullets and
	// directives.
	PromptReflect = "reflect"
	// PromptMemory: the reflector asks for the memory bank's edits.
	PromptMemory = "memory"
	// PromptDebate: a debate role or the debate judge argues over a hit
	// (Candidate, Role).
	PromptDebate = "debate"
)

// Prompt is one LLM exchange of a generation or a reflection, for audit: the rendered
// messages exactly as sent, the raw answer, what the answer yielded and
// what it cost. The proposer publishes one per completion request (a
// request retried after a rate limit is one exchange; a prompt shrunk
// after a context-length error is another).
type Prompt struct {
	Schema   int    `json:"schema"`
	Campaign string `json:"campaign"`
	// Kind is PromptPropose, PromptReflect or PromptMemory ("" in records
	// of older builds: propose).
	Kind    string `json:"kind,omitempty"`
	Episode int    `json:"episode"`
	// Candidate and Role name the hit and the role (or "judge") of a
	// debate exchange.
	Candidate  string `json:"candidate,omitempty"`
	Role       string `json:"role,omitempty"`
	Generation int    `json:"generation"`
	Island     int    `json:"island"`
	// Attempt is the delivery of the generation request (1 for the first;
	// a failed generation is retried by redelivery).
	Attempt int `json:"attempt"`
	// Index orders the exchanges of one attempt, from 0.
	Index int `json:"index"`
	// Template names the prompt template version ("v1").
	Template    string  `json:"template"`
	Model       string  `json:"model"`
	Temperature float64 `json:"temperature"`
	// Format is the response format asked for: json_schema, json_object or
	// text (servers without structured output).
	Format string `json:"format"`
	System string `json:"system"`
	User   string `json:"user"`
	// Dropped counts the demonstrations and reflections left out to keep
	// the prompt within its token budget, oldest first.
	Dropped int `json:"dropped,omitempty"`
	// Answer is the model's raw answer (cut at MaxPromptAnswer bytes).
	Answer       string `json:"answer,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	Outcome      string `json:"outcome"`
	Error        string `json:"error,omitempty"`
	// ErrorKind classifies a failed exchange's Error (connection_refused,
	// dns, tls, connection, timeout, unauthorized, model_not_found,
	// rate_limited, quota, server_error, context_length, bad_request,
	// budget; see the llm package).
	ErrorKind string `json:"error_kind,omitempty"`
	// Endpoint is the base URL the exchange went to.
	Endpoint string `json:"endpoint,omitempty"`
	// Requests is the number of HTTP requests the exchange took (retries
	// after rate limits, server errors and timeouts included).
	Requests int `json:"requests"`
	// PromptTokens and CompletionTokens are the server's usage figures,
	// or estimates when it reports none (TokensEstimated).
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	TokensEstimated  bool `json:"tokens_estimated,omitempty"`
	// Candidates and Rejected count the answer's parsed candidates and its
	// unusable ones (before the proposer's own checks).
	Candidates int `json:"candidates"`
	Rejected   int `json:"rejected"`
	// Reasons counts the answer's unusable parts by reason code.
	Reasons map[string]int `json:"reasons,omitempty"`
	// Adapted counts, by kind, how the answer departed from the format the
	// prompt asks for and was read anyway (number_as_string,
	// rule_as_number, lattice_matrix, cartesian, formula_notation, …).
	Adapted map[string]int `json:"adapted,omitempty"`
	// IgnoredKeys counts the keys of the answer's candidates that were not
	// read, by name ("space_group", "lattice.volume").
	IgnoredKeys    map[string]int `json:"ignored_keys,omitempty"`
	LatencySeconds float64        `json:"latency_seconds"`
	At             time.Time      `json:"at"`
}

// MaxPromptAnswer bounds the answer kept in a Prompt record (bytes).
const MaxPromptAnswer = 64 << 10

// MsgID is the record's deterministic message id: one per campaign,
// generation, attempt and exchange.
func (p *Prompt) MsgID() string {
	if p.Kind == PromptDebate {
		return fmt.Sprintf("prompt/%s/debate/%s/%d", p.Campaign, p.Candidate, p.Index)
	}
	if p.Kind == PromptReflect || p.Kind == PromptMemory {
		return fmt.Sprintf("prompt/%s/%s/e%d/a%d/%d", p.Campaign, p.Kind, p.Episode, p.Attempt, p.Index)
	}
	return fmt.Sprintf("prompt/%s/g%d/a%d/%d", p.Campaign, p.Generation, p.Attempt, p.Index)
}

// Validate names the bad field.
func (p *Prompt) Validate() error {
	if err := checkSchema("prompt", p.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(p.Campaign); err != nil {
		return invalid("prompt.campaign", "%v", err)
	}
	switch {
	case p.Generation < 0:
		return invalid("prompt.generation", "%d is negative", p.Generation)
	case p.Attempt < 1:
		return invalid("prompt.attempt", "%d, want ≥ 1", p.Attempt)
	case p.Index < 0:
		return invalid("prompt.index", "%d is negative", p.Index)
	case p.PromptTokens < 0 || p.CompletionTokens < 0 || p.Requests < 0:
		return invalid("prompt.tokens", "negative count")
	case math.IsNaN(p.LatencySeconds) || math.IsInf(p.LatencySeconds, 0):
		return invalid("prompt.latency_seconds", "%v", p.LatencySeconds)
	case len(p.Answer) > MaxPromptAnswer:
		return invalid("prompt.answer", "%d bytes, more than %d", len(p.Answer), MaxPromptAnswer)
	}
	switch p.Kind {
	case "", PromptPropose, PromptReflect, PromptMemory, PromptDebate:
	default:
		return invalid("prompt.kind", "unknown kind %q", p.Kind)
	}
	switch p.Outcome {
	case PromptAnswered, PromptContextLength, PromptFailed, PromptBudgetSpent:
	default:
		return invalid("prompt.outcome", "unknown outcome %q", p.Outcome)
	}
	return nil
}
