package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Poisoner publishes poison and forged traffic during a chaos run —
// messages that cannot be decoded, that name a campaign that does not
// exist, and candidates and generation requests of the running campaign
// that no proposer recorded or reserved — and remembers each, so that
// the run can check that every one became a dead letter (and nothing
// else did).
type Poisoner struct {
	Bus      *bus.Bus
	Campaign string
	Rand     *rand.Rand
	// Interval is the pause between two messages.
	Interval time.Duration
	Logf     func(format string, args ...any)

	mu     sync.Mutex
	sent   map[string]int       // body → dead letters expected
	sentAt map[string]time.Time // body → when its publication was acknowledged
	sentAs map[string]string    // body → its message id and subject
	sentID map[string]string    // body → its message id
	n      int
}

// Run publishes until ctx ends.
func (p *Poisoner) Run(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(p.Interval):
		}
		subject, data, letters := p.next()
		p.mu.Lock()
		p.n++
		id := fmt.Sprintf("poison/%d", p.n)
		p.mu.Unlock()
		if err := p.Bus.PublishRaw(ctx, subject, id, data); err != nil {
			if ctx.Err() == nil && p.Logf != nil {
				p.Logf("poison %s: %v", subject, err)
			}
			continue
		}
		p.mu.Lock()
		if p.sent == nil {
			p.sent, p.sentAt, p.sentAs, p.sentID = map[string]int{}, map[string]time.Time{}, map[string]string{}, map[string]string{}
		}
		p.sentID[string(data)] = id
		p.sent[string(data)] += letters
		p.sentAt[string(data)] = time.Now()
		p.sentAs[string(data)] = id + " on " + subject
		p.mu.Unlock()
	}
}

// next is a random kind of poison: its subject, body and the dead letters
// it must cause.
func (p *Poisoner) next() (subject string, data []byte, letters int) {
	n := p.Rand.IntN(1 << 30)
	unknown := fmt.Sprintf("poison-%d", n)
	st := messages.Structure{Formula: "NaCl", Species: []string{"Na", "Cl"}, Coords: [][3]float64{{0, 0, 0}, {0.5, 0.5, 0.5}},
		Lattice: [3][3]float64{{5.6, 0, 0}, {0, 5.6, 0}, {0, 0, 5.6}}}
	cand := func(campaign string, g int) *messages.Candidate {
		return &messages.Candidate{Schema: messages.SchemaVersion, ID: messages.CandidateID(campaign, g, 0), Campaign: campaign,
			Generation: g, Structure: st, Formula: "NaCl", Operator: "forged", Generator: "evolve", ProposedAt: time.Now().UTC()}
	}
	encode := func(m messages.Message) []byte {
		b, err := messages.Encode(m)
		if err != nil {
			panic(err) // the poisoner's own messages are valid
		}
		return b
	}
	switch p.Rand.IntN(5) {
	case 0: // undecodable, on the campaign's subject: the evaluator
		return messages.Subject(messages.SubjectCandidates, p.Campaign), []byte(fmt.Sprintf("{\"poison\": %d", n)), 1
	case 1: // a candidate of an unknown campaign: the evaluator
		return messages.Subject(messages.SubjectCandidates, unknown), encode(cand(unknown, 0)), 1
	case 2: // a forged candidate of the campaign: the evaluator
		return messages.Subject(messages.SubjectCandidates, p.Campaign), encode(cand(p.Campaign, 100000+n%1000)), 1
	case 3: // a forged generation request of the campaign: the proposer
		r := &messages.GenerationRequest{Schema: messages.SchemaVersion, Campaign: p.Campaign, Generation: 100000 + n%1000, Slots: 4,
			Trigger: "forged", RequestedAt: time.Now().UTC()}
		return messages.Subject(messages.SubjectPropose, p.Campaign), encode(r), 1
	default: // an evaluation of an unknown campaign: the reflector and the judge
		ev := &messages.Evaluation{Schema: messages.SchemaVersion, ID: messages.CandidateID(unknown, 0, 0), Campaign: unknown,
			Candidate: *cand(unknown, 0), Valid: true, Feasible: true, Stable: true, Novel: true, Score: 1, EvaluatedAt: time.Now().UTC()}
		return messages.Subject(messages.SubjectEvaluations, unknown), encode(ev), 2
	}
}

