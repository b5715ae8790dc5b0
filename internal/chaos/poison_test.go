package chaos

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestPoisonKinds: every kind of poison is built (valid where it must
// be), and Check matches dead letters to it.
func TestPoisonKinds(t *testing.T) {
	p := &Poisoner{Campaign: "chaos-1", Rand: rand.New(rand.NewPCG(1, 2))}
	p.sent, p.sentAt = map[string]int{}, map[string]time.Time{}
	var letters []messages.DeadLetter
	for range 50 {
		subject, data, n := p.next()
		p.sent[string(data)] += n
		p.sentAt[string(data)] = time.Now()
		for range n {
			letters = append(letters, messages.DeadLetter{Subject: subject, Data: data, Reason: "x"})
		}
	}
	if found, lost, v := p.Check(letters, nil, nil); len(v) > 0 || found != len(letters) || lost != 0 {
		t.Fatalf("found %d of %d, lost %d: %v", found, len(letters), lost, v)
	}
	if _, _, v := p.Check(append(letters, messages.DeadLetter{Data: []byte("real")}), nil, nil); len(v) != 1 {
		t.Fatalf("a real message's dead letter: %v", v)
	}
	// Without its dead letters, a poison message is missing, unless NATS
	// was killed just after it was published.
	if _, lost, v := p.Check(letters[1:], nil, nil); len(v) != 1 || lost != 0 {
		t.Fatalf("a missing dead letter: lost %d, %v", lost, v)
	}
	only := map[string]int{string(letters[0].Data): p.sent[string(letters[0].Data)]}
	q := &Poisoner{sent: only, sentAt: map[string]time.Time{string(letters[0].Data): time.Now()}}
	if _, lost, v := q.Check(nil, []time.Time{time.Now().Add(time.Second)}, nil); len(v) != 0 || lost != 1 {
		t.Fatalf("lost with a NATS kill: lost %d, %v", lost, v)
	}
	// Published long before the kill, but dead-lettered just before it
	// (the services' logs say when): its dead letter was lost with the
	// server. Dead-lettered long before the kill, it is missing.
	body := string(letters[0].Data)
	kill := time.Now()
	q = &Poisoner{sent: only, sentAt: map[string]time.Time{body: kill.Add(-time.Minute)}, sentID: map[string]string{body: "poison/7"}}
	if _, lost, v := q.Check(nil, []time.Time{kill}, map[string][]time.Time{"poison/7": {kill.Add(-time.Second)}}); len(v) != 0 || lost != 1 {
		t.Fatalf("dead letter lost with a NATS kill: lost %d, %v", lost, v)
	}
	if _, lost, v := q.Check(nil, []time.Time{kill}, map[string][]time.Time{"poison/7": {kill.Add(-10 * time.Second)}}); len(v) != 1 || lost != 0 {
		t.Fatalf("dead-lettered long before the kill, missing: lost %d, %v", lost, v)
	}
}

// TestDeadLetteredAt reads the times of the services' "message
// dead-lettered" log lines by message id.
func TestDeadLetteredAt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "evaluator.log")
	lines := `{"level":"warn","ts":1795763731.5,"caller":"bus/consume.go:446","msg":"message dead-lettered","service":"evaluator","msg_id":"poison/3","reason":"x"}
not json
{"level":"info","ts":1795763732.0,"msg":"handler failed; retrying","msg_id":"poison/3"}
{"level":"warn","ts":1795763733.25,"msg":"message dead-lettered","msg_id":"poison/3"}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := DeadLetteredAt([]string{path, filepath.Join(t.TempDir(), "never-started.log")})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Unix(1795763731, 5e8), time.Unix(1795763733, 25e7)}
	if len(got) != 1 || len(got["poison/3"]) != 2 || !got["poison/3"][0].Equal(want[0]) || !got["poison/3"][1].Equal(want[1]) {
		t.Fatalf("%v, want poison/3 at %v", got, want)
	}
}
