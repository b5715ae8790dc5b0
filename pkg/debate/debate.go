package debate

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Defaults of Options.
const (
	// DefaultMaxRounds: Materealize debates at most five rounds.
	DefaultMaxRounds = messages.DefaultDebateRounds
	// DefaultEpsilon: the debate has converged when no role changed its
	// position and the agreement moved by less than this between rounds.
	DefaultEpsilon = 0.01
)

// Mode names of a debate (messages.Debate.Mode).
const (
	ModeOffline = messages.DebateOffline
	ModeLLM     = messages.DebateLLM
)

// Agent argues a role's turn in place of its rules: a model calling the
// role's tools. An error makes the debate use the role's rules for the
// turn and record why.
type Agent interface {
	Argue(ctx context.Context, t Turn) (messages.RolePosition, Usage, error)
}

// Turn is what an agent is given: its role, the round, the tools, and
// the others' positions of the previous round.
type Turn struct {
	Role  Role
	Round int
	Case  *Case
	Tools *Toolbox
	// Previous is the role's own position of the previous round (nil in
	// round 1); Others are the other roles' positions of that round.
	Previous *messages.RolePosition
	Others   []messages.RolePosition
}

// Judge consolidates a debate in place of the rules judge. An error makes
// the debate use the rules judge and record why.
type Judge interface {
	Consolidate(ctx context.Context, c *Case, d *messages.Debate, rules Ruling) (Ruling, Usage, error)
	// Name is "llm:<model>".
	Name() string
}

// Ruling is a judge's decision.
type Ruling struct {
	Verdict    string
	Confidence float64
	Rationale  string
	// Reasons are short reasons of a verdict other than discovery.
	Reasons []string
}

// Usage is what an agent's turn cost in LLM exchanges.
type Usage struct {
	Calls, PromptTokens, CompletionTokens int
	// Exchanges are the turn's exchanges for the transcript.
	Exchanges []Exchange
}

