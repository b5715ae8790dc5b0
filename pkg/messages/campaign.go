package messages

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/task"
)

// ErrInvalid wraps every validation error, which names the offending field.
var ErrInvalid = errors.New("invalid message")

func invalid(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, args...))
}

func checkSchema(field string, v int) error {
	if v != SchemaVersion {
		return invalid(field+".schema", "version %d, this build speaks %d", v, SchemaVersion)
	}
	return nil
}

// Generator kinds.
const (
	// GeneratorEvolve proposes with LLEMA's chemistry rules as programmatic
	// operators (substitution, prototype filling, crossover): no LLM needed.
	GeneratorEvolve = "evolve"
	// GeneratorLLM asks an OpenAI-compatible model.
	GeneratorLLM = "llm"
)

// GeneratorSpec chooses and tunes the proposer's generator for a campaign.
// Connection settings (URL, key, rate limits) belong to the proposer's
// configuration, not to the campaign.
type GeneratorSpec struct {
	Kind string `json:"kind"`
	// Model overrides the proposer's default model (llm only).
	Model string `json:"model,omitempty"`
	// Temperature of sampling (llm only); 0 means the proposer's default
	// (LLEMA samples at 0.8).
	Temperature float64 `json:"temperature,omitempty"`
	// MaxLLMCalls bounds the LLM requests of the campaign, retries
	// included, of every kind (proposals, reflections with reflector llm,
	// debates with debate llm): answers without a usable candidate cost
	// calls, not evaluations, so this is what ends a campaign whose model
	// cannot produce valid structures. Default DefaultLLMCallsPerSlot ×
	// ⌈budget / batch size⌉ with generator llm, plus
	// DefaultLLMCallsPerReflection per episode with reflector llm, plus
	// LLMCallsPerDebate(judge.max_rounds) per debate (judge.max_debates)
	// with debate llm; when spent the campaign ends as exhausted.
	MaxLLMCalls int `json:"max_llm_calls,omitempty"`
	// MaxLLMTokens bounds the tokens (prompt and completion) of the
	// campaign's LLM exchanges of every kind; 0, the default, sets no
	// bound. It is checked before each request, so the requests in flight
	// when it is reached may exceed it by their own tokens; when spent the
	// campaign ends as exhausted.
	MaxLLMTokens int `json:"max_llm_tokens,omitempty"`
}

// Reflector modes (ReflectorSpec.Mode).
const (
	// ReflectorRules reflects with deterministic rules (pkg/reflection):
	// no LLM needed.
	ReflectorRules = "rules"
	// ReflectorLLM asks an OpenAI-compatible model for the episode's
	// bullets, directives and memory edits (MADE §4.1, SciMem App. E),
	// validated against the evidence; the rules stand in when its answer
	// is unusable.
	ReflectorLLM = "llm"
	// ReflectorOff writes no reflection: no bullets, directives or memory
	// edits, and the proposer reads no memory bank.
	ReflectorOff = "off"
)

// ReflectorSpec chooses how a campaign reflects at the end of an episode.
type ReflectorSpec struct {
	Mode string `json:"mode"`
	// Model overrides the reflector's default model (llm only).
	Model string `json:"model,omitempty"`
}

// Debate modes of the judge (JudgeSpec.Debate).
const (
	// DebateOffline: every hit that passes the screen-level checks is
	// debated by role rules over the debate tools (pkg/debate).
	DebateOffline = "offline"
	// DebateLLM: roles and judge are LLM agents calling the same tools,
	// under the campaign's LLM call budget; a failed exchange falls back to
	// the offline role.
	DebateLLM = "llm"
	// DebateOff: the rule checks alone judge.
	DebateOff = "off"
)

// Defaults of the judge.
const (
	// DefaultDebateRounds is the round limit of a debate (Materealize's
	// thinking mode debates at most five rounds).
	DefaultDebateRounds = 5
	MaxDebateRounds     = 20
)

// LLMCallsPerDebate is the share of the default LLM call budget of each
// debate with debate llm and a round limit of maxRounds: every role's
// turn in every round, each with one tool turn before its position (as
// a model that grounds each turn does), and the judge's ruling. A debate
// that settles early spends less; one whose agents call tools several
// times in a turn may find the budget spent, and its roles then argue by
// their rules.
func LLMCallsPerDebate(maxRounds int) int {
	return len(DebateRoles)*maxRounds*2 + 1
}

