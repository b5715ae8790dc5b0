package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	openai "github.com/sashabaranov/go-openai"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// DebateJudgeMarker begins the debate judge's system prompt.
const DebateJudgeMarker = "You are the judge of Crucible's debate"

// Debate exchanges' settings: a low temperature (the roles argue from
// numbers), a bound on the tool turns of one role's turn, and on the text
// of an exchange kept in a transcript.
const (
	debateTemperature = 0.2
	maxToolTurns      = 4
	maxExchangeText   = 8 << 10
)

// DebateAgents are a campaign's LLM roles and judge (debate llm): each
// role a model (judge.role_models, else judge.model, else the generator's
// or the client's) that calls its role's tools through OpenAI function
// calling, each request counted against the campaign's LLM call budget.
func DebateAgents(c *Client, s *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
	model := func(role string) string {
		for _, m := range []string{spec.Judge.RoleModels[role], spec.Judge.Model, spec.Generator.Model, c.cfg.Model} {
			if m != "" {
				return m
			}
		}
		return ""
	}
	agents := map[string]debate.Agent{}
	for _, r := range debate.Roles() {
		agents[r.Name] = &debateAgent{c: c, s: s, spec: spec, model: model(r.Name)}
	}
	return agents, &debateAgent{c: c, s: s, spec: spec, model: model("")}
}

type debateAgent struct {
	c     *Client
	s     *store.Store
	spec  *messages.CampaignSpec
	model string
}

// turnPrompt is what a role reads: the hit, the task, the round and the
// positions of the previous round.
type turnPrompt struct {
	Candidate string                  `json:"candidate"`
	Formula   string                  `json:"formula"`
	Task      string                  `json:"task"`
	Goal      []string                `json:"constraints"`
	Round     int                     `json:"round"`
	Previous  *messages.RolePosition  `json:"your_previous_position,omitempty"`
	Others    []messages.RolePosition `json:"other_roles_previous_positions,omitempty"`
}

// positionAnswer is a role's answer, read strictly.
type positionAnswer struct {
	Position   string   `json:"position"`
	Confidence *float64 `json:"confidence"`
	Evidence   []string `json:"evidence"`
	Argument   string   `json:"argument"`
}

func (a *debateAgent) Argue(ctx context.Context, t debate.Turn) (messages.RolePosition, debate.Usage, error) {
	tp := turnPrompt{Candidate: t.Case.Evaluation.ID, Formula: t.Case.Evaluation.Candidate.Formula, Task: a.spec.Task.Name,
		Round: t.Round, Previous: brief(t.Previous), Others: briefs(t.Others)}
	for _, c := range a.spec.Task.Constraints {
		tp.Goal = append(tp.Goal, c.String())
	}
	user, err := json.Marshal(tp)
	if err != nil {
		return messages.RolePosition{}, debate.Usage{}, err
	}
	var tools []openai.Tool
	for _, name := range t.Role.Tools {
		if tool, ok := debate.ToolByName(name); ok {
			tools = append(tools, tool.Definition())
		}
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: t.Role.Prompt},
		{Role: openai.ChatMessageRoleUser, Content: "Round " + fmt.Sprint(t.Round) + ". " + string(user)},
	}
	var use debate.Usage
	var calls []messages.ToolCall
	for step := 0; step <= maxToolTurns; step++ {
		reply, ex, err := a.exchange(ctx, t.Role.Name, t.Round, msgs, tools)
		use.Calls += reply.Requests
		use.PromptTokens += reply.PromptTokens
		use.CompletionTokens += reply.CompletionTokens
		use.Exchanges = append(use.Exchanges, ex)
		if err != nil {
			return messages.RolePosition{}, use, err
		}
		if len(reply.Message.ToolCalls) == 0 {
			pos, err := readPosition(reply.Message.Content)
			if err != nil {
				return messages.RolePosition{}, use, err
			}
			pos.ToolCalls, pos.Agent = calls, "llm:"+a.model
			return pos, use, nil
		}
		if step == maxToolTurns {
			break
		}
		msgs = append(msgs, reply.Message)
		for _, tc := range reply.Message.ToolCalls {
			var rec messages.ToolCall
			if slices.Contains(t.Role.Tools, tc.Function.Name) {
				rec = t.Tools.Call(ctx, tc.Function.Name, json.RawMessage(tc.Function.Arguments))
			} else {
				rec = messages.ToolCall{Tool: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments),
					Error: fmt.Sprintf("%q is not a tool of the %s role (its tools: %v)", tc.Function.Name, t.Role.Name, t.Role.Tools)}
			}
			calls = append(calls, rec)
			content := string(rec.Result)
			if rec.Error != "" {
				b, _ := json.Marshal(map[string]string{"error": rec.Error})
				content = string(b)
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: content, ToolCallID: tc.ID, Name: tc.Function.Name})
		}
	}
	return messages.RolePosition{}, use, fmt.Errorf("no position after %d tool turns", maxToolTurns)
}

