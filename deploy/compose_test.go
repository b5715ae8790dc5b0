package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"sigs.k8s.io/yaml"

	"github.com/crucible-sci/crucible/internal/proc"
)

// composeFile is the subset of the Compose specification deploy/compose.yaml
// uses, in the forms it uses them (environment and depends_on as maps,
// volumes and secrets in short syntax); decoding rejects anything else.
// Top-level x- extension fields are allowed, as the specification says.
type composeFile struct {
	Name     string                    `json:"name"`
	Services map[string]composeService `json:"services"`
	Volumes  map[string]*struct{}      `json:"volumes"`
	Secrets  map[string]struct {
		File string `json:"file"`
	} `json:"secrets"`
}

type composeService struct {
	Image string `json:"image"`
	Build *struct {
		Context    string `json:"context"`
		Dockerfile string `json:"dockerfile"`
	} `json:"build,omitempty"`
	Entrypoint  []string          `json:"entrypoint,omitempty"`
	Command     []string          `json:"command,omitempty"`
	User        string            `json:"user,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	Secrets     []string          `json:"secrets,omitempty"`
	Volumes     []string          `json:"volumes,omitempty"`
	DependsOn   map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on,omitempty"`
	Healthcheck *struct {
		Test        []string `json:"test"`
		Interval    string   `json:"interval"`
		Timeout     string   `json:"timeout"`
		Retries     int      `json:"retries"`
		StartPeriod string   `json:"start_period,omitempty"`
	} `json:"healthcheck,omitempty"`
	Restart         string   `json:"restart,omitempty"`
	StopGracePeriod string   `json:"stop_grace_period,omitempty"`
	Profiles        []string `json:"profiles,omitempty"`
	Ports           []string `json:"ports,omitempty"`
}

