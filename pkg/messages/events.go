package messages

import (
	"strconv"
	"time"
)

// Check is one tool-grounded check of the judge, with the evidence.
type Check struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// Verdict is the judge's decision on a feasible, stable candidate. An
// accepted verdict is a discovery and is published on
// crucible.discoveries.<campaign>; a rejected one on
// crucible.verdicts.<campaign>.
type Verdict struct {
	Schema   int     `json:"schema"`
	ID       string  `json:"id"` // the candidate's id
	Campaign string  `json:"campaign"`
	Formula  string  `json:"formula"`
	Accepted bool    `json:"accepted"`
	Checks   []Check `json:"checks"`
	// Reasons summarise the failed checks of a rejected verdict.
	Reasons []string `json:"reasons,omitempty"`
	// Report is the judge's consolidated report in words.
	Report     string     `json:"report"`
	Evaluation Evaluation `json:"evaluation"`
	// JudgedBy is JudgedByDebate or JudgedByRules ("" in records of older
	// builds: rules); JudgedNote says why rules judged a hit that could
	// have been debated (the debate budget spent, debates off).
	JudgedBy   string `json:"judged_by,omitempty"`
	JudgedNote string `json:"judged_note,omitempty"`
	// Debate is the debate that decided (JudgedByDebate).
	Debate   *Debate   `json:"debate,omitempty"`
	JudgedAt time.Time `json:"judged_at"`
}

// MsgID is the verdict's deterministic message id.
func (v *Verdict) MsgID() string { return "verdict/" + v.ID }

// Subject is where the verdict is published.
func (v *Verdict) Subject() string {
	if v.Accepted {
		return Subject(SubjectDiscoveries, v.Campaign)
	}
	return Subject(SubjectVerdicts, v.Campaign)
}

// Validate names the bad field.
func (v *Verdict) Validate() error {
	if err := checkSchema("verdict", v.Schema); err != nil {
		return err
	}
	if err := v.Evaluation.Validate(); err != nil {
		return err
	}
	if v.ID != v.Evaluation.ID || v.Campaign != v.Evaluation.Campaign {
		return invalid("verdict.id", "%q/%q differs from its evaluation %q/%q", v.ID, v.Campaign, v.Evaluation.ID, v.Evaluation.Campaign)
	}
	if len(v.Checks) == 0 {
		return invalid("verdict.checks", "empty")
	}
	if !v.Accepted && len(v.Reasons) == 0 {
		return invalid("verdict.reasons", "a rejection needs a reason")
	}
	if v.Debate != nil {
		if err := v.Debate.Validate(); err != nil {
			return err
		}
		if v.Accepted != (v.Debate.Verdict == DebateDiscovery) {
			return invalid("verdict.accepted", "%v with a debate verdict %q", v.Accepted, v.Debate.Verdict)
		}
	}
	return nil
}

// Campaign states.
const (
	StateRunning   = "running"
	StateCompleted = "completed"
	// StateExhausted: the generator stopped finding new candidates before
	// the budget was spent.
	StateExhausted = "exhausted"
	// StateRejected: the submission was invalid; Message says why.
	StateRejected = "rejected"
	// StateEpisode: an episode ended and its reflection was written.
	StateEpisode = "episode_completed"
	// StatePaused: crucible campaign pause stopped new generations; the
	// generations in flight finish, and resume continues from there.
	StatePaused = "paused"
	// StateCancelled: crucible campaign cancel stopped new generations;
	// the campaign finishes, with its summary, once the generations in
	// flight are evaluated.
	StateCancelled = "cancelled"
)

// Finished reports whether state is a final state: the campaign requests
// no more generations (extend restarts a completed or exhausted one).
func Finished(state string) bool {
	switch state {
	case StateCompleted, StateExhausted, StateCancelled, StateRejected:
		return true
	}
	return false
}

// EndsWhenDrained reports whether a campaign in state finishes once its
// generations in flight are done (exhausted, cancelled) rather than when
// its budget is spent.
func EndsWhenDrained(state string) bool {
	return state == StateExhausted || state == StateCancelled
}

