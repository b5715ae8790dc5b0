package cli

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
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
		_, _, err := runTasksCmd(t, "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "4", "--quiet",
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
	_, _, err := runTasksCmd(t, "local", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "6", "--quiet", "--seed", "3",
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
