package debate

import (
	"fmt"
	"strings"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// Text writes a debate for people: the verdict, the report, then each
// round's positions with their evidence and tool calls.
func Text(d *messages.Debate, formula, id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Debate on %s (%s), transcript %s, %s mode, judge %s\n", formula, id, d.TranscriptID, d.Mode, d.Judge)
	fmt.Fprintf(&b, "Verdict: %s (confidence %.2f) after %d round(s)", strings.ToUpper(d.Verdict), d.Confidence, len(d.Rounds))
	if d.Converged {
		b.WriteString(", agreement settled")
	}
	b.WriteString("\n")
	if d.JudgeFallback != "" {
		b.WriteString("The rules judge stood in for the model: " + d.JudgeFallback + "\n")
	}
	if d.Calls > 0 {
		fmt.Fprintf(&b, "LLM: %d call(s), %d prompt + %d completion tokens\n", d.Calls, d.PromptTokens, d.CompletionTokens)
	}
	r := d.Report
	b.WriteString("\nRationale: " + r.Rationale + "\n")
	b.WriteString("\nRoles:\n")
	for _, s := range r.Roles {
		fmt.Fprintf(&b, "  %-20s %-9s %.2f  %s\n", s.Role, s.Position, s.Confidence, s.Summary)
	}
	if len(r.KeyNumbers) > 0 {
		b.WriteString("\nKey numbers:\n")
		for _, k := range r.KeyNumbers {
			fmt.Fprintf(&b, "  %-28s %.4g %s\n", k.Name, k.Value, k.Unit)
		}
	}
	if s := r.Synthesis; s != nil {
		fmt.Fprintf(&b, "\nSuggested synthesis: %s (reaction energy %+.3g eV/atom)\n", s.Reaction, s.ReactionEnergy)
		if len(s.Flags) > 0 {
			b.WriteString("  hazards: " + strings.Join(s.Flags, "; ") + "\n")
		}
	}
	b.WriteString("\nNext calculation: " + r.NextCalculation + "\n")
	for _, rd := range d.Rounds {
		fmt.Fprintf(&b, "\nRound %d (agreement %.3f)\n", rd.Round, rd.Agreement)
		for _, p := range rd.Positions {
			fmt.Fprintf(&b, "  %s: %s %.2f [%s]\n", p.Role, p.Position, p.Confidence, p.Agent)
			if p.Fallback != "" {
				b.WriteString("    fallback to rules: " + p.Fallback + "\n")
			}
			for _, e := range p.Evidence {
				b.WriteString("    - " + e + "\n")
			}
			for _, tc := range p.ToolCalls {
				res := string(tc.Result)
				if tc.Error != "" {
					res = "error: " + tc.Error
				}
				if len(res) > 240 {
					res = res[:240] + "…"
				}
				fmt.Fprintf(&b, "    > %s(%s) = %s\n", tc.Tool, tc.Arguments, res)
			}
		}
	}
	return b.String()
}
