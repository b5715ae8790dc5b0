package proposer

import (
	"context"
	"errors"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// Input is what a generator sees of a generation: the campaign, the chosen
// island's best successes and failures (LLEMA's top-k demonstrations) and
// its recently rejected proposals, the memory bank's latest reflections and
// directives, and the chemistry rules sampled for this prompt.
type Input struct {
	Spec        *messages.CampaignSpec
	Request     *messages.GenerationRequest
	Island      int
	Successes   []store.Member
	Failures    []store.Member
	Rejects     []store.Member
	Reflections []messages.Reflection
	Directives  []messages.Directive
	// Experiences are the memory bank's lessons most relevant to the
	// island (reflection.Relevant: by chemical-system similarity to its
	// parents), the most relevant first.
	Experiences []reflection.Experience
	// Rules are the indices (into the generator's rule list) of the rules
	// sampled for this generation; none in generation 0 (LLEMA App. D.2).
	Rules []int
	// Seed makes the generation's random choices reproducible.
	Seed uint64
}

// Proposed is one structure a generator proposes.
type Proposed struct {
	Structure *crystal.Structure
	// Formula is the formula the generator states ("" when it states
	// none); a mismatch with the species is a reason to reject.
	Formula string
	// Fingerprint is crystal.Fingerprint of the structure when the
	// generator computed it ("" otherwise).
	Fingerprint string
	Parents     []string
	Operator    string
	Rule        string
	Rationale   string
}

// Rejected is a proposal that failed a check, with why.
type Rejected struct {
	Proposed Proposed
	Reasons  []messages.Reason
}

// Output is a generator's answer for one generation.
type Output struct {
	Candidates []Proposed
	// Rejected are proposals the generator itself found unusable (an LLM
	// answer that does not parse, a structure that fails validation).
	Rejected []Rejected
	// Accounting of LLM use (zero for rule-based generators).
	PromptTokens, CompletionTokens, Calls int
	// Prompts are the generator's LLM exchanges, for the audit trail; the
	// proposer fills their attempt and publishes them.
	Prompts []*messages.Prompt
}

// Generator proposes candidates for one generation. Errors are failures of
// the generator's service (an LLM endpoint down); the request is retried.
// A generator may return its Output along with an error, for the
// accounting and the audit trail of the calls it made.
type Generator interface {
	Name() string
	Propose(ctx context.Context, in *Input) (*Output, error)
}

// Concurrent is implemented by generators that wait on a service with a
// bound on its concurrent calls (an LLM client): Concurrency is that
// bound, which the proposer adds to its handlers.
type Concurrent interface {
	Concurrency() int
}

// SpecChecker is implemented by generators that can tell at submission
// that they cannot serve a campaign (an LLM generator without a model).
type SpecChecker interface {
	CheckSpec(spec *messages.CampaignSpec) error
}

// ErrExhausted, wrapped in a generator's error, says that the generator
// can propose nothing more for the campaign (its LLM call budget is spent;
// the endpoint refuses its model or key): the campaign ends as exhausted
// with the error as its final message instead of retrying.
var ErrExhausted = errors.New("generator exhausted")

// ErrUnreachable, matched by a generator's error, says that the service
// the generator depends on cannot be reached at all (no connection: refused,
// DNS, TLS). The proposer retries the generation by redelivery like any
// failure; when its last attempt fails so, the campaign ends as exhausted
// with the error as its final message, since a new generation would meet
// the same endpoint.
var ErrUnreachable = errors.New("generator's service unreachable")

// Seeder chooses the known materials that start a campaign's islands.
type Seeder interface {
	Seeds(ctx context.Context, spec *messages.CampaignSpec) ([]Proposed, error)
}
