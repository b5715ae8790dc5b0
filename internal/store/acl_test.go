package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reflection"
)

// writeRecorder is a go-redis hook that records the keys of every write:
// the arguments of write commands, and the KEYS of every script (a script
// touches only the keys it is given, the debate script's trimmed
// transcripts aside, whose keys share its first key's pattern).
type writeRecorder struct {
	mu   sync.Mutex
	keys []string
}

var writeCommands = map[string]bool{"set": true, "setnx": true, "hset": true, "hsetnx": true, "hdel": true, "hincrby": true,
	"sadd": true, "srem": true, "rpush": true, "lpush": true, "lpop": true, "rpop": true, "ltrim": true,
	"zadd": true, "zrem": true, "del": true, "incr": true, "incrby": true, "expire": true}

func (w *writeRecorder) record(cmd redis.Cmder) {
	args := cmd.Args()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch name := strings.ToLower(cmd.Name()); {
	case name == "eval" || name == "evalsha":
		n, _ := strconv.Atoi(fmt.Sprint(args[2]))
		for _, k := range args[3 : 3+n] {
			w.keys = append(w.keys, fmt.Sprint(k))
		}
	case name == "del":
		for _, k := range args[1:] {
			w.keys = append(w.keys, fmt.Sprint(k))
		}
	case writeCommands[name]:
		w.keys = append(w.keys, fmt.Sprint(args[1]))
	}
}

func (w *writeRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := w.keys
	w.keys = nil
	return k
}

func (w *writeRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (w *writeRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		w.record(cmd)
		return next(ctx, cmd)
	}
}
func (w *writeRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			w.record(c)
		}
		return next(ctx, cmds)
	}
}