// Counters are a campaign's running totals. Seeds are counted only in
// Seeds; every other counter covers proposed candidates only.
type Counters struct {
	// Proposed counts candidates published for evaluation.
	Proposed    int `json:"proposed"`
	Evaluated   int `json:"evaluated"`
	Valid       int `json:"valid"`
	Hits        int `json:"hits"`
	Stable      int `json:"stable"`
	StableHits  int `json:"stable_hits"`
	Novel       int `json:"novel"`
	Known       int `json:"known"`
	Seeds       int `json:"seeds"`
	Generations int `json:"generations"`
	// EmptyGenerations produced no publishable candidate.
	EmptyGenerations int `json:"empty_generations"`
	// Rejected counts candidates a generator produced but the proposer did
	// not publish (invalid, against the task's rules or a directive, a
	// duplicate); a generator's failure to answer is no candidate.
	Rejected int `json:"proposals_rejected"`
	// RejectedKnown counts those of them whose reduced formula is in the
	// reference data (memorisation before filtering, LLEMA §4.2).
	RejectedKnown int `json:"proposals_rejected_known"`
	Discoveries   int `json:"discoveries"`
	// JudgeRejected counts the judge's rejections (verdicts.jsonl).
	JudgeRejected    int `json:"judge_rejected"`
	LLMCalls         int `json:"llm_calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// LLMRequests counts every LLM request sent, retries after rate limits
	// and failures included (what a campaign's max_llm_calls bounds);
	// LLMCalls only the completions that answered, with their tokens (the
	// server's usage, or estimates).
	LLMRequests int `json:"llm_requests,omitempty"`
}

// ParetoPoint is a candidate on the campaign's Pareto front: its raw
// values of the task's properties (the front's coordinates), its
// constraint margins and score.
type ParetoPoint struct {
	ID         string             `json:"id"`
	Formula    string             `json:"formula"`
	Values     map[string]float64 `json:"values"`
	EAboveHull *float64           `json:"e_above_hull,omitempty"`
	Margins    map[string]float64 `json:"margins"`
	Score      float64            `json:"score"`
}

// ParetoObjective is an axis of the Pareto front: a property and which
// way is better ("max", "min", or "target": closest to Target).
type ParetoObjective struct {
	Property string  `json:"property"`
	Sense    string  `json:"sense"`
	Target   float64 `json:"target,omitempty"`
}

// EpisodeYield is MADE's discovery yield of one episode (§4.4): its budget,
// the queries it spent, its new stable discoveries and their AUDC and SDE
// over the episode's budget.
type EpisodeYield struct {
	Episode   int     `json:"episode"`
	Budget    int     `json:"budget"`
	Evaluated int     `json:"evaluated"`
	NStable   int     `json:"n_stable"`
	AUDC      float64 `json:"audc"`
	SDE       float64 `json:"sde"`
}

// Summary is the final account of a campaign (LLEMA §3.2, §4.2 and MADE
// §4.4 metrics). docs/summary.md documents every field.
type Summary struct {
	Campaign  string `json:"campaign"`
	Task      string `json:"task"`
	Generator string `json:"generator"`
	// SubmittedBy is the NATS user that submitted the campaign
	// (CampaignSpec.SubmittedBy); "" without one.
	SubmittedBy string `json:"submitted_by,omitempty"`
	State       string `json:"state"`
	Counters
	// Generated = Proposed + Rejected: every candidate a generator
	// produced, published or not (LLEMA's denominator).
	Generated int `json:"generated"`
	// HitRate = hits / evaluated; StabilityRate = stable hits / evaluated
	// (LLEMA's "stability": hits with E_hull below the threshold).
	HitRate       float64 `json:"hit_rate"`
	StabilityRate float64 `json:"stability_rate"`
	// MemorizationRate = candidates whose formula is in the reference data
	// / evaluated.
	MemorizationRate float64 `json:"memorization_rate"`
	// The same rates over every generated candidate, as LLEMA reports
	// them (§4.2): a rejected proposal counts as generated and not a hit,
	// and as memorised when its formula is known.
	HitRateGenerated          float64 `json:"hit_rate_generated"`
	StabilityRateGenerated    float64 `json:"stability_rate_generated"`
	MemorizationRateGenerated float64 `json:"memorization_rate_generated"`
	// MemorizationByGeneration is the memorisation rate of each generation
	// with evaluations, in order (LLEMA Fig. 4 and Fig. 7); a campaign of
	// more generations than fit a status message reports consecutive
	// blocks of generations instead.
	MemorizationByGeneration []float64 `json:"memorization_by_generation,omitempty"`
	UniqueCompositions       int       `json:"unique_compositions"`
	// NStable is MADE's N_stable: novel candidates within the stability
	// threshold of the hull.
	NStable int `json:"n_stable"`
	// Budget is the campaign's budget of evaluations, extensions included.
	Budget int `json:"budget"`
	// DiscoveryCurve is the discovery curve: the evaluation indices (from
	// 1) at which the N_stable count grew, in order (MADE §4.4).
	DiscoveryCurve []int `json:"discovery_curve"`
	// SDE = N_stable / budget (MADE §4.4).
	SDE float64 `json:"sde"`
	// AUDC is the area under the discovery curve over the budget,
	// normalised by B²/2: in [0, 1] (MADE §4.4).
	AUDC float64 `json:"audc"`
	// Episodes are the per-episode yields; LearningSlope the least-squares
	// slope of their N_stable against the episode index, null with fewer
	// than two episodes.
	Episodes       []EpisodeYield `json:"episodes"`
	LearningSlope  *float64       `json:"learning_slope"`
	MeanEAboveHull float64        `json:"mean_e_above_hull"`
	// SpaceGroups is the number of distinct space groups among the valid
	// evaluated candidates; SpaceGroupEntropy the Shannon entropy (nats) of
	// their distribution over the groups, MADE's space-group entropy of
	// the structures the campaign added to the known set (§4.4);
	// SpaceGroupEntropyStable the same over the N_stable candidates.
	SpaceGroups             int     `json:"space_groups"`
	SpaceGroupEntropy       float64 `json:"space_group_entropy"`
	SpaceGroupEntropyStable float64 `json:"space_group_entropy_stable"`
	// ParetoObjectives are the front's axes, from the task's constraints;
	// ParetoFront the novel hits no other novel hit dominates on them.
	// Judged counts the candidates the judge weighed (feasible and stable
	// proposed candidates, and hull outliers) by "decision/class": the
	// decision accepted or rejected, the class the evaluation's novelty
	// class (new, new_polymorph, known_formula, known_structure,
	// ordered_mixture), or below_hull for a hull outlier (a likely
	// surrogate error), or unclassified. Empty classes are left out.
	Judged           map[string]int    `json:"judged,omitempty"`
	ParetoObjectives []ParetoObjective `json:"pareto_objectives"`
	ParetoFront      []ParetoPoint     `json:"pareto_front"`
	TokensPerHit     float64           `json:"tokens_per_hit,omitempty"`
	TokensPerStable  float64           `json:"tokens_per_stable,omitempty"`
	WallSeconds      float64           `json:"wall_seconds"`
	// PromptTokensPerCall and CompletionTokensPerCall are the LLM's mean
	// tokens per answered call (LLEMA Table 10 reports 563 and 176).
	PromptTokensPerCall     float64 `json:"prompt_tokens_per_call,omitempty"`
	CompletionTokensPerCall float64 `json:"completion_tokens_per_call,omitempty"`
}

// Status is a campaign status event.
type Status struct {
	Schema   int      `json:"schema"`
	Campaign string   `json:"campaign"`
	State    string   `json:"state"`
	Episode  int      `json:"episode"`
	Message  string   `json:"message,omitempty"`
	Counters Counters `json:"counters"`
	Summary  *Summary `json:"summary,omitempty"`
	// Control is the id of the control action (Control.ID) that caused
	// the event: a pause, a resume, an extension or a cancellation.
	Control string    `json:"control,omitempty"`
	At      time.Time `json:"at"`
}

// MsgID is the event's deterministic message id: one event per campaign,
// state and episode, per control action, and for a final state per
// number of evaluations (an extended campaign finishes again, later).
func (s *Status) MsgID() string {
	id := "status/" + s.Campaign + "/" + s.State + "/" + strconv.Itoa(s.Episode)
	if s.Control != "" {
		id += "/" + s.Control
	}
	if Finished(s.State) && s.State != StateRejected {
		id += "/" + strconv.Itoa(s.Counters.Evaluated)
	}
	return id
}

// Validate names the bad field.
func (s *Status) Validate() error {
	if err := checkSchema("status", s.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(s.Campaign); err != nil {
		return invalid("status.campaign", "%v", err)
	}
	switch s.State {
	case StateRunning, StateCompleted, StateExhausted, StateRejected, StateEpisode, StatePaused, StateCancelled:
	default:
		return invalid("status.state", "unknown state %q", s.State)
	}
	return nil
}

// Directive kinds: rules the proposer enforces on every generator's output
// (MADE §5.2–5.3: advice the actor ignores must be enforced by the
// environment).
const (
	// DirectiveCapComposition: at most Limit candidates of Formula.
	DirectiveCapComposition = "cap_composition"
	// DirectiveExcludeElement: no candidate may contain Element.
	DirectiveExcludeElement = "exclude_element"
	// DirectiveAvoidSystem: no candidate in chemical system System.
	DirectiveAvoidSystem = "avoid_system"
)

// Directive is one machine-enforced rule of a memory bank.
type Directive struct {
	Kind    string `json:"kind"`
	Formula string `json:"formula,omitempty"`
	Element string `json:"element,omitempty"`
	System  string `json:"system,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Reason  string `json:"reason"`
}

