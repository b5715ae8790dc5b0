package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/store"
)

// redisAs opens a store on url as user ("" for the default user) with the
// password pw["redis-<user>"] (pw["redis"] for the default user).
func redisAs(t *testing.T, url, ca, user string, pw map[string]string) redis.UniversalClient {
	t.Helper()
	o := store.Options{URL: url, Username: user, Password: pw["redis"]}
	if user != "" {
		o.Password = pw["redis-"+user]
	}
	if strings.HasPrefix(url, "rediss://") {
		o.TLSCAFile = ca
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := store.Open(ctx, o)
	if err != nil {
		t.Fatalf("redis as %q: %v", user, err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Client()
}

// setRedisUsers creates the users of store.ACLUsers, for an installation
// without a namespace, with the passwords pw["redis-<user>"].
func setRedisUsers(t *testing.T, url, ca string, pw map[string]string) {
	t.Helper()
	rdb := redisAs(t, url, ca, "", pw)
	ctx := context.Background()
	for _, u := range store.ACLUsers() {
		args := []any{"ACL", "SETUSER", u.Name, "reset", "on", ">" + pw["redis-"+u.Name]}
		for _, r := range strings.Fields(u.Rules("crucible:")) {
			args = append(args, r)
		}
		if err := rdb.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("ACL SETUSER %s: %v", u.Name, err)
		}
	}
}

// checkRedisRefusals tries, as each Redis user, writes that belong to
// another service and administrative commands: Redis must refuse every one
// (NOPERM) and leave the campaign's keys as they were; what the user may
// read it reads.
func checkRedisRefusals(t *testing.T, ctx context.Context, url, ca string, pw map[string]string, campaign string) {
	t.Helper()
	ck := func(part string) string { return "crucible:{" + campaign + "}:" + part }
	admin := redisAs(t, url, ca, "", pw)
	before, err := admin.HGetAll(ctx, ck("state")).Result()
	if err != nil || len(before) == 0 {
		t.Fatalf("campaign state: %v (%d fields)", err, len(before))
	}
	everyone := [][]any{{"FLUSHALL"}, {"CONFIG", "GET", "*"}, {"KEYS", "*"}, {"ACL", "LIST"}, {"PUBLISH", "x", "y"}, {"SCRIPT", "FLUSH"}}
	refused := map[string][][]any{
		"client": {{"HSET", ck("state"), "budget", "1000000"}, {"DEL", ck("spec")}, {"ZADD", "crucible:campaigns", "1", "forged"},
			{"SADD", ck("discoveries"), "forged"}, {"RPUSH", "crucible:{mem:x}:reflections", "forged"},
			{"EVAL", "return redis.call('SET', KEYS[1], 'x')", "1", ck("state")}},
		"evaluator": {{"HSET", ck("state"), "evaluated", "0"}, {"SADD", ck("discoveries"), "forged"}, {"RPUSH", ck("findlist"), "forged"}},
		"judge": {{"HSET", ck("state"), "evaluated", "0"}, {"SADD", ck("evaluated"), "forged"}, {"RPUSH", "crucible:{mem:x}:reflections", "forged"},
			{"ZADD", "crucible:campaigns", "1", "forged"}},
		"proposer": {{"SADD", ck("discoveries"), "forged"}, {"SADD", ck("evaluated"), "forged"}, {"HSET", "crucible:{mem:x}:directives", "k", "v"}},
		// The reflector reconciles a Redis restored from an earlier state:
		// it may create campaigns again and re-count verdicts, but not
		// touch the proposers' dedupe keys or the judge's debates.
		"reflector": {{"HSET", ck("seen"), "fp", "forged"}, {"LPUSH", ck("island:0:rejects"), "forged"},
			{"HSET", ck("debate:claims"), "x", "1"}, {"RPUSH", ck("debate:transcripts"), "forged"}},
	}
	for _, u := range store.ACLUsers() {
		rdb := redisAs(t, url, ca, u.Name, pw)
		if _, err := rdb.HGetAll(ctx, ck("state")).Result(); err != nil {
			t.Errorf("%s cannot read the campaign state: %v", u.Name, err)
		}
		for _, cmd := range append(refused[u.Name], everyone...) {
			err := rdb.Do(ctx, cmd...).Err()
			if err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Errorf("redis user %s may %v (%v)", u.Name, cmd, err)
			}
		}
	}
	after, err := admin.HGetAll(ctx, ck("state")).Result()
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("campaign state %s changed from %q to %q", k, v, after[k])
		}
	}
}

// The ACL file the deployments load is the one store.ACLUsers describes.
// CRUCIBLE_UPDATE_ACL=1 rewrites it.
func TestRedisACLFile(t *testing.T) {
	want := store.ACLFile("crucible:")
	file := filepath.Join("k8s", "base", "redis", "users.acl")
	if os.Getenv("CRUCIBLE_UPDATE_ACL") == "1" {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not store.ACLFile(\"crucible:\"); regenerate it with CRUCIBLE_UPDATE_ACL=1 go test ./deploy -run TestRedisACLFile\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}

// TestRedisACLFileLoads runs the Redis init container's script of the
// Kubernetes manifests on this machine: it writes the ACL file from the
// ConfigMap's users.acl and one password file per user, a real
// redis-server loads it, and every user logs in with its own password and
// with no other.
func TestRedisACLFileLoads(t *testing.T) {
	bin := proc.RedisServerBinary()
	if bin == "" {
		t.Skip("no redis-server on this machine: the ACL file needs a real Redis (miniredis has no ACL file)")
	}
	r := render(t, filepath.Join("k8s", "base"))
	ss := r.statefulSet("redis")
	if ss == nil || len(ss.Spec.Template.Spec.InitContainers) != 1 {
		t.Fatal("no Redis init container")
	}
	script := ss.Spec.Template.Spec.InitContainers[0].Command[2]
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.Mkdir(users, 0o700); err != nil {
		t.Fatal(err)
	}
	pw := map[string]string{}
	for _, u := range append([]string{"default"}, redisUserNames()...) {
		pw[u] = password(t)
		if err := os.WriteFile(filepath.Join(users, u), []byte(pw[u]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "template.acl"), []byte(r.configMap("redis-config").Data["users.acl"]), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "users.acl")
	script = strings.NewReplacer("/users/", users+"/", "/etc/redis/users.acl", filepath.Join(dir, "template.acl"), "/run/redis/users.acl", out).Replace(script)
	if b, err := exec.Command("/bin/sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("init script: %v\n%s", err, b)
	}
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	srv := &proc.Process{Name: "redis-server", Path: bin, Args: []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--dir", dir, "--save", "", "--aclfile", out, "--logfile", filepath.Join(dir, "redis.log")}}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Kill() })
	addr := "127.0.0.1:" + strconv.Itoa(port)
	if err := proc.WaitTCP(addr, 15*time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
		t.Fatalf("redis-server with the ACL file: %v\n%s", err, log)
	}
	ctx := context.Background()
	for user, p := range pw {
		for _, try := range []struct {
			pass string
			ok   bool
		}{{p, true}, {pw["client"] + "x", false}} {
			rdb := redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: try.pass, MaxRetries: -1})
			err := rdb.Ping(ctx).Err()
			rdb.Close()
			if (err == nil) != try.ok {
				t.Errorf("user %s, right password %v: ping %v", user, try.ok, err)
			}
		}
	}
}
