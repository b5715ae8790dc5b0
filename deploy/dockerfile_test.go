package deploy

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/proc"
)

// instruction is one Dockerfile instruction: its keyword, its flags
// (--from=build) and the rest of its line.
type instruction struct {
	line  int
	cmd   string
	flags []string
	args  string
}

// stage is a FROM and what follows it.
type stage struct {
	base, name string
	insts      []instruction
}

// parseDockerfile reads the instructions of a Dockerfile: comments and
// parser directives dropped, continuation lines joined.
func parseDockerfile(path string) ([]stage, map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var (
		stages  []stage
		args    = map[string]string{} // ARGs before the first FROM
		pending strings.Builder
		start   int
	)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if pending.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if pending.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending.WriteString(cont + " ")
			continue
		}
		pending.WriteString(line)
		full := pending.String()
		pending.Reset()
		cmd, rest, _ := strings.Cut(full, " ")
		in := instruction{line: start, cmd: strings.ToUpper(cmd)}
		rest = strings.TrimSpace(rest)
		for strings.HasPrefix(rest, "--") {
			flag, r, _ := strings.Cut(rest, " ")
			in.flags = append(in.flags, flag)
			rest = strings.TrimSpace(r)
		}
		in.args = rest
		switch {
		case in.cmd == "FROM":
			f := strings.Fields(in.args)
			st := stage{}
			switch {
			case len(f) == 1:
				st.base = f[0]
			case len(f) == 3 && strings.EqualFold(f[1], "AS"):
				st.base, st.name = f[0], f[2]
			default:
				return nil, nil, fmt.Errorf("line %d: FROM %s", start, in.args)
			}
			stages = append(stages, st)
		case len(stages) == 0 && in.cmd == "ARG":
			k, v, _ := strings.Cut(in.args, "=")
			args[k] = v
		case len(stages) == 0:
			return nil, nil, fmt.Errorf("line %d: %s before FROM", start, in.cmd)
		default:
			stages[len(stages)-1].insts = append(stages[len(stages)-1].insts, in)
		}
	}
	if pending.Len() > 0 {
		return nil, nil, fmt.Errorf("line %d: continuation at the end of the file", start)
	}
	return stages, args, sc.Err()
}

// goVersion is the go directive of go.mod (major.minor).
func goVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	return string(m[1])
}

// goBuild finds the build stage's go build command: its environment (ENV
// and inline assignments), flags, output and packages.
type goBuild struct {
	env   []string
	flags []string
	out   string
	pkgs  []string
}

func findGoBuild(t *testing.T, st stage) goBuild {
	t.Helper()
	var b goBuild
	for _, in := range st.insts {
		switch in.cmd {
		case "ENV":
			b.env = append(b.env, strings.Fields(in.args)...)
		case "RUN":
			i := strings.Index(in.args, "go build ")
			if i < 0 {
				continue
			}
			words, err := shellWords(in.args[i+len("go build "):])
			if err != nil {
				t.Fatalf("line %d: %v", in.line, err)
			}
			for k := 0; k < len(words); k++ {
				w := words[k]
				switch {
				case w == "-o":
					k++
					b.out = words[k]
				case strings.HasPrefix(w, "-"):
					b.flags = append(b.flags, w)
				default:
					b.pkgs = append(b.pkgs, w)
				}
			}
			return b
		}
	}
	t.Fatal("the build stage has no go build")
	return b
}

