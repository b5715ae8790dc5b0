package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/proc"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// natsUsers are the users of k8s/base/nats/auth.conf.
var natsUsers = []string{"admin", "proposer", "evaluator", "reflector", "judge", "client"}

func password(t *testing.T) string {
	t.Helper()
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "p" + hex.EncodeToString(b[:]) // NATS reads it as a string
}

// TestSecureInstallation runs a campaign the way deploy/k8s runs one, on
// this machine: the NATS server with the Kubernetes users and permissions
// (k8s/base/nats/auth.conf) and TLS, Redis with AUTH and TLS, the streams
// created by `crucible setup` as admin, each service with its own user,
// --provisioned and its passwords in files, and the client submitting as
// client. Then each service user forges work within its permissions
// (forgeAsServices), each user tries what it must not do, and the logs
// are searched for the passwords.
func TestSecureInstallation(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the end-to-end security test")
	}
	data := testbed.DataDir(t)
	dir := t.TempDir()
	certs := writeTestCerts(t, dir)
	secrets := filepath.Join(dir, "secrets")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	pw := map[string]string{}
	var redisUsers []string
	for _, u := range store.ACLUsers() {
		redisUsers = append(redisUsers, "redis-"+u.Name)
	}
	for _, u := range append(append(natsUsers, "redis"), redisUsers...) {
		pw[u] = password(t)
		if err := os.WriteFile(filepath.Join(secrets, u), []byte(pw[u]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, "redis") {
			// What the StatefulSet gives the server from crucible-nats-users.
			t.Setenv("NATS_"+strings.ToUpper(u)+"_PASSWORD", pw[u])
		}
	}

	auth, err := os.ReadFile(filepath.Join("k8s", "base", "nats", "auth.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("tls {\n  cert_file: %q\n  key_file: %q\n  ca_file: %q\n  timeout: 5\n}\ninclude ./auth.conf\n", certs.cert, certs.key, certs.ca)
	for name, body := range map[string][]byte{"auth.conf": auth, "nats.conf": []byte(conf)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	natsSrv, err := proc.StartNATS(proc.NATSOptions{Dir: filepath.Join(dir, "jetstream"), Config: filepath.Join(dir, "nats.conf"), Log: filepath.Join(dir, "nats.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(natsSrv.Close)
	ropts := proc.RedisOptions{Dir: filepath.Join(dir, "redis"), Password: pw["redis"], Log: filepath.Join(dir, "redis.log")}
	redisTLS := proc.RedisServerBinary() != ""
	if redisTLS {
		ropts.TLSCert, ropts.TLSKey, ropts.TLSCA = certs.cert, certs.key, certs.ca
	} else {
		t.Log("no redis-server here: the embedded Redis checks AUTH but not TLS")
	}
	if err := os.Mkdir(ropts.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	redisSrv, err := proc.StartRedis(ropts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(redisSrv.Close)
	// Each service and the client log in to Redis as its own ACL user
	// (store.ACLUsers, the deployment's users.acl); miniredis has no ACL
	// users, so without redis-server everyone uses the default user.
	redisACL := !redisSrv.Embedded()
	if redisACL {
		setRedisUsers(t, redisSrv.URL(), certs.ca, pw)
	} else {
		t.Log("no redis-server here: skipping the Redis ACL users (miniredis cannot enforce them)")
	}

	// A fake OpenAI-compatible model for the LLM campaign: proposals,
	// reflections, memory edits and debates.
	model := llmtest.New(t, llmtest.Agents(11))

	bin := testsrv.Binaries(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env := func(user string) []string {
		e := []string{
			"CRUCIBLE_NATS_URL=" + natsSrv.URL(), "CRUCIBLE_NATS_TLS_CA=" + certs.ca,
			"CRUCIBLE_NATS_USER=" + user, "CRUCIBLE_NATS_PASSWORD_FILE=" + filepath.Join(secrets, user),
			"CRUCIBLE_REDIS_URL=" + redisSrv.URL(),
			"CRUCIBLE_DATA=" + data, "CRUCIBLE_HTTP_ADDR=127.0.0.1:0", "CRUCIBLE_PROVISIONED=true",
			"CRUCIBLE_NAMESPACE=", // auth.conf names the subjects of an installation without one
		}
		if redisTLS {
			e = append(e, "CRUCIBLE_REDIS_TLS_CA="+certs.ca)
		}
		if _, ok := pw["redis-"+user]; ok && redisACL {
			e = append(e, "CRUCIBLE_REDIS_USER="+user, "CRUCIBLE_REDIS_PASSWORD_FILE="+filepath.Join(secrets, "redis-"+user))
		} else {
			e = append(e, "CRUCIBLE_REDIS_PASSWORD_FILE="+filepath.Join(secrets, "redis"))
		}
		return e
	}
	crucible := func(user string, timeout time.Duration, args ...string) (string, error) {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(cctx, filepath.Join(bin, "crucible"), args...)
		cmd.Env = append(os.Environ(), env(user)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// The services wait for the streams until the administrator creates
	// them.
	userLimits := filepath.Join(dir, "user-limits.json")
	if err := os.WriteFile(userLimits, []byte(`{"client": {"max_budget": 150, "max_campaigns": 3}, "*": {"max_budget": 10}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var procs []*proc.Process
	for _, svc := range []string{"proposer", "evaluator", "reflector", "judge"} {
		e := env(svc)
		switch svc {
		case "evaluator":
			// A campaign of forgeAsServices must be paused before it
			// completes: a cost per candidate keeps it running seconds.
			e = append(e, "CRUCIBLE_ORACLE_DELAY=100ms")
		case "proposer":
			// The client user's own quotas (max_campaigns: the proposer
			// counts under the submission lock, which its Redis user may
			// take).
			e = append(e, "CRUCIBLE_USER_LIMITS_FILE="+userLimits, "CRUCIBLE_LLM_URL="+model.URL)
		default:
			e = append(e, "CRUCIBLE_LLM_URL="+model.URL)
		}
		p := &proc.Process{Name: svc, Path: filepath.Join(bin, svc), Env: e, Log: filepath.Join(dir, svc+".log")}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if p.Running() {
				_ = p.Kill()
			}
		})
		procs = append(procs, p)
	}
	if out, err := crucible("evaluator", time.Minute, "setup"); err == nil {
		t.Errorf("the evaluator user could create the streams:\n%s", out)
	}
	if out, err := crucible("admin", time.Minute, "setup"); err != nil {
		t.Fatalf("crucible setup as admin: %v\n%s", err, out)
	}
	const task = "Stable Wide-Bandgap Semiconductors"
	out, err := crucible("client", 3*time.Minute, "submit", "--task", task, "--budget", "30", "--wait")
	if err != nil || !strings.Contains(out, "completed") {
		for _, p := range procs {
			t.Logf("%s:\n%s", p.Name, p.Tail(15))
		}
		t.Fatalf("crucible submit --wait as client: %v\n%s", err, out)
	}
	campaign := strings.Fields(out)[0]
	if out, err := crucible("client", time.Minute, "results", campaign, "--format", "csv"); err != nil || !strings.Contains(out, campaign) {
		t.Errorf("crucible results as client: %v\n%s", err, out)
	}
	// The campaign is the client user's, as the server authenticated it,
	// and that user's quota holds.
	if out, err := crucible("client", time.Minute, "campaign", "show", campaign); err != nil || !strings.Contains(out, "submitted by client") {
		t.Errorf("crucible campaign show as client: %v\n%s", err, out)
	}
	if out, err := crucible("client", time.Minute, "submit", "--task", task, "--budget", "151", "--wait"); err == nil ||
		!strings.Contains(out, `budget 151 is more than the maximum of 150 per campaign for user client (proposer --user-limits, entry "client")`) {
		t.Errorf("a submission over the client user's quota: %v\n%s", err, out)
	}

	checkLLMCampaign(t, crucible)

	// Each service user forges work within its permissions, against a
	// second campaign while it runs and the first after it completed.
	forgeAsServices(t, ctx, &secureInstall{natsURL: natsSrv.URL(), redisURL: redisSrv.URL(), ca: certs.ca, pw: pw, crucible: crucible, procs: procs}, task, campaign)
	for _, p := range procs {
		if !p.Running() {
			t.Errorf("%s exited: %v\n%s", p.Name, p.ExitErr(), p.Tail(10))
		}
	}

	// Without the CA, or with a wrong password, nothing connects.
	wrong := append(os.Environ(), env("client")...)
	for _, bad := range [][]string{
		{"CRUCIBLE_NATS_TLS_CA="},
		{"CRUCIBLE_NATS_PASSWORD_FILE=" + filepath.Join(secrets, "judge")},
		{"CRUCIBLE_REDIS_PASSWORD_FILE=" + filepath.Join(secrets, "judge")},
	} {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "crucible"), "status", "--connect-timeout", "3s")
		cmd.Env = append(append([]string{}, wrong...), bad...)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("crucible status with %v connected:\n%s", bad, out)
		}
	}

	// What each user must not do. A refused publish or subscription comes
	// back from the server as an asynchronous permissions violation.
	refused := map[string][]string{
		"proposer": {"pub crucible.evaluations.x", "pub $JS.API.CONSUMER.MSG.NEXT.CANDIDATES.evaluator", "pub $JS.API.STREAM.DELETE.CANDIDATES"},
		"evaluator": {"pub crucible.candidates.x", "pub crucible.discoveries.x", "pub crucible.propose.x", "pub $JS.API.STREAM.CREATE.X", "pub $JS.API.CONSUMER.CREATE.EVALUATIONS.x", "pub $JS.API.CONSUMER.MSG.NEXT.EVALUATIONS.judge", "pub $JS.ACK.EVALUATIONS.judge.1.1.1.1.0", "sub crucible.>",
			"sub _INBOX.>", "sub _INBOX_proposer.>", "sub _INBOX_judge.x"},
		"reflector": {"pub crucible.candidates.x", "pub crucible.discoveries.x", "pub $JS.API.CONSUMER.MSG.NEXT.CANDIDATES.evaluator"},
		"judge":     {"pub crucible.evaluations.x", "pub crucible.candidates.x", "pub $JS.API.STREAM.PURGE.DISCOVERIES"},
		"client": {"pub crucible.evaluations.x", "pub crucible.candidates.x", "pub $JS.API.CONSUMER.MSG.NEXT.CANDIDATES.evaluator",
			"pub $JS.API.CONSUMER.DELETE.CANDIDATES.evaluator", "pub $JS.API.CONSUMER.CREATE.CANDIDATES.x", "pub $JS.API.STREAM.DELETE.EVALUATIONS", "pub $JS.API.STREAM.PURGE.EVALUATIONS", "sub crucible.>",
			// Replies to the services (the structures they pull) are on
			// their own inbox prefixes.
			"sub _INBOX.>", "sub _INBOX_evaluator.>", "sub _INBOX_proposer.>", "sub _INBOX_judge.>", "sub _INBOX_reflector.>", "sub >",
			// It submits and acts on campaigns as itself only: not without a
			// user (no quota, no owner), nor as another.
			"pub crucible.campaigns.submit.x", "pub crucible.campaigns.submit.user.alice.x",
			"pub crucible.campaigns.control.x", "pub crucible.campaigns.control.user.alice.x"},
	}
	for user, actions := range refused {
		errs := make(chan error, 16)
		nc, err := nats.Connect(natsSrv.URL(), nats.UserInfo(user, pw[user]), nats.RootCAs(certs.ca),
			nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		for _, a := range actions {
			verb, subject, _ := strings.Cut(a, " ")
			if verb == "pub" {
				err = nc.Publish(subject, []byte("{}"))
			} else {
				_, err = nc.SubscribeSync(subject)
			}
			if err == nil {
				err = nc.Flush()
			}
			if err != nil {
				t.Errorf("%s %s: %v", user, a, err)
				continue
			}
			select {
			case err := <-errs:
				if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
					t.Errorf("%s %s: %v, want a permissions violation", user, a, err)
				}
			case <-time.After(3 * time.Second):
				t.Errorf("%s may %s", user, a)
			}
		}
		nc.Close()
	}

	if redisACL {
		checkRedisRefusals(t, ctx, redisSrv.URL(), certs.ca, pw, campaign)
	}

	// Redis restarts (another server run): the services wait and the
	// reflector reconciles Redis with the streams, each with its own
	// users' permissions (INFO, the journal, the queued requests).
	if !redisSrv.Embedded() {
		var reflector *proc.Process
		for _, p := range procs {
			if p.Name == "reflector" {
				reflector = p
			}
		}
		before := strings.Count(reflector.Tail(100000), "Redis reconciled with the streams")
		if err := redisSrv.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := redisSrv.Start(); err != nil {
			t.Fatal(err)
		}
		if redisACL {
			setRedisUsers(t, redisSrv.URL(), certs.ca, pw) // ACL SETUSER is not in the append-only file
		}
		restarted := time.Now()
		deadline := restarted.Add(time.Minute)
		for strings.Count(reflector.Tail(100000), "Redis reconciled with the streams") == before {
			if time.Now().After(deadline) {
				t.Fatalf("the reflector did not reconcile Redis after its restart:\n%s", reflector.Tail(20))
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("Redis restarted: reconciled %.1f s later by the reflector user", time.Since(restarted).Seconds())
		if out, err := crucible("client", 3*time.Minute, "submit", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "12", "--wait"); err != nil || !strings.Contains(out, "completed") {
			t.Errorf("a campaign after Redis restarted: %v\n%s", err, out)
		}
		for _, p := range procs {
			if strings.Contains(strings.ToLower(p.Tail(100000)), "permissions violation") {
				t.Errorf("%s met a permissions violation:\n%s", p.Name, p.Tail(15))
			}
		}
	}

	// No service met a refusal of its own work (a best-effort write that
	// fails only logs).
	for _, p := range procs {
		if body, err := os.ReadFile(p.Log); err == nil && strings.Contains(string(body), "NOPERM") {
			t.Errorf("%s was refused a Redis command:\n%s", p.Name, p.Tail(10))
		}
	}

	// No password in any log.
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		body, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for u, p := range pw {
			if strings.Contains(string(body), p) {
				t.Errorf("%s holds the password of %s", filepath.Base(l), u)
			}
		}
	}
}

// checkLLMCampaign runs a campaign whose proposals, reflections and
// debates are a model's, as the client user: each service's LLM exchanges
// reach the prompt audit, and their requests and tokens the campaign's
// accounting, within the service's own NATS and Redis permissions (the
// judge keeps its debates' account; it may not write the campaign state).
func checkLLMCampaign(t *testing.T, crucible func(user string, timeout time.Duration, args ...string) (string, error)) {
	t.Helper()
	out, err := crucible("client", 3*time.Minute, "submit", "--task", "Stable Wide-Bandgap Semiconductors", "--budget", "8", "--episodes", "2",
		"--seed", "11", "--generator", "llm", "--reflector", "llm", "--debate", "llm", "--model", "fake", "--wait")
	if err != nil || !strings.Contains(out, "completed") {
		t.Fatalf("an LLM campaign as client: %v\n%s", err, out)
	}
	campaign := strings.Fields(out)[0]
	// The judge may still be debating the last hits: read until the audit
	// and the accounting agree, for at most half a minute.
	var (
		kinds   map[string]int
		tokens  int
		summary messages.Summary
		failed  []string
	)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		out, err := crucible("client", time.Minute, "prompts", campaign, "--json")
		if err != nil {
			t.Fatalf("crucible prompts as client: %v\n%s", err, out)
		}
		kinds, tokens, failed = map[string]int{}, 0, nil
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var p messages.Prompt
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("prompt record %q: %v", line, err)
			}
			if p.Outcome != messages.PromptAnswered {
				failed = append(failed, fmt.Sprintf("%s exchange %s/%d: %s %s", p.Kind, p.Candidate, p.Index, p.Outcome, p.Error))
			}
			kinds[p.Kind]++
			tokens += p.PromptTokens + p.CompletionTokens
		}
		out, err = crucible("client", time.Minute, "status", campaign, "--json")
		if err != nil {
			t.Fatalf("crucible status as client: %v\n%s", err, out)
		}
		if err := json.Unmarshal([]byte(out), &summary); err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		c := summary.Counters
		calls := kinds[messages.PromptPropose] + kinds[messages.PromptReflect] + kinds[messages.PromptMemory] + kinds[messages.PromptDebate]
		if c.PromptTokens+c.CompletionTokens == tokens && c.LLMCalls == calls {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the campaign counts %d calls and %d tokens; its prompt audit holds %v with %d tokens", c.LLMCalls, c.PromptTokens+c.CompletionTokens, kinds, tokens)
			break
		}
	}
	// The default call budget leaves every kind of exchange its share:
	// none fails for want of it.
	for _, f := range failed {
		t.Error(f)
	}
	for _, k := range []string{messages.PromptPropose, messages.PromptReflect, messages.PromptDebate} {
		if kinds[k] == 0 {
			t.Errorf("no %s exchange in the prompt audit of %s (%v)", k, campaign, kinds)
		}
	}
	t.Logf("LLM campaign %s: exchanges %v, %d tokens", campaign, kinds, tokens)
}