// interpolation is ${NAME}, ${NAME:-default} or ${NAME:?message}.
var interpolation = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}`)

// interpolate replaces each variable by its default, as compose does with
// an empty environment ($$ is a literal $).
func interpolate(s string) string {
	s = strings.ReplaceAll(s, "$$", "\x00")
	s = interpolation.ReplaceAllStringFunc(s, func(m string) string {
		sm := interpolation.FindStringSubmatch(m)
		if sm[2] == "-" {
			return sm[3]
		}
		return ""
	})
	return strings.ReplaceAll(s, "\x00", "$")
}

func loadCompose(t *testing.T) *composeFile {
	t.Helper()
	data, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		t.Fatal(err)
	}
	for k := range top {
		if strings.HasPrefix(k, "x-") {
			delete(top, k)
		}
	}
	js, err = json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var f composeFile
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return &f
}

func TestComposeFile(t *testing.T) {
	f := loadCompose(t)
	for _, want := range []string{"nats", "redis", "data", "proposer", "evaluator", "reflector", "judge", "console"} {
		if _, ok := f.Services[want]; !ok {
			t.Errorf("no service %s", want)
		}
	}
	binaries := map[string]bool{}
	for _, b := range proc.Binaries {
		binaries[b.Name] = true
	}
	for name, s := range f.Services {
		for _, sec := range s.Secrets {
			if _, ok := f.Secrets[sec]; !ok {
				t.Errorf("service %s uses undeclared secret %s", name, sec)
			}
		}
		for _, v := range s.Volumes {
			src := strings.SplitN(interpolate(v), ":", 2)[0]
			if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") {
				if _, ok := f.Volumes[src]; !ok {
					t.Errorf("service %s uses undeclared volume %s", name, src)
				}
			} else if _, err := os.Stat(src); err != nil {
				t.Errorf("service %s mounts %s: %v", name, src, err)
			}
		}
		for dep := range s.DependsOn {
			if _, ok := f.Services[dep]; !ok {
				t.Errorf("service %s depends on unknown %s", name, dep)
			}
		}
		for k, v := range s.Environment {
			if credentialName.MatchString(k) && !strings.HasSuffix(k, "_FILE") && v != "" {
				t.Errorf("service %s: %s has a value in the compose file", name, k)
			}
			if strings.HasSuffix(k, "_FILE") && strings.HasPrefix(v, "/run/secrets/") &&
				!slices.Contains(s.Secrets, strings.TrimPrefix(v, "/run/secrets/")) {
				t.Errorf("service %s: %s=%s is not one of its secrets", name, k, v)
			}
		}
		if s.Build != nil {
			if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil {
				t.Errorf("service %s builds from %v", name, err)
			}
		}
		if !slices.Contains([]string{"proposer", "evaluator", "reflector", "judge"}, name) {
			continue
		}
		// A Crucible service: its own binary, authenticated, probed with
		// the binary itself (the image has no shell), restarted.
		if !slices.Equal(s.Entrypoint, []string{name}) || !binaries[name] {
			t.Errorf("service %s runs %v", name, s.Entrypoint)
		}
		if s.Healthcheck == nil || !slices.Equal(s.Healthcheck.Test, []string{"CMD", name, "--probe"}) {
			t.Errorf("service %s: health check must be [CMD %s --probe]", name, name)
		}
		for _, k := range []string{"CRUCIBLE_NATS_USER", "CRUCIBLE_NATS_PASSWORD_FILE", "CRUCIBLE_REDIS_PASSWORD_FILE"} {
			if s.Environment[k] == "" {
				t.Errorf("service %s: %s unset", name, k)
			}
		}
		for _, dep := range []string{"nats", "redis"} {
			if s.DependsOn[dep].Condition != "service_healthy" {
				t.Errorf("service %s must wait for a healthy %s", name, dep)
			}
		}
		if s.Restart != "unless-stopped" {
			t.Errorf("service %s: restart %q", name, s.Restart)
		}
	}
	// The console serves the web application on this host's loopback
	// interface only, its token from a secret.
	con := f.Services["console"]
	if !slices.Equal(con.Entrypoint, []string{"crucible"}) || len(con.Command) == 0 || con.Command[0] != "serve" {
		t.Errorf("console runs %v %v, want crucible serve", con.Entrypoint, con.Command)
	}
	for _, p := range con.Ports {
		if !strings.HasPrefix(interpolate(p), "127.0.0.1:") {
			t.Errorf("console publishes %s beyond the loopback interface", p)
		}
	}
	if con.Environment["CRUCIBLE_CONSOLE_TOKEN_FILE"] != "/run/secrets/console_token" {
		t.Error("console does not read its token from the console_token secret")
	}
	// The evaluators scale with --scale: nothing in them may be unique.
	if ev := f.Services["evaluator"]; ev.User != "" || ev.Profiles != nil {
		t.Errorf("evaluator is not a plain scalable service")
	}

	// Redis keeps an append-only file on its volume; NATS runs JetStream
	// on its volume with the password of the secret.
	redis := strings.Join(f.Services["redis"].Entrypoint, " ")
	for _, want := range []string{"--appendonly yes", "--dir /data", "requirepass", "/run/secrets/redis_password"} {
		if !strings.Contains(redis, want) {
			t.Errorf("redis entrypoint lacks %q", want)
		}
	}
	if !slices.ContainsFunc(f.Services["redis"].Volumes, func(v string) bool { return strings.HasSuffix(v, ":/data") }) {
		t.Error("redis /data is not a volume")
	}
	t.Setenv("NATS_PASSWORD", "pw-test")
	opts, err := server.ProcessConfigFile(filepath.Join("compose", "nats.conf"))
	if err != nil {
		t.Fatalf("compose/nats.conf: %v", err)
	}
	if !opts.JetStream || !strings.HasPrefix(opts.StoreDir, "/data/") || opts.Username != "crucible" || opts.Password != "pw-test" {
		t.Errorf("compose/nats.conf: jetstream %v in %q, user %q", opts.JetStream, opts.StoreDir, opts.Username)
	}
	if !strings.Contains(strings.Join(f.Services["nats"].Entrypoint, " "), "/run/secrets/nats_password") {
		t.Error("nats does not read its password from the secret")
	}
	for _, svc := range []string{"proposer", "evaluator", "reflector", "judge"} {
		if u := f.Services[svc].Environment["CRUCIBLE_NATS_USER"]; u != opts.Username {
			t.Errorf("service %s connects as %q, the server knows %q", svc, u, opts.Username)
		}
	}
}

func TestInterpolate(t *testing.T) {
	for in, want := range map[string]string{
		"${CRUCIBLE_DATA_SOURCE:-crucible-data}:/data:ro": "crucible-data:/data:ro",
		"${CRUCIBLE_IMAGE:-crucible:dev}":                 "crucible:dev",
		"${A}x${B:?set B}":                                "x",
		"cat $$(x)":                                       "cat $(x)",
	} {
		if got := interpolate(in); got != want {
			t.Errorf("interpolate(%q) = %q, want %q", in, got, want)
		}
	}
}