// JudgeSpec chooses how the judge weighs a campaign's stable hits.
type JudgeSpec struct {
	// Debate is DebateOffline, DebateLLM or DebateOff.
	Debate string `json:"debate"`
	// MaxDebates bounds the hits debated; the others are judged by the
	// rule checks and marked so. Defaults to the budget (every hit).
	MaxDebates int `json:"max_debates"`
	// MaxRounds bounds a debate's rounds; it stops earlier when the
	// agreement settles.
	MaxRounds int `json:"max_rounds"`
	// Model is the judge's and the roles' model (debate llm); RoleModels
	// overrides it per role (thermodynamics, synthesis,
	// property_confidence, novelty).
	Model      string            `json:"model,omitempty"`
	RoleModels map[string]string `json:"role_models,omitempty"`
}

// DefaultLLMCallsPerReflection is the share of the default LLM call budget
// of each episode's reflection with reflector llm (a reflect and a memory
// exchange, with room for retries).
const DefaultLLMCallsPerReflection = 4

// Oracle tiers a campaign may choose (CampaignSpec.Oracle).
const (
	// OracleScreen evaluates every candidate as proposed: CGCNN and the
	// reference tables on the unrelaxed structure.
	OracleScreen = "screen"
	// OracleRelax screens every candidate, then relaxes those that pass
	// the screen (ScreenSpec) with the M3GNet potential and evaluates the
	// relaxed structure, whose numbers replace the screened ones.
	OracleRelax = "relax"
)

// ScreenSpec says which screened candidates a relax oracle relaxes: those
// that could still meet every constraint and be stable once relaxed.
type ScreenSpec struct {
	// MaxEAboveHull is the largest screened energy above the hull
	// (eV/atom) of a candidate that is relaxed.
	MaxEAboveHull float64 `json:"max_e_above_hull"`
	// ErrorMultiple is how many of the screen's errors (a value's
	// uncertainty plus its tie spread) a screened value may miss its
	// constraint by and still be relaxed; 0 relaxes only screened hits.
	ErrorMultiple *float64 `json:"error_multiple,omitempty"`
}

// Multiple is ErrorMultiple, DefaultScreenErrorMultiple when unset.
func (s ScreenSpec) Multiple() float64 {
	if s.ErrorMultiple == nil {
		return DefaultScreenErrorMultiple
	}
	return *s.ErrorMultiple
}

// DefaultLLMCallsPerSlot is the default LLM call budget per generation the
// evaluation budget needs (GeneratorSpec.MaxLLMCalls): room for answers
// without a usable candidate and for retries.
const DefaultLLMCallsPerSlot = 4

// Defaults of a campaign (LLEMA §2.4 and App. D.2 where they come from).
const (
	DefaultIslands            = 5   // LLEMA Table 6: five islands did best
	DefaultBatchSize          = 2   // b: candidates per generation
	DefaultTopK               = 2   // k: demonstrations from each pool
	DefaultRulesPerPrompt     = 6   // of the 14 chemistry rules
	DefaultStabilityThreshold = 0.1 // eV/atom above hull (LLEMA §3.2, MADE)
	DefaultConfidenceK        = 1.0 // calibrated standard errors a margin must clear
	DefaultEpisodes           = 1
	DefaultPoolSize           = 32 // per island success / failure pool
	DefaultReflectionWindow   = 3  // W: reflections shown (MADE §4.1)
	DefaultMaxInFlight        = 8  // generations requested but not yet evaluated
	// DefaultLLMMaxInFlight is max_in_flight of an llm campaign: its
	// generations are LLM calls of seconds each, this many at once, as
	// many as an LLM client sends at once by default.
	DefaultLLMMaxInFlight = 4
	// DefaultOracle is the oracle of a campaign that names none.
	DefaultOracle = OracleScreen
	// DefaultScreenMaxEAboveHull (eV/atom): CGCNN's formation-energy error
	// on unrelaxed candidates is about 0.17 eV/atom, so a screened E_hull
	// up to 0.3 may still relax to stability.
	DefaultScreenMaxEAboveHull = 0.3
	DefaultScreenErrorMultiple = 1.0
	MaxBudget                  = 1_000_000
	MaxIslands                 = 64
	MaxBatchSize               = 64
)

