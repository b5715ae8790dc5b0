package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestLocalChecksTheLLMEndpoint: crucible local --generator llm refuses to
// start, with the reason, against an endpoint that cannot serve the model.
func TestLocalChecksTheLLMEndpoint(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	srv := llmtest.New(t, nil)
	srv.SetModels("llama3", "qwen2.5")
	srv.Script(llmtest.Reply{Status: 404, Error: "model 'mistral' not found"})
	for _, c := range []struct{ url, says string }{
		{closed, "connection refused at " + closed},
		{srv.URL, `model "mistral" is not served; the endpoint lists llama3, qwen2.5`},
	} {
		_, _, err := runCLI(t, "", "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "4", "--quiet",
			"--generator", "llm", "--model", "mistral", "--llm-url", c.url, "--out", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("--llm-url %s: error %v, want it to say %q", c.url, err, c.says)
		}
	}
}

// TestLocalLLMAgainstFakeModel: crucible local --generator llm checks the
// endpoint, runs the campaign against a fake model and writes the prompt
// audit with the endpoint of every exchange.
func TestLocalLLMAgainstFakeModel(t *testing.T) {
	data := testbed.DataDir(t)
	srv := llmtest.New(t, llmtest.Substitute(3))
	out := t.TempDir()
	_, _, err := runCLI(t, "", "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "6", "--quiet", "--seed", "3",
		"--generator", "llm", "--model", "fake", "--llm-url", srv.URL, "--data", data, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "prompts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		var p messages.Prompt
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		if p.Endpoint != srv.URL || p.Outcome != messages.PromptAnswered {
			t.Fatalf("prompt record: endpoint %q, outcome %s %s", p.Endpoint, p.Outcome, p.Error)
		}
	}
	// The check was one request before the campaign's.
	if reqs := srv.Requests(); len(reqs) != len(lines)+1 || reqs[0].MaxTokens != 1 {
		t.Fatalf("%d requests for %d exchanges; first %+v", len(reqs), len(lines), reqs[0])
	}
}

// TestLocalLLMReflector: crucible local --generator llm --reflector llm
// runs a two-episode campaign against a fake model; the prompt audit
// holds propose, reflect and memory exchanges, each with its kind, tokens
// and outcome; the reflections are the model's, its directives that the
// evidence refutes dropped with the reason; the call budget counts every
// kind.
func TestLocalLLMReflector(t *testing.T) {
	data := testbed.DataDir(t)
	srv := llmtest.New(t, llmtest.Agents(5))
	out := t.TempDir()
	_, _, err := runCLI(t, "", "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "16", "--episodes", "2", "--quiet", "--seed", "5",
		"--generator", "llm", "--reflector", "llm", "--model", "fake", "--llm-url", srv.URL, "--data", data, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, l := range readLines(t, filepath.Join(out, "prompts.jsonl")) {
		var p messages.Prompt
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatal(err)
		}
		if p.Outcome != messages.PromptAnswered || p.PromptTokens <= 0 || p.CompletionTokens <= 0 {
			t.Errorf("%s exchange: outcome %s (%s), tokens %d + %d", p.Kind, p.Outcome, p.Error, p.PromptTokens, p.CompletionTokens)
		}
		kinds[p.Kind]++
		// MADE §4.1: the reflect summary carries the episode's chronological log.
		if p.Kind == messages.PromptReflect && !strings.Contains(p.User, `"episode_log": [`) {
			t.Errorf("reflect prompt without the episode's log:\n%s", p.User)
		}
	}
	t.Logf("exchanges by kind: %v", kinds)
	if kinds[messages.PromptPropose] == 0 || kinds[messages.PromptReflect] != 2 || kinds[messages.PromptMemory] != 2 {
		t.Errorf("exchanges by kind: %v, want propose, 2 reflect and 2 memory", kinds)
	}
	refls := readLines(t, filepath.Join(out, "reflections.jsonl"))
	if len(refls) != 2 {
		t.Fatalf("%d reflections, want 2", len(refls))
	}
	dropped := 0
	for _, l := range refls {
		var r messages.Reflection
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Mode != messages.ReflectorLLM || r.Fallback != "" || len(r.Bullets) < 3 || !strings.HasPrefix(r.Bullets[0], "Keep breadth:") {
			t.Errorf("reflection: mode %s, fallback %q, bullets %q", r.Mode, r.Fallback, r.Bullets)
		}
		for _, d := range r.Dropped {
			if d.Reason == "" {
				t.Errorf("dropped without a reason: %+v", d)
			}
			dropped++
		}
	}
	if dropped == 0 {
		t.Error("the model's refuted directives were not dropped")
	}
	var sum messages.Summary
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("summary: %v", err)
	}
	if want := kinds[messages.PromptPropose] + kinds[messages.PromptReflect] + kinds[messages.PromptMemory]; sum.LLMCalls != want {
		t.Errorf("summary counts %d LLM calls, the audit %d", sum.LLMCalls, want)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestLocalStateKeepsMemory: crucible local --state DIR keeps the memory
// banks across runs; a second campaign on the same task starts from the
// first one's bank and extends it, and crucible memory reads it.
func TestLocalStateKeepsMemory(t *testing.T) {
	data := testbed.DataDir(t)
	state := t.TempDir()
	run := func(id string) {
		t.Helper()
		_, _, err := runCLI(t, "", "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "12", "--episodes", "2", "--quiet",
			"--seed", "9", "--id", id, "--state", state, "--data", data, "--out", t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
	}
	bank := func() *store.BankDump {
		t.Helper()
		banks, err := local.ReadState(state)
		if err != nil || len(banks) != 1 {
			t.Fatalf("state: %d banks, %v", len(banks), err)
		}
		return banks[0]
	}
	run("first")
	if b := bank(); len(b.Reflections) != 2 || b.Reflections[0].Campaign != "first" {
		t.Fatalf("after the first run: %d reflections", len(b.Reflections))
	}
	run("second")
	b := bank()
	var campaigns []string
	for _, r := range b.Reflections {
		campaigns = append(campaigns, r.Campaign)
	}
	if want := []string{"second", "second", "first", "first"}; !slices.Equal(campaigns, want) {
		t.Errorf("reflections of %v, want %v (newest first)", campaigns, want)
	}
	// The second campaign's first reflection saw the first's bullets: it
	// repeats none of them.
	for _, x := range b.Reflections[1].Bullets {
		if slices.Contains(b.Reflections[2].Bullets, x) {
			t.Errorf("repeated bullet %q", x)
		}
	}
	stdout, _, err := runCLI(t, "", "memory", "list", "--state", state)
	if err != nil || !strings.Contains(stdout, b.Context) {
		t.Errorf("memory list: %q %v", stdout, err)
	}
}

// TestLocalReflectorOff: with --reflector off a campaign of two episodes
// writes no reflection and leaves no memory bank.
func TestLocalReflectorOff(t *testing.T) {
	data := testbed.DataDir(t)
	state, out := t.TempDir(), t.TempDir()
	_, _, err := runCLI(t, "", "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "8", "--episodes", "2", "--quiet",
		"--seed", "4", "--reflector", "off", "--state", state, "--data", data, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(out, "reflections.jsonl")); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		t.Errorf("reflections written: %s", b)
	}
	if banks, err := local.ReadState(state); err != nil || len(banks) != 0 {
		t.Errorf("memory banks after a campaign without reflection: %d (%v)", len(banks), err)
	}
}
