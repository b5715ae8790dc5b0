package bus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

// Failure policy of the consumer loops. A handler's error is one of:
//
//   - permanent (Permanent, a panic, a message too large or undecodable):
//     dead-lettered at once with the reason;
//   - a wait (Later): the message is not ready to be handled yet (an
//     ordered campaign's evaluation ahead of its turn); redelivered after
//     the delay for as long as it takes, never dead-lettered;
//   - unavailable infrastructure (Redis or NATS down, restarting or
//     unreachable; Unavailable): redelivered with backoff until it is
//     back, never dead-lettered, since dead-lettering an evaluation
//     because Redis restarted would stall its campaign;
//   - anything else: redelivered with exponential backoff and jitter, and
//     dead-lettered with the last error on its MaxDeliver-th delivery
//     (DefaultMaxDeliver when the consumer spec sets none).

// DefaultMaxDeliver bounds the deliveries of a message whose handling
// keeps failing for a reason that is neither permanent nor an outage:
// with retryDelay's backoff (0.4 s, 0.8 s, … 10 s) the last of 10
// deliveries comes about a minute after the first.
const DefaultMaxDeliver = 10

// MaxMessageBytes is the largest message a consumer loop hands to a
// handler; a larger one is dead-lettered at once as oversize. No
// message Crucible publishes comes near it (a candidate is a few
// kilobytes, an evaluation with its relaxation tens).
const MaxMessageBytes = 1 << 20

// MaxDeadLetterData is the most of a message's body a dead letter
// carries. A dead letter embeds the body, which JSON encodes in base64
// (4/3 of its size): a whole body near the server's max_payload would
// make the dead letter itself too large to publish. A longer body is cut
// to this length, and the dead letter records the original size.
const MaxDeadLetterData = 64 << 10

// waitError marks a failure that is a wait (Later).
type waitError struct{ err error }

func (e *waitError) Error() string { return e.err.Error() }
func (e *waitError) Unwrap() error { return e.err }

// Later asks for a message to be redelivered after d (at most
// MaxRetryAfter) because it cannot be handled yet; unlike other
// failures, waiting never dead-letters it.
func Later(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &DelayError{Delay: min(d, MaxRetryAfter), Err: &waitError{err: err}}
}

// ErrUnavailable marks a failure of the infrastructure (Redis, NATS)
// that retrying will fix once it is back.
var ErrUnavailable = errors.New("infrastructure unavailable")

// Unavailable wraps err as an outage of the infrastructure.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// unbounded reports whether a failure is retried without limit: a wait,
// or an outage of the infrastructure (marked, or recognised by its
// error: a refused or broken connection, a timeout, a NATS reconnecting
// or electing a leader, a Redis server loading its data or read-only
// during a failover).
func unbounded(err error) bool {
	var w *waitError
	if errors.As(err, &w) || errors.Is(err, ErrUnavailable) || transient(err) {
		return true
	}
	if isPermissionViolation(err) {
		return false
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, context.Canceled),
		errors.Is(err, nats.ErrConnectionClosed):
		return true
	}
	msg := err.Error()
	for _, s := range []string{
		// go-redis's own errors and the server's replies of a Redis that is
		// not serving yet.
		"redis: client is closed", "redis: connection pool timeout", "connection refused",
		"LOADING ", "READONLY ", "MASTERDOWN ", "TRYAGAIN ", "CLUSTERDOWN ", "BUSY ",
		// A Redis restored from an earlier state, until the reflector
		// has reconciled it (store.ErrNotReconciled).
		"state not reconciled",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// isPermissionViolation reports whether err is the server refusing a
// subject to this user.
func isPermissionViolation(err error) bool {
	return err != nil && (errors.Is(err, nats.ErrPermissionViolation) || strings.Contains(strings.ToLower(err.Error()), "permissions violation"))
}

// deadLetterData is what a dead letter keeps of a body: all of it, or its
// first MaxDeadLetterData bytes.
func deadLetterData(data []byte) (kept []byte, truncated bool) {
	if len(data) <= MaxDeadLetterData {
		return data, false
	}
	return data[:MaxDeadLetterData], true
}

// denials remembers the server's permission violations, which reach the
// client asynchronously: a JetStream publish the server refuses is never
// acknowledged, so without them it would fail as "context deadline
// exceeded" after its timeout, retried as an outage.
type denials struct {
	mu   sync.Mutex
	last map[string]denial // by subject
}

type denial struct {
	err error
	at  time.Time
}

// record keeps a permission violation reported by the server.
func (p *denials) record(err error) {
	if !isPermissionViolation(err) {
		return
	}
	subject := violatedSubject(err.Error())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last = map[string]denial{}
	}
	if len(p.last) > 1000 {
		p.last = map[string]denial{}
	}
	p.last[subject] = denial{err: err, at: time.Now()}
}

// since returns the permission violation reported for subject at or after
// t, or nil.
func (p *denials) since(subject string, t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d, ok := p.last[subject]; ok && !d.at.Before(t) {
		return d.err
	}
	return nil
}

// violatedSubject reads the subject of a violation's text, `Permissions
// Violation for Publish to "subject"`.
func violatedSubject(msg string) string {
	i := strings.IndexByte(msg, '"')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(msg[i+1:], '"')
	if j < 0 {
		return ""
	}
	return msg[i+1 : i+1+j]
}