// CampaignSpec is what a user submits: a task and how to search for it.
type CampaignSpec struct {
	Schema int    `json:"schema"`
	ID     string `json:"id"`
	// Task states the goal: property constraints and element rules.
	Task      task.Task     `json:"task"`
	Generator GeneratorSpec `json:"generator"`
	// Reflector chooses how the campaign reflects after each episode.
	Reflector ReflectorSpec `json:"reflector"`
	// Judge chooses how stable hits are judged: debated or by rules.
	Judge JudgeSpec `json:"judge"`
	// Islands is the number of sub-populations (LLEMA's m).
	Islands int `json:"islands"`
	// Budget is the number of oracle evaluations of proposed candidates
	// (seed materials are evaluated too but not counted).
	Budget int `json:"budget"`
	// Episodes splits the budget into episodes; after each, the reflector
	// writes lessons and directives that condition the next (MADE §4).
	Episodes int `json:"episodes"`
	// BatchSize is b, the candidates asked of one generation.
	BatchSize int `json:"batch_size"`
	// TopK is k, the demonstrations taken from each pool of the island.
	TopK int `json:"top_k"`
	// RulesPerPrompt is how many of the chemistry rules a prompt shows.
	RulesPerPrompt int `json:"rules_per_prompt"`
	// StabilityThreshold is the energy above hull (eV/atom) at or below
	// which a candidate counts as stable.
	StabilityThreshold float64 `json:"stability_threshold"`
	// ConfidenceK is k: where the oracle's errors are calibrated, a
	// surrogate value meets a constraint, and an energy above hull the
	// stability threshold, only by k calibrated standard errors.
	ConfidenceK float64 `json:"confidence_k"`
	// Oracle is the oracle's tiers: OracleScreen or OracleRelax.
	Oracle string `json:"oracle"`
	// Screen chooses the candidates a relax oracle relaxes.
	Screen ScreenSpec `json:"screen"`
	// Seed makes the campaign's random choices reproducible.
	Seed uint64 `json:"seed"`
	// PoolSize bounds each island's success and failure pools.
	PoolSize int `json:"pool_size"`
	// MaxInFlight bounds the generations requested but not fully
	// evaluated: how many a campaign has in progress at once. With the
	// llm generator each is an LLM call while it is generated, so this is
	// how many calls a campaign keeps in flight (default 4), within the
	// proposer replica's bound per endpoint (--llm-concurrency), shared by
	// all its campaigns.
	MaxInFlight int `json:"max_in_flight"`
	// Ordered makes the campaign a function of its spec and seed: one
	// generation at a time (max_in_flight 1), evaluations recorded in the
	// order of their candidates, each candidate's stability judged
	// against the campaign's finds as of its proposal. Whatever the
	// brokers' timing and the number of evaluators, the same spec and
	// seed give the same candidates, values and counters — with the
	// evolve generator and a memory bank in the same state (an LLM does
	// not repeat itself). It costs the overlap of proposing and
	// evaluating.
	Ordered bool `json:"ordered,omitempty"`
	// ReflectionWindow is W, the most recent reflections a prompt shows.
	ReflectionWindow int `json:"reflection_window"`
	// SeedFormulas optionally names the known materials islands start
	// from; by default the proposer picks reference compounds that fit the
	// task.
	SeedFormulas []string `json:"seed_formulas,omitempty"`
	// MemoryContext keys the memory bank the campaign reads and extends;
	// by default it is derived from the task name.
	MemoryContext string    `json:"memory_context,omitempty"`
	SubmittedAt   time.Time `json:"submitted_at"`
	// SubmittedBy is the NATS user that submitted the campaign, as the
	// server authenticated it (SubmitSubject): the proposer sets it from
	// the submission's subject, replacing what a submission says; "" for
	// a submission without a user (an installation without users, the
	// operator's admin user).
	SubmittedBy string `json:"submitted_by,omitempty"`
}

