package cli

import (
	"strings"
	"testing"
)

func TestPromptsFromLocalResult(t *testing.T) {
	out, _, err := runCLI(t, "", "prompts", "--from", "testdata/prompts")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	// Sorted by generation, then exchange.
	for i, want := range []string{"KIND", "propose  0 ", "propose  1 ", "propose  1 "} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d %q, want prefix %q", i, lines[i], want)
		}
	}
	for _, want := range []string{"context_length", "~400", "600", "3 exchanges, 2 answered: 500 prompt + 100 completion tokens per answered call (some estimated)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runCLI(t, "", "prompts", "--from", "testdata/prompts/prompts.jsonl", "--generation", "1", "--full")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "=== propose, generation 1") != 2 || !strings.Contains(out, "--- user\n# Task: shorter") || !strings.Contains(out, "--- answer (finish: stop)\nno") {
		t.Fatalf("--full output:\n%s", out)
	}

	out, _, err = runCLI(t, "", "prompts", "--from", "testdata/prompts", "--json", "--generation", "0")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"prompt_tokens":600`) {
		t.Fatalf("--json output:\n%s", out)
	}
}

func TestPromptsErrors(t *testing.T) {
	for _, args := range [][]string{
		{"prompts"},
		{"prompts", "wbg-1", "--from", "testdata/prompts"},
		{"prompts", "--from", "testdata/missing"},
		{"prompts", "bad id!"},
	} {
		if _, _, err := runCLI(t, "", args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
