package messages

import (
	"encoding/json"
	"slices"
)

// Debate verdicts (Debate.Verdict): what the debate judge concludes of a
// stable hit.
const (
	// DebateDiscovery: a discovery a chemist may spend a synthesis on.
	DebateDiscovery = "discovery"
	// DebateReject: not a discovery (a known compound, a mixture of known
	// phases, a metal for a gap task, unstable…).
	DebateReject = "reject"
	// DebateNeedsRelaxation: a screened hit whose stability is within the
	// screen's error: relax it before deciding.
	DebateNeedsRelaxation = "needs-relaxation"
	// DebateNeedsCalculation: a hit whose stability or property is within
	// the calibrated error of its bound: a first-principles calculation
	// decides.
	DebateNeedsCalculation = "needs-calculation"
)

// DebateVerdicts lists the debate verdicts.
var DebateVerdicts = []string{DebateDiscovery, DebateReject, DebateNeedsRelaxation, DebateNeedsCalculation}

// Debate roles (RolePosition.Role), in the order they speak.
const (
	RoleThermodynamics = "thermodynamics"
	RoleSynthesis      = "synthesis"
	RoleConfidence     = "property_confidence"
	RoleNovelty        = "novelty"
)

// DebateRoles lists the roles.
var DebateRoles = []string{RoleThermodynamics, RoleSynthesis, RoleConfidence, RoleNovelty}

// Positions of a role in a round (RolePosition.Position).
const (
	PositionSupport   = "support"
	PositionOppose    = "oppose"
	PositionUncertain = "uncertain"
)

// Who judged a verdict (Verdict.JudgedBy).
const (
	// JudgedByDebate: the debate decided; Verdict.Debate holds it.
	JudgedByDebate = "debate"
	// JudgedByRules: the rule checks decided (the campaign's debates are
	// off, or its debate budget was spent, or the hit failed a screen
	// check).
	JudgedByRules = "rules"
)

// Debate is a debate over one stable hit: the roles, their positions
// round by round with the tool calls they rest on, and the judge's report.
type Debate struct {
	// TranscriptID names the stored transcript ("<campaign>/<candidate>").
	TranscriptID string `json:"transcript_id"`
	// Mode is "offline" (every role and the judge are rules over the
	// tools' results) or "llm" (roles and judge are models calling the
	// tools; a role that failed fell back to its rules and says so).
	Mode   string        `json:"mode"`
	Roles  []string      `json:"roles"`
	Rounds []DebateRound `json:"rounds"`
	// Converged: the debate stopped because the agreement settled, not at
	// its round limit.
	Converged  bool    `json:"converged"`
	Verdict    string  `json:"verdict"`
	Confidence float64 `json:"confidence"`
	// Reasons are the short reasons of a verdict other than discovery.
	Reasons []string     `json:"reasons,omitempty"`
	Report  DebateReport `json:"report"`
	// Judge is who consolidated the report: "rules" or "llm:<model>";
	// JudgeFallback says why a model judge fell back to the rules.
	Judge         string `json:"judge"`
	JudgeFallback string `json:"judge_fallback,omitempty"`
	// Calls, PromptTokens and CompletionTokens are what the debate cost in
	// LLM exchanges (0 offline).
	Calls            int `json:"calls,omitempty"`
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
}

// DebateRound is one round: every role's position and the round's
// agreement score.
type DebateRound struct {
	Round     int            `json:"round"`
	Positions []RolePosition `json:"positions"`
	// Agreement is the confidence-weighted share of the largest position:
	// max over positions p of Σ confidence of roles at p / Σ confidence.
	Agreement float64 `json:"agreement"`
}

// RolePosition is a role's position in a round.
type RolePosition struct {
	Role       string  `json:"role"`
	Position   string  `json:"position"`
	Confidence float64 `json:"confidence"`
	// Evidence are the facts the position rests on, each quoting a tool's
	// number.
	Evidence []string `json:"evidence"`
	// Argument is the role's statement in words (a model's own words in
	// llm mode).
	Argument  string     `json:"argument,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Agent is "rules" or "llm:<model>"; Fallback says why a model's
	// position was replaced by the rules'.
	Agent    string `json:"agent"`
	Fallback string `json:"fallback,omitempty"`
}

// ToolCall is one call of a debate tool and its result.
type ToolCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// DebateReport is the judge's consolidated report.
type DebateReport struct {
	// Rationale is a paragraph saying why the verdict.
	Rationale string        `json:"rationale"`
	Roles     []RoleSummary `json:"roles"`
	// KeyNumbers are the numbers the verdict rests on.
	KeyNumbers []KeyNumber     `json:"key_numbers"`
	Synthesis  *SynthesisRoute `json:"synthesis,omitempty"`
	// NextCalculation is what a human should run next ("DFT relaxation and
	// phonons; competing phase X within 20 meV/atom").
	NextCalculation string `json:"next_calculation"`
}

// RoleSummary is a role's final position in one sentence.
type RoleSummary struct {
	Role       string  `json:"role"`
	Position   string  `json:"position"`
	Confidence float64 `json:"confidence"`
	Summary    string  `json:"summary"`
}

// KeyNumber is a named number of a report.
type KeyNumber struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// SynthesisRoute is a suggested route from precursors: a reaction
// balanced per formula unit of the candidate and its energy from the hull
// data (negative: the candidate is favoured over the precursors).
type SynthesisRoute struct {
	Precursors []string `json:"precursors"`
	Reaction   string   `json:"reaction"`
	// ReactionEnergy is eV per atom of product.
	ReactionEnergy float64 `json:"reaction_energy_per_atom"`
	// Flags name hazards of the elements (toxic, volatile, air-sensitive).
	Flags []string `json:"flags,omitempty"`
}

// Validate names the bad field.
func (d *Debate) Validate() error {
	if !slices.Contains(DebateVerdicts, d.Verdict) {
		return invalid("debate.verdict", "%q is none of %v", d.Verdict, DebateVerdicts)
	}
	if len(d.Rounds) == 0 {
		return invalid("debate.rounds", "empty")
	}
	for _, r := range d.Rounds {
		for _, p := range r.Positions {
			switch p.Position {
			case PositionSupport, PositionOppose, PositionUncertain:
			default:
				return invalid("debate.rounds[].positions[].position", "%q", p.Position)
			}
		}
	}
	return nil
}
