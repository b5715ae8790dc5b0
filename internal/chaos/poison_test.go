package chaos

import (
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestPoisonKinds: every kind of poison is built (valid where it must
// be), and Check matches dead letters to it.
func TestPoisonKinds(t *testing.T) {
	p := &Poisoner{Campaign: "chaos-1", Rand: rand.New(rand.NewPCG(1, 2))}
	p.sent = map[string]int{}
	var letters []messages.DeadLetter
	for range 50 {
		subject, data, n := p.next()
		p.sent[string(data)] += n
		for range n {
			letters = append(letters, messages.DeadLetter{Subject: subject, Data: data, Reason: "x"})
		}
	}
	if found, v := p.Check(letters); len(v) > 0 || found != len(letters) {
		t.Fatalf("found %d of %d: %v", found, len(letters), v)
	}
	if _, v := p.Check(append(letters, messages.DeadLetter{Data: []byte("real")})); len(v) != 1 {
		t.Fatalf("a real message's dead letter: %v", v)
	}
}