// ApplyDefaults fills every zero field with its default.
func (c *CampaignSpec) ApplyDefaults() {
	if c.Schema == 0 {
		c.Schema = SchemaVersion
	}
	if c.Generator.Kind == "" {
		c.Generator.Kind = GeneratorEvolve
	}
	if c.Reflector.Mode == "" {
		c.Reflector.Mode = ReflectorRules
	}
	setDefault(&c.Islands, DefaultIslands)
	setDefault(&c.Episodes, DefaultEpisodes)
	setDefault(&c.BatchSize, DefaultBatchSize)
	// One budget for every kind of exchange, by default the sum of each
	// kind's share: proposals, reflections and debates.
	defaultCalls := c.Generator.MaxLLMCalls == 0
	if defaultCalls && c.Budget > 0 {
		if c.Generator.Kind == GeneratorLLM {
			c.Generator.MaxLLMCalls = DefaultLLMCallsPerSlot * ((c.Budget + c.BatchSize - 1) / c.BatchSize)
		}
		if c.Reflector.Mode == ReflectorLLM {
			c.Generator.MaxLLMCalls += DefaultLLMCallsPerReflection * c.Episodes
		}
	}
	if c.Judge.Debate == "" {
		c.Judge.Debate = DebateOffline
	}
	if c.Judge.MaxDebates == 0 {
		c.Judge.MaxDebates = c.Budget
	}
	setDefault(&c.Judge.MaxRounds, DefaultDebateRounds)
	if c.Judge.Debate == DebateLLM && defaultCalls {
		// Debates share the budget: without their own share they would
		// spend the proposals' and end the campaign early.
		c.Generator.MaxLLMCalls += LLMCallsPerDebate(c.Judge.MaxRounds) * c.Judge.MaxDebates
	}
	setDefault(&c.TopK, DefaultTopK)
	setDefault(&c.RulesPerPrompt, DefaultRulesPerPrompt)
	setDefault(&c.PoolSize, DefaultPoolSize)
	if c.Ordered {
		setDefault(&c.MaxInFlight, 1)
	}
	if c.Generator.Kind == GeneratorLLM {
		setDefault(&c.MaxInFlight, DefaultLLMMaxInFlight)
	}
	setDefault(&c.MaxInFlight, DefaultMaxInFlight)
	setDefault(&c.ReflectionWindow, DefaultReflectionWindow)
	if c.StabilityThreshold == 0 {
		c.StabilityThreshold = DefaultStabilityThreshold
	}
	if c.ConfidenceK == 0 {
		c.ConfidenceK = DefaultConfidenceK
	}
	if c.MemoryContext == "" {
		c.MemoryContext = MemoryContextOf(c.Task.Name)
	}
	if c.Oracle == "" {
		c.Oracle = DefaultOracle
	}
	if c.Screen.MaxEAboveHull == 0 {
		c.Screen.MaxEAboveHull = DefaultScreenMaxEAboveHull
	}
	if c.Screen.ErrorMultiple == nil {
		m := DefaultScreenErrorMultiple
		c.Screen.ErrorMultiple = &m
	}
}