// Sent is the number of poison messages published.
func (p *Poisoner) Sent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for range p.sent {
		n++
	}
	return n
}

// NATSLossWindow is how long before a SIGKILL of the NATS server a
// message it acknowledged may be lost with it: NATS 2.9's file store
// writes acknowledged messages to disk asynchronously.
const NATSLossWindow = 2 * time.Second

// Check compares the dead letters with the poison sent: every poison
// message must have its dead letters, and no other message may have been
// dead-lettered (a real message of the campaign lost). A poison message
// published just before a SIGKILL of the NATS server (natsKilled, within
// NATSLossWindow) may have been lost with the server; so may a dead
// letter a service published just before it (lettered: when the services
// logged each message id dead-lettered, read from their logs — a message
// may wait long for its dead letter, behind a killed service's ack wait
// or a Redis being reconciled). A poison message missing dead letters for
// either reason is counted in lost instead. It returns the number of
// poison messages' dead letters found and the violations.
func (p *Poisoner) Check(letters []messages.DeadLetter, natsKilled []time.Time, lettered map[string][]time.Time) (found, lost int, violations []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	got := map[string]int{}
	for _, l := range letters {
		if _, ok := p.sent[string(l.Data)]; ok {
			got[string(l.Data)]++
			found++
			continue
		}
		violations = append(violations, fmt.Sprintf("a message that was not poison was dead-lettered: %s/%s %s: %s", l.Stream, l.Consumer, l.Subject, l.Reason))
	}
	var missing []string
	for body, want := range p.sent {
		switch n := got[body]; {
		case n == want:
		case n == 0 && nearKill(p.sentAt[body], natsKilled):
			lost++
		case n < want && slices.ContainsFunc(lettered[p.sentID[body]], func(at time.Time) bool { return nearKill(at, natsKilled) }):
			lost++
		default:
			var at []string
			for _, t := range lettered[p.sentID[body]] {
				at = append(at, t.Format("15:04:05.000"))
			}
			missing = append(missing, fmt.Sprintf("%s sent at %s: %d of %d dead letters (logged as dead-lettered at %v)",
				p.sentAs[body], p.sentAt[body].Format("15:04:05.000"), n, want, at))
		}
	}
	if len(missing) > 0 {
		kills := make([]string, len(natsKilled))
		for i, k := range natsKilled {
			kills[i] = k.Format("15:04:05.000")
		}
		violations = append(violations, fmt.Sprintf("%d of %d poison messages lack their dead letters (NATS killed at %v): %s", len(missing), len(p.sent), kills, list(missing)))
	}
	return found, lost, violations
}

// nearKill reports whether t lies within NATSLossWindow before one of
// the kills.
func nearKill(t time.Time, kills []time.Time) bool {
	for _, k := range kills {
		if !t.After(k) && k.Sub(t) <= NATSLossWindow {
			return true
		}
	}
	return false
}

// DeadLetteredAt reads the services' logs (zap's JSON lines) for when
// each message id was dead-lettered: the "message dead-lettered" lines
// with their msg_id and ts.
func DeadLetteredAt(logs []string) (map[string][]time.Time, error) {
	out := map[string][]time.Time{}
	for _, path := range logs {
		f, err := os.Open(path)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			var l struct {
				Msg   string  `json:"msg"`
				MsgID string  `json:"msg_id"`
				TS    float64 `json:"ts"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Msg != "message dead-lettered" || l.MsgID == "" {
				continue
			}
			sec, frac := math.Modf(l.TS)
			out[l.MsgID] = append(out[l.MsgID], time.Unix(int64(sec), int64(frac*1e9)))
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return out, nil
}