// Key identifies the directive within its bank (a later directive with
// the same key replaces an earlier one).
func (d Directive) Key() string {
	return d.Kind + ":" + d.Formula + d.Element + d.System
}

// Reflection is what the reflector learned from an episode: bullets for
// the proposer's prompt and directives for the environment.
type Reflection struct {
	Schema     int         `json:"schema"`
	Campaign   string      `json:"campaign"`
	Context    string      `json:"context"`
	Episode    int         `json:"episode"`
	Bullets    []string    `json:"bullets"`
	Directives []Directive `json:"directives,omitempty"`
	// Mode is the reflector mode that wrote it (rules or llm).
	Mode string `json:"mode,omitempty"`
	// Dropped are the directives the LLM reflector proposed that the
	// evidence does not support, each with why.
	Dropped []DroppedDirective `json:"dropped,omitempty"`
	// RefusedEdits are the memory edits the LLM reflector proposed that
	// failed their checks ("merge sys:O-Zn: merges no lesson of the bank").
	RefusedEdits []string `json:"refused_edits,omitempty"`
	// Fallback says why the rules stand in for the LLM reflector's answer
	// (an endpoint failure, an unusable answer), if they do.
	Fallback string    `json:"fallback,omitempty"`
	At       time.Time `json:"at"`
}

