package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
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