// TestACLCoversServiceWrites runs the store's writes the way each service
// makes them (the methods its package calls) and checks that every key
// written matches that service's write patterns in ACLUsers, and that no
// other user could write a key another service owns alone.
func TestACLCoversServiceWrites(t *testing.T) {
	s := open(t)
	rec := &writeRecorder{}
	s.rdb.AddHook(rec)
	ctx := context.Background()
	const c = "acl"
	fail := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var pub []*messages.Candidate
	steps := []struct {
		service string
		run     func()
	}{
		{"proposer", func() {
			unlock, err := s.LockSubmissions(ctx)
			fail(err)
			_, err = s.CreateCampaign(ctx, spec(t, c, 4, 2, 2), 0)
			fail(err)
			unlock()
			g, ok, err := s.RequestGeneration(ctx, c, "start/0")
			if err != nil || !ok {
				t.Fatalf("request: %v %v", ok, err)
			}
			p := &Proposal{Generation: g.Generation, Island: 1, Candidates: []*messages.Candidate{candidate(c, g.Generation, 0, "fa"), candidate(c, g.Generation, 1, "fb")},
				Rejected: []Member{{ID: "r0", Formula: "GaN"}}}
			pub, err = s.RecordProposal(ctx, c, p)
			fail(err)
			res, err := s.ReserveLLMCall(ctx, c, 10, 0)
			if err != nil || !res.OK() {
				t.Fatalf("reserve call: %+v %v", res, err)
			}
			fail(s.ReleaseLLMCall(ctx, c))
		}},
		{"reflector", func() {
			for _, cand := range pub {
				_, err := s.RecordEvaluation(ctx, c, evaluation(cand, 0, 0.5, true))
				fail(err)
			}
			_, _, err := s.RequestGeneration(ctx, c, "after/0")
			fail(err)
			// Lifecycle actions (crucible campaign pause, resume, …).
			for _, a := range []string{messages.ActionPause, messages.ActionResume} {
				_, err = s.ApplyControl(ctx, &messages.Control{Schema: messages.SchemaVersion, Campaign: c, ID: a + "-1", Action: a, At: time.Now().UTC()}, 1)
				fail(err)
			}
			_, err = s.RefuseControl(ctx, &messages.Control{Schema: messages.SchemaVersion, Campaign: c, ID: "cancel-1", Action: messages.ActionCancel, At: time.Now().UTC()}, "not yours")
			fail(err)
			_, err = s.AdvanceEpisode(ctx, c, 1)
			fail(err)
			fail(s.SetEpisodeStats(ctx, c, 0, []byte(`{}`)))
			fail(s.AddLLMUsage(ctx, c, 1, 10, 10))
			r := &messages.Reflection{Schema: messages.SchemaVersion, Campaign: c, Context: "task-x", Bullets: []string{"avoid NaCl3"},
				Directives: []messages.Directive{{Kind: messages.DirectiveCapComposition, Formula: "NaCl3", Limit: 0, Reason: "never neutral"}}}
			_, err = s.ApplyReflection(ctx, "task-x", c+"/0", r, nil, []reflection.ExperienceOp{{Experience: reflection.Experience{Key: "comp:NaCl3", Text: "x", Support: 1, Kind: "composition"}}})
			fail(err)
			// Reconciling a Redis restored from an earlier state.
			_, err = s.LockReconcile(ctx, "r1", time.Minute)
			fail(err)
			_, err = s.RestoreReservation(ctx, c, Generation{Generation: 40, Slots: 2}, "after/39")
			fail(err)
			_, err = s.RecordVerdict(ctx, c, pub[0].ID, true, messages.NoveltyNew, nil)
			fail(err)
			fail(s.RecordJudgeRejection(ctx, c, "forged"))
			fail(s.MarkReconciled(ctx, "run"))
			fail(s.UnlockReconcile(ctx, "r1"))
		}},
		{"judge", func() {
			_, err := s.RecordVerdict(ctx, c, pub[0].ID, true, messages.NoveltyNew, &Find{ID: pub[0].ID, Formula: "NaCl", EnergyPerAtom: -2})
			fail(err)
			_, err = s.RecordVerdict(ctx, c, pub[1].ID, false, JudgedBelowHull, nil)
			fail(err)
			fail(s.RecordJudgeRejection(ctx, c, "forged"))
			_, err = s.ClaimDebate(ctx, c, pub[0].ID, 2)
			fail(err)
			_, err = s.SaveTranscript(ctx, c, pub[0].ID, []byte(`{}`), 1)
			fail(err)
			// An LLM debate's requests and tokens, in the debates' account.
			res, err := s.ReserveDebateCall(ctx, c, 10, 1000)
			if err != nil || !res.OK() {
				t.Fatalf("reserve a debate call: %+v %v", res, err)
			}
			fail(s.ReleaseDebateCall(ctx, c))
			fail(s.AddDebateUsage(ctx, c, 1, 10, 10))
		}},
		{"proposer", func() { fail(s.MarkExhausted(ctx, c, "no candidates")) }},
	}
	users := map[string]ACLUser{}
	for _, u := range ACLUsers() {
		users[u.Name] = u
	}
	written := map[string]string{} // key → a service that wrote it
	for _, st := range steps {
		rec.take()
		st.run()
		keys := rec.take()
		if len(keys) == 0 {
			t.Errorf("%s: no writes recorded", st.service)
		}
		for _, k := range keys {
			if !users[st.service].MayWrite(s.prefix, k) {
				t.Errorf("%s writes %s, outside its ACL write patterns", st.service, k)
			}
			written[k] = st.service
		}
	}
	// Readers write nothing; the patterns of one service do not reach the
	// keys only another writes.
	only := map[string]string{"{acl}:seen": "proposer", "{acl}:evaluated": "reflector", "{acl}:control": "reflector",
		"{mem:task-x}:directives": "reflector", "{acl}:debate:claims": "judge", "{acl}:log": "reflector"}
	for part, owner := range only {
		key := s.prefix + part
		if _, ok := written[key]; !ok {
			t.Errorf("%s was not written", key)
		}
		for name, u := range users {
			if u.MayWrite(s.prefix, key) != (name == owner) {
				t.Errorf("user %s may write %s: %v, want %v", name, key, u.MayWrite(s.prefix, key), name == owner)
			}
		}
	}
	for _, reader := range []string{"evaluator", "client"} {
		if len(users[reader].Write) != 0 || strings.Contains(users[reader].Commands, "@write") {
			t.Errorf("%s may write: %+v", reader, users[reader])
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"crucible:{*}:state", "crucible:{c1}:state", true},
		{"crucible:{*}:state", "crucible:{c1}:spec", false},
		{"crucible:{*}:island:*:rejects", "crucible:{c/1}:island:3:rejects", true},
		{"crucible:{*}:island:*:rejects", "crucible:{c}:island:3:success", false},
		{"crucible:campaigns", "crucible:campaigns", true},
		{"crucible:campaigns", "crucible:campaignsx", false},
		{"*", "", true},
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.s, got)
		}
	}
}
