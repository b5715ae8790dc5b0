// Package bus connects Crucible's services to NATS JetStream: it creates
// the streams and durable consumers that pkg/messages describes, publishes
// messages with their deterministic ids, and runs consumer loops whose
// retry, dead-lettering and draining are middleware, so a service's handler
// is a plain function of a decoded message.
package bus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/outage"
	"github.com/crucible-sci/crucible/internal/tlsfiles"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Options configure the connection. Every credential is optional; the
// services read them from flags and CRUCIBLE_NATS_* environment variables.
type Options struct {
	URL  string // nats://host:4222, comma-separated for a cluster
	Name string // client name shown by the server (service and replica)
	// User and Password authenticate with a username and password.
	User, Password string
	// InboxPrefix is the prefix of the connection's reply subjects (every
	// JetStream request and pull answers there). Empty means _INBOX_<User>
	// for a named user, so a server can let each user subscribe to its
	// own replies only (permission _INBOX_<user>.>), and NATS's _INBOX
	// without one.
	InboxPrefix string
	// Token authenticates with a token.
	Token string
	// NKeySeedFile authenticates with an nkey seed file.
	NKeySeedFile string
	// CredsFile authenticates with a JWT user credentials file.
	CredsFile string
	// TLSCAFile verifies the server; TLSCertFile and TLSKeyFile present a
	// client certificate.
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Replicas of each stream (1 for a single server, 3 for a cluster).
	Replicas int
	// MemoryStorage keeps streams in memory instead of on disk (tests).
	MemoryStorage bool
	// Namespace isolates several Crucible installations (or test runs) on
	// one NATS server: stream names get the suffix _<namespace> and
	// subjects the prefix <namespace>. Empty by default.
	Namespace string
	// Provisioned says an administrator created the streams and durable
	// consumers (`crucible setup`): EnsureStreams and EnsureConsumer then
	// wait for them to exist instead of creating them, so a service's NATS
	// user needs no permission to create or change streams and consumers.
	Provisioned bool
	// InProcess connects to a server embedded in this process without a
	// socket (local mode); URL is then only what logs and errors show.
	InProcess nats.InProcessConnProvider
	Logger    *zap.Logger
	// Notify, when set, is told once, in one line, that NATS cannot be
	// reached at start while Connect retries quietly (default: a warning
	// in the log).
	Notify func(line string)
}

// Bus is a JetStream connection.
type Bus struct {
	NC      *nats.Conn
	JS      jetstream.JetStream
	opts    Options
	log     *zap.Logger
	denials *denials
}