// DroppedDirective is a proposed directive refused, with the reason.
type DroppedDirective struct {
	Directive Directive `json:"directive"`
	Reason    string    `json:"reason"`
}

// MsgID is the reflection's deterministic message id.
func (r *Reflection) MsgID() string {
	return "reflection/" + r.Campaign + "/" + strconv.Itoa(r.Episode)
}

// DeadLetter records a message that no service could process.
type DeadLetter struct {
	Schema     int                 `json:"schema"`
	Stream     string              `json:"stream"`
	Consumer   string              `json:"consumer"`
	Subject    string              `json:"subject"`
	Sequence   uint64              `json:"sequence"`
	Deliveries uint64              `json:"deliveries"`
	Reason     string              `json:"reason"`
	Service    string              `json:"service"`
	Headers    map[string][]string `json:"headers,omitempty"`
	// Data is the message body as received, or its first 64 KiB when it
	// is longer (Truncated): a dead letter must stay publishable whatever
	// the size of the message it records.
	Data []byte `json:"data"`
	// Size is the body's size in bytes.
	Size      int       `json:"size"`
	Truncated bool      `json:"truncated,omitempty"`
	At        time.Time `json:"at"`
}

// MsgID is deterministic per original message — its stream, consumer
// and sequence, and a digest of its body — so that a message dead-lettered
// again after a redelivery has one dead letter. The body is part of it
// because a sequence can name two messages: a NATS server killed before
// it wrote its last messages to disk gives their sequence numbers again
// to new ones, whose dead letters must not be dropped as duplicates of
// the lost ones'.
func (d *DeadLetter) MsgID() string {
	return "deadletter/" + d.Stream + "/" + d.Consumer + "/" + strconv.FormatUint(d.Sequence, 10) + "/" + DigestBytes(d.Data)[:16]
}

// Validate names the bad field.
func (r *Reflection) Validate() error {
	if err := checkSchema("reflection", r.Schema); err != nil {
		return err
	}
	if err := ValidateCampaignID(r.Campaign); err != nil {
		return invalid("reflection.campaign", "%v", err)
	}
	if len(r.Bullets) == 0 {
		return invalid("reflection.bullets", "empty")
	}
	for i, d := range r.Directives {
		if err := d.Validate(); err != nil {
			return invalid("reflection.directives["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	return nil
}

// Validate checks that the directive's kind has the fields it needs.
func (d Directive) Validate() error {
	switch d.Kind {
	case DirectiveCapComposition:
		if d.Formula == "" || d.Limit < 0 {
			return invalid("directive", "%s needs a formula and a limit ≥ 0", d.Kind)
		}
	case DirectiveExcludeElement:
		if d.Element == "" {
			return invalid("directive", "%s needs an element", d.Kind)
		}
	case DirectiveAvoidSystem:
		if d.System == "" {
			return invalid("directive", "%s needs a chemical system", d.Kind)
		}
	default:
		return invalid("directive.kind", "unknown kind %q", d.Kind)
	}
	return nil
}

// Validate names the bad field.
func (d *DeadLetter) Validate() error {
	if err := checkSchema("dead_letter", d.Schema); err != nil {
		return err
	}
	if d.Reason == "" {
		return invalid("dead_letter.reason", "empty")
	}
	if d.Stream == "" {
		return invalid("dead_letter.stream", "empty")
	}
	return nil
}
