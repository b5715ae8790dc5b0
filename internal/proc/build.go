package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Binaries are the programs an installation runs, with their main
// packages: the four services and the command-line client. The Dockerfile
// builds the same list (the deploy package's tests check that).
var Binaries = []struct{ Name, Package string }{
	{"crucible", "./cmd/crucible"},
	{"proposer", "./cmd/proposer"},
	{"evaluator", "./cmd/evaluator"},
	{"reflector", "./cmd/reflector"},
	{"judge", "./cmd/judge"},
}

// BuildEnv and BuildFlags are how release binaries are built: static (no
// cgo), without file system paths or debug information.
var (
	BuildEnv   = []string{"CGO_ENABLED=0"}
	BuildFlags = []string{"-trimpath", "-ldflags=-s -w"}
)

// GoTool is the go command: the one on PATH, else the one of the Go
// installation that built this program.
func GoTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", errors.New("proc: no go command on PATH or in GOROOT")
	}
	return p, nil
}

// Build compiles the named binaries of Binaries (all of them when names is
// empty) from the module at root into dir, with BuildEnv and BuildFlags,
// and returns dir.
func Build(ctx context.Context, root, dir string, names ...string) (string, error) {
	goTool, err := GoTool()
	if err != nil {
		return "", err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var pkgs []string
	for _, b := range Binaries {
		if len(want) == 0 || want[b.Name] {
			pkgs = append(pkgs, b.Package)
			delete(want, b.Name)
		}
	}
	for n := range want {
		return "", fmt.Errorf("proc: build: unknown binary %q", n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	args := append([]string{"build"}, BuildFlags...)
	args = append(args, "-o", dir+string(filepath.Separator))
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), BuildEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("proc: go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return dir, nil
}
