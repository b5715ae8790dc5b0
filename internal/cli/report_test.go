package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run.html")
	stdout, _, err := runCLI(t, "", "report", filepath.Join("..", "report", "testdata", "run"), "--out", out, "--png")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{out, strings.TrimSuffix(out, ".html") + "-curve.png", strings.TrimSuffix(out, ".html") + "-rates.png", strings.TrimSuffix(out, ".html") + "-pareto.png"} {
		if !strings.Contains(stdout, f) {
			t.Errorf("output does not name %s:\n%s", f, stdout)
		}
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Neither a folder nor a campaign id: a usage error, nothing written.
	_, _, err = runCLI(t, "", "report", "no/such dir", "--out", filepath.Join(t.TempDir(), "x.html"))
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), "neither a local run's folder nor a campaign id") {
		t.Errorf("bad argument: %v", err)
	}
}
