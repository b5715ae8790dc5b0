package cli

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs the CLI with args and stdin as its standard input, and
// returns what it wrote to standard output and standard error.
func runCLI(t testing.TB, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	root := NewRoot()
	var out, errOut bytes.Buffer
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err = root.Execute()
	return out.String(), errOut.String(), err
}