func setDefault(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

// MemoryContextOf derives a memory-bank context key from a task name:
// lower case, runs of other characters turned into single '-'.
func MemoryContextOf(taskName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(taskName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return "task-" + strings.TrimSuffix(b.String(), "-")
}

// Validate checks a campaign after ApplyDefaults; the error names the
// field.
func (c *CampaignSpec) Validate() error {
	if err := checkSchema("campaign", c.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(c.ID); err != nil {
		return invalid("campaign.id", "%v", err)
	}
	if err := c.Task.Validate(); err != nil {
		return fmt.Errorf("%w: campaign.task: %w", ErrInvalid, err)
	}
	switch c.Generator.Kind {
	case GeneratorEvolve, GeneratorLLM:
	default:
		return invalid("campaign.generator.kind", "%q, want %q or %q", c.Generator.Kind, GeneratorEvolve, GeneratorLLM)
	}
	if t := c.Generator.Temperature; t < 0 || t > 2 || math.IsNaN(t) {
		return invalid("campaign.generator.temperature", "%v outside [0, 2]", t)
	}
	switch c.Reflector.Mode {
	case ReflectorRules, ReflectorLLM, ReflectorOff:
	default:
		return invalid("campaign.reflector.mode", "%q, want %q, %q or %q", c.Reflector.Mode, ReflectorLLM, ReflectorRules, ReflectorOff)
	}
	if c.Reflector.Model != "" && c.Reflector.Mode != ReflectorLLM {
		return invalid("campaign.reflector.model", "%q is for mode %q only, the mode is %q", c.Reflector.Model, ReflectorLLM, c.Reflector.Mode)
	}
	switch c.Judge.Debate {
	case DebateOffline, DebateLLM, DebateOff:
	default:
		return invalid("campaign.judge.debate", "%q, want %q, %q or %q", c.Judge.Debate, DebateOffline, DebateLLM, DebateOff)
	}
	if c.Judge.MaxDebates < 0 {
		return invalid("campaign.judge.max_debates", "%d is negative", c.Judge.MaxDebates)
	}
	if r := c.Judge.MaxRounds; r < 1 || r > MaxDebateRounds {
		return invalid("campaign.judge.max_rounds", "%d outside [1, %d]", r, MaxDebateRounds)
	}
	if (c.Judge.Model != "" || len(c.Judge.RoleModels) > 0) && c.Judge.Debate != DebateLLM {
		return invalid("campaign.judge.model", "models are for debate %q only, the debate is %q", DebateLLM, c.Judge.Debate)
	}
	for role := range c.Judge.RoleModels {
		if !slices.Contains(DebateRoles, role) {
			return invalid("campaign.judge.role_models", "%q is no role; the roles are %v", role, DebateRoles)
		}
	}
	if c.Generator.MaxLLMCalls < 0 {
		return invalid("campaign.generator.max_llm_calls", "%d is negative", c.Generator.MaxLLMCalls)
	}
	if c.Generator.MaxLLMTokens < 0 {
		return invalid("campaign.generator.max_llm_tokens", "%d is negative", c.Generator.MaxLLMTokens)
	}
	for _, f := range []struct {
		name     string
		v, lo, h int
	}{
		{"islands", c.Islands, 1, MaxIslands},
		{"budget", c.Budget, 1, MaxBudget},
		{"episodes", c.Episodes, 1, 1000},
		{"batch_size", c.BatchSize, 1, MaxBatchSize},
		{"top_k", c.TopK, 1, 32},
		{"rules_per_prompt", c.RulesPerPrompt, 0, 64},
		{"pool_size", c.PoolSize, 1, 10000},
		{"max_in_flight", c.MaxInFlight, 1, 10000},
		{"reflection_window", c.ReflectionWindow, 0, 100},
	} {
		if f.v < f.lo || f.v > f.h {
			return invalid("campaign."+f.name, "%d outside [%d, %d]", f.v, f.lo, f.h)
		}
	}
	if c.Ordered && c.MaxInFlight != 1 {
		return invalid("campaign.max_in_flight", "%d: an ordered campaign runs one generation at a time", c.MaxInFlight)
	}
	if c.Episodes > c.Budget {
		return invalid("campaign.episodes", "%d episodes for a budget of %d evaluations", c.Episodes, c.Budget)
	}
	if t := c.StabilityThreshold; !(t > 0) || t > 10 {
		return invalid("campaign.stability_threshold", "%v eV/atom outside (0, 10]", t)
	}
	if k := c.ConfidenceK; !(k > 0) || k > 10 {
		return invalid("campaign.confidence_k", "%v outside (0, 10]", k)
	}
	switch c.Oracle {
	case OracleScreen, OracleRelax:
	default:
		return invalid("campaign.oracle", "%q, want %q or %q", c.Oracle, OracleScreen, OracleRelax)
	}
	if t := c.Screen.MaxEAboveHull; !(t > 0) || t > 10 {
		return invalid("campaign.screen.max_e_above_hull", "%v eV/atom outside (0, 10]", t)
	}
	if m := c.Screen.Multiple(); !(m >= 0) || m > 10 {
		return invalid("campaign.screen.error_multiple", "%v outside [0, 10]", m)
	}
	if c.MemoryContext != "" && !campaignIDPattern.MatchString(c.MemoryContext) {
		return invalid("campaign.memory_context", "%q: want letters, digits, '-' or '_'", c.MemoryContext)
	}
	return nil
}

// MsgID is the submission's deterministic message id.
func (c *CampaignSpec) MsgID() string { return "submit/" + c.ID }

// EpisodeBudget returns the evaluations of episode e (0-based): the budget
// split as evenly as possible, earlier episodes taking the remainder.
func (c *CampaignSpec) EpisodeBudget(e int) int {
	n := c.Budget / c.Episodes
	if e < c.Budget%c.Episodes {
		n++
	}
	return n
}

// EpisodeOf returns the episode that the evaluation with the given 0-based
// index (in order of counting) belongs to.
func (c *CampaignSpec) EpisodeOf(index int) int {
	for e := 0; e < c.Episodes; e++ {
		if index < c.EpisodeBudget(e) {
			return e
		}
		index -= c.EpisodeBudget(e)
	}
	return c.Episodes - 1
}

// EffectiveConfidenceK is ConfidenceK, DefaultConfidenceK when it is not
// set (a spec from before the field).
func (c *CampaignSpec) EffectiveConfidenceK() float64 {
	if c == nil || !(c.ConfidenceK > 0) {
		return DefaultConfidenceK
	}
	return c.ConfidenceK
}