// shellWords splits a command line the way sh does for the quoting the
// Dockerfile uses (double quotes, no expansions).
func shellWords(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inQ   bool
		word  bool // cur holds a word, possibly empty ("")
	)
	for _, r := range s {
		switch {
		case r == '"':
			inQ, word = !inQ, true
		case (r == ' ' || r == '\t') && !inQ:
			if word {
				words = append(words, cur.String())
				cur.Reset()
				word = false
			}
		case r == '&' || r == ';' || r == '|':
			if !inQ {
				return nil, fmt.Errorf("go build must be the last command of its RUN")
			}
			cur.WriteRune(r)
		default:
			cur.WriteRune(r)
			word = true
		}
	}
	if inQ {
		return nil, fmt.Errorf("unterminated quote")
	}
	if word {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestDockerfile(t *testing.T) {
	stages, args, err := parseDockerfile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(stages) != 2 {
		t.Fatalf("%d stages, want build and runtime", len(stages))
	}
	build, runtime := stages[0], stages[1]
	if want := "golang:${GO_VERSION}"; build.base != want || args["GO_VERSION"] != goVersion(t) {
		t.Errorf("build stage FROM %s with GO_VERSION %s; want %s with go.mod's %s", build.base, args["GO_VERSION"], want, goVersion(t))
	}
	if !strings.HasPrefix(runtime.base, "gcr.io/distroless/static") && runtime.base != "scratch" {
		t.Errorf("runtime stage FROM %s: want distroless static or scratch", runtime.base)
	}

	b := findGoBuild(t, build)
	if !slices.Contains(b.env, "CGO_ENABLED=0") {
		t.Error("the build does not set CGO_ENABLED=0: the binaries would not be static")
	}
	if !slices.Equal(b.flags, proc.BuildFlags) {
		t.Errorf("go build flags %q, want %q (internal/proc builds the tested binaries with those)", b.flags, proc.BuildFlags)
	}
	var want []string
	for _, bin := range proc.Binaries {
		want = append(want, bin.Package)
	}
	if !slices.Equal(b.pkgs, want) {
		t.Errorf("go build packages %v, want %v", b.pkgs, want)
	}

	// The runtime stage: the binaries from the build stage, a data volume
	// the runtime user owns, a non-root user, no secrets.
	var copied, dataOwned, volume, nonRoot, dataEnv bool
	for _, in := range runtime.insts {
		fields := strings.Fields(in.args)
		switch in.cmd {
		case "COPY":
			if slices.Contains(in.flags, "--from=build") && len(fields) == 2 && fields[0] == b.out && fields[1] == "/usr/local/bin/" {
				copied = true
			}
			if slices.Contains(in.flags, "--chown=65532:65532") && len(fields) == 2 && fields[1] == "/data" {
				dataOwned = true
			}
		case "VOLUME":
			volume = volume || in.args == "/data"
		case "USER":
			u := strings.Split(in.args, ":")[0]
			nonRoot = u != "root" && u != "0" && u != ""
		case "ENV":
			dataEnv = dataEnv || slices.Contains(fields, "CRUCIBLE_DATA=/data")
		}
		if in.cmd == "ENV" || in.cmd == "ARG" || in.cmd == "LABEL" {
			for _, kv := range fields {
				if k, v, _ := strings.Cut(kv, "="); credentialName.MatchString(k) && v != "" {
					t.Errorf("line %d: %s puts a credential in the image", in.line, k)
				}
			}
		}
	}
	if !copied || !dataOwned || !volume || !nonRoot || !dataEnv {
		t.Errorf("runtime stage: binaries copied %v, /data owned by the runtime user %v, VOLUME /data %v, non-root USER %v, CRUCIBLE_DATA=/data %v",
			copied, dataOwned, volume, nonRoot, dataEnv)
	}
	ignore, err := os.ReadFile(filepath.Join("..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{".git", "bin"} {
		if !slices.Contains(strings.Fields(string(ignore)), must) {
			t.Errorf(".dockerignore does not exclude %s", must)
		}
	}

	// The build stage's command compiles, as written, with its
	// environment: what `docker build` would run.
	if testing.Short() {
		t.Skip("-short: not compiling the build stage")
	}
	goTool, err := proc.GoTool()
	if err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	cmdArgs := append(append([]string{"build"}, b.flags...), "-o", out+"/")
	cmd := exec.CommandContext(ctx, goTool, append(cmdArgs, b.pkgs...)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), b.env...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the build stage's go build fails: %v\n%s", err, msg)
	}
	for _, bin := range proc.Binaries {
		p := filepath.Join(out, bin.Name)
		if _, err := os.Stat(p); err != nil {
			t.Errorf("no %s: %v", bin.Name, err)
			continue
		}
		// Static and runnable: every binary answers --help.
		if msg, err := exec.CommandContext(ctx, p, "--help").CombinedOutput(); err != nil {
			t.Errorf("%s --help: %v\n%s", bin.Name, err, msg)
		}
	}
}