// Exchange is one LLM exchange of a debate, for its transcript.
type Exchange struct {
	Role   string `json:"role"`
	Round  int    `json:"round"`
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Answer string `json:"answer,omitempty"`
	// ToolCalls names the tools the answer called.
	ToolCalls        []string `json:"tool_calls,omitempty"`
	Error            string   `json:"error,omitempty"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
}

// Options tune a debate. The zero value is an offline debate of at most
// DefaultMaxRounds rounds.
type Options struct {
	MaxRounds int
	Epsilon   float64
	// Agents replace roles' rules by name; Judge replaces the rules judge.
	Agents map[string]Agent
	Judge  Judge
	// TranscriptID names the debate's transcript.
	TranscriptID string
}

// Transcript is a debate and its LLM exchanges.
type Transcript struct {
	Campaign  string          `json:"campaign"`
	Candidate string          `json:"candidate"`
	Formula   string          `json:"formula"`
	Debate    messages.Debate `json:"debate"`
	Exchanges []Exchange      `json:"exchanges,omitempty"`
}

// Run debates a case. Every role calls its tools in round 1 (an agent may
// call more later); each round every role states a position reading the
// others' previous ones; the debate stops when the agreement has settled
// (no position changed and the agreement moved by less than Epsilon) or
// after MaxRounds rounds; then the judge rules and writes the report.
func Run(ctx context.Context, c *Case, o Options) (*Transcript, error) {
	if c == nil || c.Evaluation == nil {
		return nil, fmt.Errorf("debate: no evaluation")
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = DefaultMaxRounds
	}
	if !(o.Epsilon > 0) {
		o.Epsilon = DefaultEpsilon
	}
	box := NewToolbox(c)
	roles := Roles()
	tr := &Transcript{Campaign: c.Evaluation.Campaign, Candidate: c.Evaluation.ID, Formula: c.Evaluation.Candidate.Formula, Debate: messages.Debate{TranscriptID: o.TranscriptID, Mode: ModeOffline, Judge: "rules"}}
	d := &tr.Debate
	if len(o.Agents) > 0 || o.Judge != nil {
		d.Mode = ModeLLM
	}
	// Round 1's tool calls ground every role's rules, whoever argues.
	stances := make(map[string]Stance, len(roles))
	results := make(map[string]map[string]messages.ToolCall, len(roles))
	for _, r := range roles {
		d.Roles = append(d.Roles, r.Name)
		results[r.Name] = map[string]messages.ToolCall{}
		for _, t := range r.Tools {
			results[r.Name][t] = box.Call(ctx, t, nil)
		}
		stances[r.Name] = r.Rules(c, results[r.Name])
	}
	var prev []messages.RolePosition
	for round := 1; round <= o.MaxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := make([]messages.RolePosition, len(roles))
		for i, r := range roles {
			var own *messages.RolePosition
			var others []messages.RolePosition
			if prev != nil {
				own = &prev[i]
				others = append(slices.Clone(prev[:i]), prev[i+1:]...)
			}
			rules := rulesPosition(r, round, stances[r.Name], own, others, results[r.Name])
			cur[i] = rules
			agent := o.Agents[r.Name]
			if agent == nil {
				continue
			}
			pos, use, err := agent.Argue(ctx, Turn{Role: r, Round: round, Case: c, Tools: box, Previous: own, Others: others})
			tr.add(use)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				cur[i].Fallback = err.Error()
				continue
			}
			pos.Role = r.Name
			cur[i] = pos
		}
		d.Rounds = append(d.Rounds, messages.DebateRound{Round: round, Positions: cur, Agreement: Agreement(cur)})
		if prev != nil && settled(prev, cur, d.Rounds[len(d.Rounds)-2].Agreement, d.Rounds[len(d.Rounds)-1].Agreement, o.Epsilon) {
			d.Converged = true
			break
		}
		prev = cur
	}
	ruling := RulesJudge(c, d, stances)
	if o.Judge != nil {
		r, use, err := o.Judge.Consolidate(ctx, c, d, ruling)
		tr.add(use)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			d.JudgeFallback = err.Error()
		default:
			ruling = groundRuling(r, ruling, stances)
			d.Judge = o.Judge.Name()
		}
	}
	d.Verdict, d.Confidence, d.Reasons = ruling.Verdict, ruling.Confidence, ruling.Reasons
	d.Report = report(c, d, ruling, results)
	return tr, nil
}

func (tr *Transcript) add(u Usage) {
	tr.Debate.Calls += u.Calls
	tr.Debate.PromptTokens += u.PromptTokens
	tr.Debate.CompletionTokens += u.CompletionTokens
	tr.Exchanges = append(tr.Exchanges, u.Exchanges...)
}

// Reasons are the short reasons of a debate's verdict other than
// discovery (none for a discovery).
func (tr *Transcript) Reasons() []string {
	if tr.Debate.Verdict == messages.DebateDiscovery {
		return nil
	}
	if len(tr.Debate.Reasons) == 0 {
		return []string{tr.Debate.Verdict}
	}
	return tr.Debate.Reasons
}

// Agreement is a round's agreement score: the confidence-weighted share
// of its most held position, max_p Σ_{i at p} c_i / Σ_i c_i, in [1/3, 1]
// for three positions (1 when all agree).
func Agreement(ps []messages.RolePosition) float64 {
	by := map[string]float64{}
	total := 0.0
	for _, p := range ps {
		by[p.Position] += p.Confidence
		total += p.Confidence
	}
	if total == 0 {
		return 0
	}
	best := 0.0
	for _, w := range by {
		best = math.Max(best, w)
	}
	return best / total
}

func settled(prev, cur []messages.RolePosition, a0, a1, eps float64) bool {
	for i := range cur {
		if prev[i].Position != cur[i].Position {
			return false
		}
	}
	return math.Abs(a1-a0) < eps
}

// strong is the confidence from which an opposition weighs on the others.
const strong = 0.75

// rulesPosition is the role's offline position in a round: its stance
// from its tools in round 1; later, revised on the others' previous
// positions:
//
//   - a role that supports while another opposes strongly keeps its own
//     evidence but vouches less: its confidence falls by 0.15 a round, to
//     no less than 0.35;
//   - synthesis turns uncertain when thermodynamics or novelty opposes
//     strongly (there is no point in a route to an unstable or known
//     phase), and caps its support at 0.5 while thermodynamics is
//     uncertain;
//   - when every other role holds the same position, a role holding it
//     too gains 0.05 a round, up to 0.1 over its first confidence.
func rulesPosition(r Role, round int, st Stance, own *messages.RolePosition, others []messages.RolePosition, results map[string]messages.ToolCall) messages.RolePosition {
	p := messages.RolePosition{Role: r.Name, Position: st.Position, Confidence: st.Confidence, Evidence: slices.Clone(st.Evidence), Agent: "rules"}
	if own == nil {
		for _, t := range r.Tools {
			p.ToolCalls = append(p.ToolCalls, results[t])
		}
		p.Argument = argument(r.Name, st)
		return p
	}
	p.Position, p.Confidence = own.Position, own.Confidence
	if own.Agent != "rules" {
		// After a model's turn the rules restart from their own stance.
		p.Position, p.Confidence = st.Position, st.Confidence
	}
	var objections []string
	unanimous := true
	for _, o := range others {
		if o.Position != p.Position {
			unanimous = false
		}
		if o.Position == messages.PositionOppose && o.Confidence >= strong && len(o.Evidence) > 0 {
			objections = append(objections, o.Role+" objects: "+o.Evidence[0])
		}
	}
	if r.Name == messages.RoleSynthesis {
		for _, o := range others {
			if (o.Role == messages.RoleThermodynamics || o.Role == messages.RoleNovelty) && o.Position == messages.PositionOppose && o.Confidence >= strong {
				if p.Position == messages.PositionSupport {
					p.Position, p.Confidence = messages.PositionUncertain, 0.5
				}
			}
			if o.Role == messages.RoleThermodynamics && o.Position == messages.PositionUncertain && p.Position == messages.PositionSupport {
				p.Confidence = math.Min(p.Confidence, 0.5)
			}
		}
	}
	switch {
	case p.Position == messages.PositionSupport && len(objections) > 0:
		p.Confidence = math.Max(0.35, p.Confidence-0.15)
	case unanimous && len(others) > 0:
		p.Confidence = math.Min(math.Min(0.95, st.Confidence+0.1), p.Confidence+0.05)
	}
	p.Confidence = math.Round(p.Confidence*1000) / 1000
	p.Evidence = append(p.Evidence, objections...)
	p.Argument = argument(r.Name, Stance{Position: p.Position, Confidence: p.Confidence, Evidence: st.Evidence})
	if len(objections) > 0 {
		p.Argument += fmt.Sprintf(" Read %d objection(s) of the other roles.", len(objections))
	}
	return p
}

func argument(role string, st Stance) string {
	verb := map[string]string{messages.PositionSupport: "supports", messages.PositionOppose: "opposes", messages.PositionUncertain: "is uncertain"}[st.Position]
	s := fmt.Sprintf("%s %s (confidence %.2f)", role, verb, st.Confidence)
	if len(st.Evidence) > 0 {
		s += ": " + st.Evidence[0]
	}
	return s + "."
}
