package results

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// ReadPrompts reads a prompts.jsonl file, or the one in a directory (a
// local run's result). A line that does not decode is an error naming it.
func ReadPrompts(path string) ([]*messages.Prompt, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "prompts.jsonl")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*messages.Prompt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 4*messages.MaxPromptAnswer+(1<<20))
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var p messages.Prompt
		if err := messages.Decode(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, &p)
	}
	return out, sc.Err()
}

// SortPrompts orders records by generation, attempt and index.
func SortPrompts(ps []*messages.Prompt) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Generation != b.Generation {
			return a.Generation < b.Generation
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		return a.Index < b.Index
	})
}

// WritePromptsJSON writes one record per line, as published.
func WritePromptsJSON(w io.Writer, ps []*messages.Prompt) error {
	enc := json.NewEncoder(w)
	for _, p := range ps {
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	return nil
}

// WritePrompts writes one table row per exchange, or with full each
// exchange's messages and answer, then the mean tokens per answered call.
func WritePrompts(w io.Writer, ps []*messages.Prompt, full bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if !full {
		fmt.Fprintln(tw, "KIND\tGEN\tISLAND\tATTEMPT\tMODEL\tFORMAT\tOUTCOME\tREQUESTS\tPROMPT\tANSWER\tDROPPED\tCANDIDATES\tREJECTED")
	}
	calls, prompt, completion, estimated := 0, 0, 0, false
	for _, p := range ps {
		if p.Outcome == messages.PromptAnswered {
			calls++
			prompt += p.PromptTokens
			completion += p.CompletionTokens
			estimated = estimated || p.TokensEstimated
		}
		tokens := func(n int) string {
			if p.TokensEstimated {
				return fmt.Sprintf("~%d", n)
			}
			return fmt.Sprint(n)
		}
		if full {
			fmt.Fprintf(w, "=== %s, generation %d, island %d, attempt %d, exchange %d: %s, %s, template %s, temperature %g, %s",
				promptKind(p), p.Generation, p.Island, p.Attempt, p.Index, p.Model, p.Format, p.Template, p.Temperature, p.Outcome)
			if p.Error != "" {
				fmt.Fprintf(w, " (%s)", p.Error)
			}
			fmt.Fprintf(w, "\n%d requests, %s prompt + %s completion tokens, %d dropped, %d candidates, %d rejected\n--- system\n%s\n--- user\n%s",
				p.Requests, tokens(p.PromptTokens), tokens(p.CompletionTokens), p.Dropped, p.Candidates, p.Rejected, p.System, p.User)
			if p.Answer != "" {
				fmt.Fprintf(w, "--- answer (finish: %s)\n%s\n", p.FinishReason, p.Answer)
			}
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t%d\n", promptKind(p), p.Generation, p.Island, p.Attempt, p.Model, p.Format,
			p.Outcome, p.Requests, tokens(p.PromptTokens), tokens(p.CompletionTokens), p.Dropped, p.Candidates, p.Rejected)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if calls > 0 {
		mark := ""
		if estimated {
			mark = " (some estimated)"
		}
		fmt.Fprintf(w, "%d exchanges, %d answered: %.0f prompt + %.0f completion tokens per answered call%s\n",
			len(ps), calls, float64(prompt)/float64(calls), float64(completion)/float64(calls), mark)
	}
	return nil
}

// promptKind is an exchange's kind, propose for records without one.
func promptKind(p *messages.Prompt) string {
	switch p.Kind {
	case "":
		return messages.PromptPropose
	case messages.PromptDebate:
		return p.Kind + ":" + p.Role
	}
	return p.Kind
}

// PromptsOfGeneration keeps the prompts of one generation.
func PromptsOfGeneration(prompts []*messages.Prompt, generation int) []*messages.Prompt {
	kept := prompts[:0]
	for _, p := range prompts {
		if p.Generation == generation {
			kept = append(kept, p)
		}
	}
	return kept
}
