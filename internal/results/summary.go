package results

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// paretoFormulas lists the front's formulas in order, with the number of
// structures of a formula (polymorphs) on the front when more than one.
func paretoFormulas(front []messages.ParetoPoint) string {
	count := map[string]int{}
	for _, p := range front {
		count[p.Formula]++
	}
	names := make([]string, 0, len(count))
	for f, n := range count {
		if n > 1 {
			f = fmt.Sprintf("%s ×%d", f, n)
		}
		names = append(names, f)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// PrintSummary writes a campaign summary for people to read.
func PrintSummary(w io.Writer, s *messages.Summary) {
	by := ""
	if s.SubmittedBy != "" {
		by = ", submitted by " + s.SubmittedBy
	}
	fmt.Fprintf(w, "campaign %s (%s, generator %s%s): %s\n", s.Campaign, s.Task, s.Generator, by, s.State)
	fmt.Fprintf(w, "  generated %d (evaluated %d, rejected by the proposer %d) · discoveries %d · rejected by the judge %d\n",
		s.Generated, s.Evaluated, s.Rejected, s.Discoveries, s.JudgeRejected)
	fmt.Fprintf(w, "  of generated (LLEMA): hits %.1f%% · stable hits %.1f%% · memorisation %.1f%%\n",
		100*s.HitRateGenerated, 100*s.StabilityRateGenerated, 100*s.MemorizationRateGenerated)
	fmt.Fprintf(w, "  of evaluated:         hits %d (%.1f%%) · stable hits %d (%.1f%%) · memorisation %.1f%%\n",
		s.Hits, 100*s.HitRate, s.StableHits, 100*s.StabilityRate, 100*s.MemorizationRate)
	fmt.Fprintf(w, "  MADE: N_stable %d · SDE %.3f · AUDC %.3f", s.NStable, s.SDE, s.AUDC)
	if s.LearningSlope != nil {
		fmt.Fprintf(w, " · learning slope %+.2f per episode", *s.LearningSlope)
	}
	fmt.Fprintf(w, " · unique compositions %d · mean E_hull %.3f eV/atom\n", s.UniqueCompositions, s.MeanEAboveHull)
	fmt.Fprintf(w, "  space groups: %d · entropy %.3f nats (N_stable's %.3f)\n", s.SpaceGroups, s.SpaceGroupEntropy, s.SpaceGroupEntropyStable)
	if len(s.Judged) > 0 {
		fmt.Fprintf(w, "  judged: %s\n", judgedText(s.Judged))
	}
	if len(s.ParetoFront) > 0 {
		fmt.Fprintf(w, "  Pareto front (%d novel hits): %s\n", len(s.ParetoFront), paretoFormulas(s.ParetoFront))
	}
	if s.LLMCalls > 0 {
		fmt.Fprintf(w, "  LLM: %d calls (%d requests), %d prompt + %d completion tokens, %.0f + %.0f per call",
			s.LLMCalls, s.LLMRequests, s.PromptTokens, s.CompletionTokens, s.PromptTokensPerCall, s.CompletionTokensPerCall)
		if s.TokensPerHit > 0 {
			fmt.Fprintf(w, ", %.0f per hit", s.TokensPerHit)
		}
		if s.TokensPerStable > 0 {
			fmt.Fprintf(w, ", %.0f per stable hit", s.TokensPerStable)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  %.1f s\n", s.WallSeconds)
}

// judgedText writes the judge's counts, "accepted/new 40, rejected/ordered_mixture 12, …".
func judgedText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
