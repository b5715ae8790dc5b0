package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The debate's system prompts begin so (pkg/debate's role prompts,
// llm.DebateJudgeMarker).
const (
	debateRoleMarker  = "You are one of four role agents in Crucible's debate judge"
	debateJudgeMarker = "You are the judge of Crucible's debate"
)

// IsDebate reports whether a request is a debate role's or judge's.
func IsDebate(req Request) bool {
	return strings.HasPrefix(req.System, debateRoleMarker) || strings.HasPrefix(req.System, debateJudgeMarker)
}

// Debater answers the debate's exchanges as a tool-using model would: a
// role first calls every tool it is offered (one turn of function calls),
// then states a position read off the results — oppose on a known
// compound, an ordered mixture, a seed, a metal, a missed bound, an
// energy above the threshold or a hull outlier; uncertain on a margin
// under k σ; support otherwise — quoting each result as evidence. The
// judge rejects on any opposition, asks for a calculation when
// thermodynamics or property confidence is uncertain, and rules a
// discovery otherwise.
func Debater() func(Request) Reply {
	return func(req Request) Reply {
		if strings.HasPrefix(req.System, debateJudgeMarker) {
			return judgeReply(req)
		}
		if len(req.ToolResults) == 0 && len(req.Tools) > 0 {
			calls := make([]ToolCall, len(req.Tools))
			for i, t := range req.Tools {
				calls[i] = ToolCall{ID: fmt.Sprintf("call_%d_%s", i, t), Name: t, Arguments: "{}"}
			}
			return Reply{ToolCalls: calls, PromptTokens: tokens(req.System + req.User), CompletionTokens: 12 * len(calls)}
		}
		return roleReply(req)
	}
}

func tokens(s string) int { return len(s)/4 + 1 }

func roleReply(req Request) Reply {
	position, confidence := "support", 0.8
	var evidence []string
	size := len(req.System) + len(req.User)
	for _, tr := range req.ToolResults {
		size += len(tr.Content)
		var r map[string]any
		if json.Unmarshal([]byte(tr.Content), &r) != nil {
			continue
		}
		quote := tr.Content
		if len(quote) > 160 {
			quote = quote[:160] + "…"
		}
		evidence = append(evidence, quote)
		p := judgeResult(r)
		switch {
		case p == "oppose":
			position, confidence = "oppose", 0.9
		case p == "uncertain" && position == "support":
			position, confidence = "uncertain", 0.6
		}
	}
	if len(evidence) == 0 {
		evidence = []string{"no tool results to go on"}
		position, confidence = "uncertain", 0.3
	}
	b, _ := json.Marshal(map[string]any{"position": position, "confidence": confidence, "evidence": evidence,
		"argument": "Read off the tool results: " + position + "."})
	return Reply{Content: string(b), PromptTokens: tokens(strings.Repeat("x", size)), CompletionTokens: tokens(string(b))}
}

// judgeResult is a careful model's reading of one tool result.
func judgeResult(r map[string]any) string {
	num := func(m map[string]any, k string) (float64, bool) {
		v, ok := m[k].(float64)
		return v, ok
	}
	switch r["class"] {
	case "ordered_mixture", "known_structure", "known_formula":
		return "oppose"
	}
	if r["seed"] == true || r["hull_outlier"] == true {
		return "oppose"
	}
	if e, ok := num(r, "e_above_hull"); ok {
		if t, ok := num(r, "stability_threshold"); ok && e > t {
			return "oppose"
		}
	}
	k, _ := num(r, "k")
	if m, ok := num(r, "margin_sigma"); ok && m < k {
		return "uncertain"
	}
	out := ""
	if ms, ok := r["margins"].([]any); ok {
		for _, x := range ms {
			m, _ := x.(map[string]any)
			if m["metallic"] == true || m["missing"] == true {
				return "oppose"
			}
			if v, ok := num(m, "margin"); ok && v < 0 {
				return "oppose"
			}
			if m["clears_k"] == false {
				out = "uncertain"
			}
		}
	}
	return out
}

func judgeReply(req Request) Reply {
	var in struct {
		Positions []struct {
			Role     string   `json:"role"`
			Position string   `json:"position"`
			Evidence []string `json:"evidence"`
		} `json:"positions"`
	}
	_ = json.Unmarshal([]byte(req.User), &in)
	verdict, reasons := "discovery", []string{}
	for _, p := range in.Positions {
		e := ""
		if len(p.Evidence) > 0 {
			e = p.Evidence[0]
		}
		switch {
		case p.Position == "oppose":
			verdict, reasons = "reject", append(reasons, p.Role+" opposes: "+e)
		case p.Position == "uncertain" && (p.Role == "thermodynamics" || p.Role == "property_confidence") && verdict == "discovery":
			verdict, reasons = "needs-calculation", append(reasons, p.Role+" is uncertain: "+e)
		}
	}
	b, _ := json.Marshal(map[string]any{"verdict": verdict, "confidence": 0.8, "rationale": fmt.Sprintf("The judge weighed %d positions and rules %s.", len(in.Positions), verdict), "reasons": reasons})
	return Reply{Content: string(b), PromptTokens: tokens(req.System + req.User), CompletionTokens: tokens(string(b))}
}