// exchange sends one turn and describes it for the transcript.
func (a *debateAgent) exchange(ctx context.Context, role string, round int, msgs []openai.ChatCompletionMessage, tools []openai.Tool) (*ChatReply, debate.Exchange, error) {
	reply, err := a.c.Chat(ctx, ChatRequest{Model: a.model, Temperature: debateTemperature, Messages: msgs, Tools: tools,
		Reserve: reserveCall(a.s, a.spec, true), Release: releaseCall(a.s, a.spec, true)})
	if err == nil && a.s != nil {
		// An answered exchange's tokens (Chat has them only then) count
		// toward the campaign's max_llm_tokens like its proposals' and
		// reflections'.
		err = a.s.AddDebateUsage(ctx, a.spec.ID, 1, reply.PromptTokens, reply.CompletionTokens)
	}
	last := msgs[len(msgs)-1]
	ex := debate.Exchange{Role: role, Round: round, Model: a.model, Prompt: clip(string(last.Role)+": "+last.Content, maxExchangeText)}
	if reply == nil {
		reply = &ChatReply{}
	}
	ex.PromptTokens, ex.CompletionTokens = reply.PromptTokens, reply.CompletionTokens
	if err != nil {
		ex.Error = err.Error()
		return reply, ex, err
	}
	ex.Answer = clip(reply.Message.Content, maxExchangeText)
	for _, tc := range reply.Message.ToolCalls {
		ex.ToolCalls = append(ex.ToolCalls, tc.Function.Name)
	}
	return reply, ex, nil
}

// brief is a position without its tool calls (the others read the
// evidence, not the raw results).
func brief(p *messages.RolePosition) *messages.RolePosition {
	if p == nil {
		return nil
	}
	b := *p
	b.ToolCalls = nil
	return &b
}

func briefs(ps []messages.RolePosition) []messages.RolePosition {
	out := make([]messages.RolePosition, len(ps))
	for i := range ps {
		out[i] = *brief(&ps[i])
	}
	return out
}

// readPosition reads a role's answer: a known position, a confidence in
// [0, 1] and at least one piece of evidence; an unknown key is an error.
func readPosition(content string) (messages.RolePosition, error) {
	var a positionAnswer
	if err := decodeFirstObject(content, &a, true); err != nil {
		return messages.RolePosition{}, err
	}
	switch a.Position {
	case messages.PositionSupport, messages.PositionOppose, messages.PositionUncertain:
	default:
		return messages.RolePosition{}, fmt.Errorf("position %q is none of support, oppose, uncertain", a.Position)
	}
	if a.Confidence == nil || !(*a.Confidence >= 0 && *a.Confidence <= 1) {
		return messages.RolePosition{}, errors.New("confidence missing or outside [0, 1]")
	}
	if len(a.Evidence) == 0 {
		return messages.RolePosition{}, errors.New("a position without evidence")
	}
	return messages.RolePosition{Position: a.Position, Confidence: math.Round(*a.Confidence*1000) / 1000, Evidence: a.Evidence, Argument: a.Argument}, nil
}

// judgeAnswer is the judge's answer, read strictly.
type judgeAnswer struct {
	Verdict    string   `json:"verdict"`
	Confidence *float64 `json:"confidence"`
	Rationale  string   `json:"rationale"`
	Reasons    []string `json:"reasons"`
}

const judgePrompt = DebateJudgeMarker + ": four role agents (thermodynamics, synthesis, property_confidence, novelty) argued over a stable hit " +
	"of an inorganic-materials discovery campaign, each grounded in tools. Weigh their last positions and evidence and rule: " +
	`"discovery" (a chemist should try to make it), "reject" (a known compound, a mixture of known phases, a metal for a gap task, unstable…), ` +
	`"needs-relaxation" (a screened energy within the screen's error of the threshold) or "needs-calculation" (a value within the calibrated error of its bound). ` +
	`Answer with a JSON object {"verdict": string, "confidence": number in [0,1], "rationale": "one paragraph citing the evidence", "reasons": [short reasons unless a discovery]}.`

// Name is the judge's agent name.
func (a *debateAgent) Name() string { return "llm:" + a.model }

// Consolidate asks the model judge to rule on the debate.
func (a *debateAgent) Consolidate(ctx context.Context, c *debate.Case, d *messages.Debate, _ debate.Ruling) (debate.Ruling, debate.Usage, error) {
	last := d.Rounds[len(d.Rounds)-1]
	in := map[string]any{"candidate": c.Evaluation.ID, "formula": c.Evaluation.Candidate.Formula, "task": a.spec.Task.Name,
		"rounds": len(d.Rounds), "agreement": last.Agreement, "positions": briefs(last.Positions)}
	user, err := json.Marshal(in)
	if err != nil {
		return debate.Ruling{}, debate.Usage{}, err
	}
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: judgePrompt}, {Role: openai.ChatMessageRoleUser, Content: string(user)}}
	reply, ex, err := a.exchange(ctx, "judge", len(d.Rounds), msgs, nil)
	use := debate.Usage{Calls: reply.Requests, PromptTokens: reply.PromptTokens, CompletionTokens: reply.CompletionTokens, Exchanges: []debate.Exchange{ex}}
	if err != nil {
		return debate.Ruling{}, use, err
	}
	var ans judgeAnswer
	if err := decodeFirstObject(reply.Message.Content, &ans, true); err != nil {
		return debate.Ruling{}, use, err
	}
	if !slices.Contains(messages.DebateVerdicts, ans.Verdict) {
		return debate.Ruling{}, use, fmt.Errorf("verdict %q is none of %v", ans.Verdict, messages.DebateVerdicts)
	}
	if ans.Confidence == nil || !(*ans.Confidence >= 0 && *ans.Confidence <= 1) {
		return debate.Ruling{}, use, errors.New("confidence missing or outside [0, 1]")
	}
	return debate.Ruling{Verdict: ans.Verdict, Confidence: *ans.Confidence, Rationale: ans.Rationale, Reasons: ans.Reasons}, use, nil
}
