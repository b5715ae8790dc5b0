package chaos

import (
	"math/rand/v2"
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
	if found, lost, v := p.Check(letters, nil); len(v) > 0 || found != len(letters) || lost != 0 {
		t.Fatalf("found %d of %d, lost %d: %v", found, len(letters), lost, v)
	}
	if _, _, v := p.Check(append(letters, messages.DeadLetter{Data: []byte("real")}), nil); len(v) != 1 {
		t.Fatalf("a real message's dead letter: %v", v)
	}
	// Without its dead letters, a poison message is missing, unless NATS
	// was killed just after it was published.
	if _, lost, v := p.Check(letters[1:], nil); len(v) != 1 || lost != 0 {
		t.Fatalf("a missing dead letter: lost %d, %v", lost, v)
	}
	only := map[string]int{string(letters[0].Data): p.sent[string(letters[0].Data)]}
	q := &Poisoner{sent: only, sentAt: map[string]time.Time{string(letters[0].Data): time.Now()}}
	if _, lost, v := q.Check(nil, []time.Time{time.Now().Add(time.Second)}); len(v) != 0 || lost != 1 {
		t.Fatalf("lost with a NATS kill: lost %d, %v", lost, v)
	}
}
