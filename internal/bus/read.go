package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// count is how many messages stream holds on subject (which may end in
// a wildcard), with the stream.
func (b *Bus) count(ctx context.Context, stream, subject string) (jetstream.Stream, int, error) {
	name := b.Stream(stream)
	s, err := b.JS.Stream(ctx, name)
	if err != nil {
		return nil, 0, fmt.Errorf("stream %s: %w", name, err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(b.Subject(subject)))
	if err != nil {
		return nil, 0, fmt.Errorf("stream %s: %w", name, err)
	}
	total := 0
	for _, n := range info.State.Subjects {
		total += int(n)
	}
	return s, total, nil
}

// Holds reports whether stream holds a message on subject (which may end
// in a wildcard).
func (b *Bus) Holds(ctx context.Context, stream, subject string) (bool, error) {
	_, n, err := b.count(ctx, stream, subject)
	return n > 0, err
}

// ReadSubject calls fn with every message of stream whose subject matches
// subject (which may end in a wildcard), in stream order, with the
// message's subject outside the namespace, and returns how many there
// were: what the stream held when the read began.
func (b *Bus) ReadSubject(ctx context.Context, stream, subject string, fn func(subject string, data []byte) error) (int, error) {
	s, total, err := b.count(ctx, stream, subject)
	if err != nil || total == 0 {
		return 0, err
	}
	filter := b.Subject(subject)
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", filter, err)
	}
	// One iterator: the ordered consumer's Next re-creates the consumer
	// for every message.
	it, err := cons.Messages()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", filter, err)
	}
	defer it.Stop()
	read := 0
	for read < total {
		msg, err := it.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil {
			return read, fmt.Errorf("read %s: message %d of %d: %w", filter, read+1, total, err)
		}
		read++
		if err := fn(b.Unsubject(msg.Subject()), msg.Data()); err != nil {
			return read, err
		}
	}
	return read, nil
}

// ReadQueue calls fn with every message a work-queue stream still holds
// (not yet acknowledged by its consumer) on subject, in stream order,
// without consuming it: a work queue admits no second consumer, so the
// messages are fetched one by one by sequence. It is for the few messages
// waiting in a queue (reconciliation), not for a large backlog.
func (b *Bus) ReadQueue(ctx context.Context, stream, subject string, fn func(subject string, data []byte) error) (int, error) {
	name := b.Stream(stream)
	s, err := b.JS.Stream(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", name, err)
	}
	filter := b.Subject(subject)
	read := 0
	for seq := info.State.FirstSeq; seq > 0 && seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // acknowledged meanwhile, or a gap
		}
		if err != nil {
			return read, fmt.Errorf("stream %s message %d: %w", name, seq, err)
		}
		if !subjectMatches(filter, m.Subject) {
			continue
		}
		read++
		if err := fn(b.Unsubject(m.Subject), m.Data); err != nil {
			return read, err
		}
	}
	return read, nil
}

// subjectMatches reports whether subject matches filter, a NATS subject
// with the wildcards * (one token) and > (the rest).
func subjectMatches(filter, subject string) bool {
	for {
		ft, frest, fmore := cut(filter)
		st, srest, smore := cut(subject)
		switch {
		case ft == ">":
			return st != ""
		case ft != "*" && ft != st:
			return false
		case !fmore || !smore:
			return fmore == smore
		}
		filter, subject = frest, srest
	}
}

func cut(s string) (token, rest string, more bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