// Connect dials NATS. The connection reconnects forever, so a server
// restart pauses the services instead of stopping them.
func Connect(ctx context.Context, o Options) (*Bus, error) {
	if o.URL == "" {
		return nil, errors.New("bus: no NATS URL")
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	log := o.Logger
	denied := &denials{}
	nopts := []nats.Option{
		nats.Name(o.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectBufSize(32 << 20),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", zap.Error(err))
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("nats reconnected", zap.String("url", nc.ConnectedUrlRedacted())) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			denied.record(err)
			log.Warn("nats error", zap.String("subject", subj), zap.Error(err))
		}),
	}
	if o.InProcess != nil {
		nopts = append(nopts, nats.InProcessServer(o.InProcess))
	}
	if o.User != "" {
		nopts = append(nopts, nats.UserInfo(o.User, o.Password))
	}
	if prefix := o.inboxPrefix(); prefix != "" {
		if strings.ContainsAny(prefix, " \t\r\n*>") || strings.HasSuffix(prefix, ".") || strings.HasPrefix(prefix, ".") {
			return nil, fmt.Errorf("bus: inbox prefix %q is not a subject prefix (no spaces, wildcards or leading/trailing dots)", prefix)
		}
		nopts = append(nopts, nats.CustomInboxPrefix(prefix))
	}
	if o.Token != "" {
		nopts = append(nopts, nats.Token(o.Token))
	}
	if o.NKeySeedFile != "" {
		opt, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
		if err != nil {
			return nil, fmt.Errorf("bus: nkey seed %s: %w", o.NKeySeedFile, err)
		}
		nopts = append(nopts, opt)
	}
	if o.CredsFile != "" {
		nopts = append(nopts, nats.UserCredentials(o.CredsFile))
	}
	if o.TLSCAFile != "" || o.TLSCertFile != "" {
		cfg, err := tlsfiles.Client(o.TLSCAFile, o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("bus: %w", err)
		}
		nopts = append(nopts, nats.Secure(cfg))
	}
	nc, err := nats.Connect(o.URL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect %s: %w", redact(o.URL), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	b := &Bus{NC: nc, JS: js, opts: o, log: log, denials: denied}
	// Wait for the first connection (RetryOnFailedConnect makes Connect
	// return before it). After a second without one, a probe of the
	// server says why, once: a name that does not resolve fails at once,
	// anything else is retried quietly.
	notify := o.Notify
	if notify == nil {
		notify = func(line string) { log.Warn(line) }
	}
	probeAt := time.Now().Add(time.Second)
	var lastCause error
	for !nc.IsConnected() {
		if o.InProcess == nil && !probeAt.IsZero() && time.Now().After(probeAt) {
			probeAt = time.Time{}
			if addr, err := probe(o.URL); err != nil {
				var dns *net.DNSError
				if errors.As(err, &dns) && dns.IsNotFound {
					nc.Close()
					return nil, fmt.Errorf("bus: cannot reach NATS at %s: %s", addr, outage.Cause(err))
				}
				lastCause = err
				notify(outage.Unreachable("NATS", addr, err, 250*time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			nc.Close()
			if lastCause != nil {
				return nil, fmt.Errorf("bus: cannot reach NATS at %s: %s (gave up: %w)", redact(o.URL), outage.Cause(lastCause), ctx.Err())
			}
			return nil, fmt.Errorf("bus: connect %s: %w", redact(o.URL), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return b, nil
}

// inboxPrefix is the reply-subject prefix the connection uses ("" for
// NATS's default).
func (o Options) inboxPrefix() string {
	switch {
	case o.InboxPrefix != "":
		return o.InboxPrefix
	case o.User != "":
		return InboxPrefix(o.User)
	}
	return ""
}

// InboxPrefix is the reply-subject prefix of a named NATS user,
// _INBOX_<user>: the server's permissions give each user subscribe rights
// on its own prefix only, so no user reads another's replies (the messages
// a service pulls arrive on its inbox).
func InboxPrefix(user string) string { return "_INBOX_" + user }

// probe dials the first server of a NATS URL list and returns its
// address and why it cannot be reached (nil when it can).
func probe(urls string) (string, error) {
	first, _, _ := strings.Cut(urls, ",")
	u, err := url.Parse(strings.TrimSpace(first))
	if err != nil || u.Host == "" {
		return redact(first), nil // nats.go says what is wrong with it
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "4222")
	}
	return addr, outage.Probe(addr)
}

// redact hides credentials in a (possibly comma-separated) server URL.
func redact(u string) string {
	parts := strings.Split(u, ",")
	for i, p := range parts {
		if pu, err := url.Parse(strings.TrimSpace(p)); err == nil && pu.User != nil {
			pu.User = url.User("***")
			parts[i] = pu.String()
		}
	}
	return strings.Join(parts, ",")
}

// DeleteStreams removes every stream of the namespace (tests clean up
// with it).
func (b *Bus) DeleteStreams(ctx context.Context) error {
	var errs []error
	for _, s := range messages.Streams {
		if err := b.JS.DeleteStream(ctx, b.Stream(s.Name)); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close drains the connection: pending publishes are flushed.
func (b *Bus) Close() {
	if b == nil || b.NC == nil {
		return
	}
	_ = b.NC.Drain()
	for i := 0; i < 100 && !b.NC.IsClosed(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	b.NC.Close()
}

// Subject maps a contract subject into the namespace.
func (b *Bus) Subject(s string) string {
	if b.opts.Namespace == "" {
		return s
	}
	return b.opts.Namespace + "." + s
}

// Unsubject maps a namespaced subject back to the contract subject.
func (b *Bus) Unsubject(s string) string {
	if b.opts.Namespace == "" {
		return s
	}
	return strings.TrimPrefix(s, b.opts.Namespace+".")
}

// Stream maps a contract stream name into the namespace.
func (b *Bus) Stream(name string) string {
	if b.opts.Namespace == "" {
		return name
	}
	return name + "_" + b.opts.Namespace
}

// Namespace is the bus's namespace ("" by default).
func (b *Bus) Namespace() string { return b.opts.Namespace }

// Healthy reports whether the connection is up.
func (b *Bus) Healthy() error {
	if !b.NC.IsConnected() {
		return fmt.Errorf("nats: %s", b.NC.Status())
	}
	return nil
}

// EnsureStreams creates every stream of messages.Streams, or updates it to
// the current definition. It uses only stream settings that NATS 2.9
// understands. On a provisioned bus it waits until every stream exists.
func (b *Bus) EnsureStreams(ctx context.Context) error {
	if b.opts.Provisioned {
		return b.ProvisionStreams(ctx, false)
	}
	return b.ProvisionStreams(ctx, true)
}

// ProvisionStreams creates or updates the streams (create) or waits for
// them to exist (!create).
func (b *Bus) ProvisionStreams(ctx context.Context, create bool) error {
	if !create {
		for _, s := range messages.Streams {
			if err := b.waitFor(ctx, "stream "+b.Stream(s.Name), func() error {
				_, err := b.JS.Stream(ctx, b.Stream(s.Name))
				return err
			}); err != nil {
				return fmt.Errorf("bus: stream %s: %w", s.Name, err)
			}
		}
		return nil
	}
	for _, s := range messages.Streams {
		subjects := make([]string, len(s.Subjects))
		for i, subj := range s.Subjects {
			subjects[i] = b.Subject(subj)
		}
		cfg := jetstream.StreamConfig{
			Name:        b.Stream(s.Name),
			Description: s.Description,
			Subjects:    subjects,
			MaxAge:      s.MaxAge,
			Duplicates:  s.Duplicates,
			Replicas:    b.opts.Replicas,
			Storage:     jetstream.FileStorage,
			Discard:     jetstream.DiscardOld,
		}
		if b.opts.MemoryStorage {
			cfg.Storage = jetstream.MemoryStorage
		}
		if s.Retention == messages.WorkQueueRetention {
			cfg.Retention = jetstream.WorkQueuePolicy
		}
		if err := retry(ctx, func() error { return b.ensureStream(ctx, cfg) }); err != nil {
			return fmt.Errorf("bus: stream %s: %w", s.Name, err)
		}
	}
	return nil
}

// ensureStream creates the stream, or updates it when a stream of that
// name exists with another configuration (the server answers a creation
// with the configuration the stream already has as a success). It does not
// update a stream that is as wanted: services starting together on a new
// server would otherwise send updates while another service's creation is
// under way, and nats-server 2.9 (Debian's 2.9.10 among them) dies of a nil
// pointer when an update races the creation of the same stream.
//
// While another service's creation of the stream is under way, nats-server
// 2.9 may answer that the subjects overlap with an existing stream; that is
// worth retrying unless a stream of another name holds them.
func (b *Bus) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) error {
	_, err := b.JS.CreateStream(ctx, cfg)
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, jetstream.ErrStreamNameAlreadyInUse):
		_, err = b.JS.UpdateStream(ctx, cfg)
	case errors.As(err, &apiErr) && apiErr.ErrorCode == errCodeSubjectOverlap:
		for _, subj := range cfg.Subjects {
			if owner, lerr := b.JS.StreamNameBySubject(ctx, subj); lerr == nil && owner != cfg.Name {
				return fmt.Errorf("subject %s belongs to stream %s: %w", subj, owner, err)
			}
		}
		return fmt.Errorf("%w: %w", errNotYet, err)
	}
	return err
}

// errCodeSubjectOverlap is the JetStream API's error code for a stream
// whose subjects overlap with an existing stream's.
const errCodeSubjectOverlap jetstream.ErrorCode = 10065

// waitFor retries lookup until it succeeds, waiting while what is not
// found (an administrator has yet to create it) or the server is
// unreachable.
func (b *Bus) waitFor(ctx context.Context, what string, lookup func() error) error {
	logged := false
	return retry(ctx, func() error {
		err := lookup()
		if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound) {
			if !logged {
				b.log.Warn("waiting for "+what+" (created by \"crucible setup\")", zap.Error(err))
				logged = true
			}
			return fmt.Errorf("%w: %w", errNotYet, err)
		}
		return err
	})
}

// errNotYet marks a lookup worth retrying: the object does not exist yet.
var errNotYet = errors.New("not created yet")

// EnsureConsumer creates the durable pull consumer spec describes, or
// updates it; on a provisioned bus it waits until the consumer exists.
func (b *Bus) EnsureConsumer(ctx context.Context, spec messages.ConsumerSpec) (jetstream.Consumer, error) {
	if b.opts.Provisioned {
		var cons jetstream.Consumer
		err := b.waitFor(ctx, "consumer "+spec.Name, func() error {
			var err error
			cons, err = b.JS.Consumer(ctx, b.Stream(spec.Stream), spec.Name)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("bus: consumer %s on %s: %w", spec.Name, spec.Stream, err)
		}
		return cons, nil
	}
	return b.CreateConsumer(ctx, spec)
}

// CreateConsumer creates the durable pull consumer spec describes, or
// updates it.
func (b *Bus) CreateConsumer(ctx context.Context, spec messages.ConsumerSpec) (jetstream.Consumer, error) {
	cfg := jetstream.ConsumerConfig{
		Durable:       spec.Name,
		FilterSubject: b.Subject(spec.FilterSubject),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       spec.AckWait,
		// The consumer itself never gives up: the middleware dead-letters
		// a message that keeps failing, with the reason, and terminates
		// it, but redelivers without limit while Redis or NATS is down
		// (failure.go).
		MaxDeliver:    -1,
		MaxAckPending: spec.MaxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		ReplayPolicy:  jetstream.ReplayInstantPolicy,
	}
	var cons jetstream.Consumer
	err := retry(ctx, func() error {
		var err error
		cons, err = b.JS.CreateOrUpdateConsumer(ctx, b.Stream(spec.Stream), cfg)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus: consumer %s on %s: %w", spec.Name, spec.Stream, err)
	}
	return cons, nil
}

// Publish validates and encodes m and publishes it on subject with its
// deterministic id as Nats-Msg-Id, retrying transient failures (a server
// restarting, a leader election) until ctx ends. A message the stream
// already holds is dropped by the stream: publishing twice is harmless.
func (b *Bus) Publish(ctx context.Context, subject string, m messages.Message) error {
	msg, err := b.message(subject, m)
	if err != nil {
		return err
	}
	return b.publishMsg(ctx, msg, subject, m.MsgID())
}

// message encodes m for subject, with its id and headers.
func (b *Bus) message(subject string, m messages.Message) (*nats.Msg, error) {
	data, err := messages.Encode(m)
	if err != nil {
		return nil, fmt.Errorf("bus: publish %s: %w", subject, err)
	}
	msg := b.rawMessage(subject, m.MsgID(), data)
	if h, ok := m.(messages.Headered); ok {
		for k, v := range h.Headers() {
			msg.Header.Set(k, v)
		}
	}
	return msg, nil
}

// PublishRaw publishes data with the given message id.
func (b *Bus) PublishRaw(ctx context.Context, subject, msgID string, data []byte) error {
	return b.publishMsg(ctx, b.rawMessage(subject, msgID, data), subject, msgID)
}

// rawMessage is data for subject with the given message id.
func (b *Bus) rawMessage(subject, msgID string, data []byte) *nats.Msg {
	msg := &nats.Msg{Subject: b.Subject(subject), Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, msgID)
	return msg
}

// publishMsg publishes msg, retrying transient failures.
// A publish the server refuses for want of permission fails at once with
// the violation, not after retries as a timeout.
func (b *Bus) publishMsg(ctx context.Context, msg *nats.Msg, subject, msgID string) error {
	_, err := b.publishAck(ctx, msg, subject, msgID)
	return err
}

// publishAck is publishMsg returning the stream's acknowledgement.
func (b *Bus) publishAck(ctx context.Context, msg *nats.Msg, subject, msgID string) (*jetstream.PubAck, error) {
	var ack *jetstream.PubAck
	err := retry(ctx, func() error {
		start := time.Now()
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var err error
		ack, err = b.JS.PublishMsg(pctx, msg)
		if err != nil && b.denials != nil {
			if perr := b.denials.since(msg.Subject, start); perr != nil {
				return Permanent(perr)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bus: publish %s (%s): %w", subject, msgID, err)
	}
	return ack, nil
}

// Republish publishes data on subject with header, its Nats-Msg-Id set
// to msgID, retrying transient failures as Publish does: the re-run of a
// dead letter's message. duplicate reports that the stream held a
// message with msgID already (within its duplicate window) and dropped
// this one.
func (b *Bus) Republish(ctx context.Context, subject, msgID string, header nats.Header, data []byte) (duplicate bool, err error) {
	msg := b.rawMessage(subject, msgID, data)
	for k, vs := range header {
		if k == jetstream.MsgIDHeader {
			continue
		}
		for _, v := range vs {
			msg.Header.Add(k, v)
		}
	}
	ack, err := b.publishAck(ctx, msg, subject, msgID)
	if err != nil {
		return false, err
	}
	return ack.Duplicate, nil
}

// DeleteMessage removes the message with sequence seq from stream; one
// that is gone already is no error. A refusal for want of permission
// fails as the server's permissions violation (PermissionDenied).
func (b *Bus) DeleteMessage(ctx context.Context, stream string, seq uint64) error {
	name := b.Stream(stream)
	st, err := b.JS.Stream(ctx, name)
	if err != nil {
		return fmt.Errorf("stream %s: %w", name, err)
	}
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = st.DeleteMsg(dctx, seq)
	switch {
	case err == nil, errors.Is(err, jetstream.ErrMsgDeleteUnsuccessful) && gone(err):
		return nil
	case b.denials != nil:
		if perr := b.denials.since("$JS.API.STREAM.MSG.DELETE."+name, start); perr != nil {
			err = perr
		}
	}
	return fmt.Errorf("delete message %d of %s: %w", seq, name, err)
}

// gone reports whether a failed deletion found no message to delete
// ("sequence N not found", "no message found").
func gone(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "not found") || strings.Contains(msg, "no message found")
}

// PermissionDenied reports whether err is the NATS server refusing a
// subject to this connection's user.
func PermissionDenied(err error) bool { return isPermissionViolation(err) }

// retry runs f until it succeeds, returns a permanent error, or ctx ends,
// backing off exponentially from 50 ms to 2 s.
func retry(ctx context.Context, f func() error) error {
	delay := 50 * time.Millisecond
	for {
		err := f()
		if err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// transient reports whether err may go away on its own: the server is
// unreachable or restarting, or JetStream is electing a leader.
func transient(err error) bool {
	if errors.Is(err, errNotYet) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503: JetStream not available yet; 500-class: cluster hiccups.
		return apiErr.Code >= 500
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrTimeout),
		errors.Is(err, nats.ErrNoResponders),
		errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, jetstream.ErrJetStreamNotEnabled),
		errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrConnectionReconnecting):
		return true
	}
	return false
}

// Outgoing is one message of PublishAll.
type Outgoing struct {
	Subject string
	Message messages.Message
}

// PublishAll publishes several messages at once and waits for every
// acknowledgement, which costs one round trip instead of one per message.
// A message whose asynchronous publish fails is published again
// synchronously (with Publish's retries); the result has one error (or
// nil) per message.
func (b *Bus) PublishAll(ctx context.Context, out []Outgoing) []error {
	errs := make([]error, len(out))
	futures := make([]jetstream.PubAckFuture, len(out))
	for i, o := range out {
		msg, err := b.message(o.Subject, o.Message)
		if err != nil {
			errs[i] = err
			continue
		}
		if futures[i], err = b.JS.PublishMsgAsync(msg); err != nil {
			futures[i] = nil
		}
	}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for i, f := range futures {
		if errs[i] != nil {
			continue
		}
		ok := false
		if f != nil {
			select {
			case <-f.Ok():
				ok = true
			case <-f.Err():
			case <-timeout.C:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				continue
			}
		}
		if !ok {
			errs[i] = b.Publish(ctx, out[i].Subject, out[i].Message)
		}
	}
	return errs
}

// Purge removes the messages of a stream whose subject matches filter
// (a campaign's, when it is deleted).
func (b *Bus) Purge(ctx context.Context, stream, filter string) error {
	st, err := b.JS.Stream(ctx, b.Stream(stream))
	if err != nil {
		return fmt.Errorf("purge %s: %w", stream, err)
	}
	if err := st.Purge(ctx, jetstream.WithPurgeSubject(b.Subject(filter))); err != nil {
		return fmt.Errorf("purge %s of %s: %w", filter, stream, err)
	}
	return nil
}
