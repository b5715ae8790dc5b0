// Package store keeps Crucible's shared state in Redis: campaign specs and
// counters, island pools, generation bookkeeping, dedupe keys and memory
// banks. Every multi-key update is one Lua script over keys of one hash tag
// ({<campaign>} or {mem:<context>}), so the layout works on Redis Cluster,
// and every script is idempotent on the id of the message that caused it:
// a redelivered message changes nothing twice.
package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crucible-sci/crucible/internal/outage"
	"github.com/crucible-sci/crucible/internal/tlsfiles"
)

// Options configure the Redis connection.
type Options struct {
	// URL is redis://[user:password@]host:port[/db] (rediss:// for TLS),
	// or a comma-separated list of host:port for Redis Cluster.
	URL string
	// MasterName selects Redis Sentinel with URL's hosts as sentinels.
	MasterName string
	// Username and Password override those of the URL (Redis AUTH).
	Username, Password string
	// TLSCAFile, TLSCertFile, TLSKeyFile configure TLS explicitly.
	TLSCAFile, TLSCertFile, TLSKeyFile string
	// Namespace isolates several installations (or test runs) on one
	// server: every key starts with crucible:<namespace>:.
	Namespace string
	// Dial, when set, opens the connections instead of the network (an
	// in-process server, embedded.Redis.Dial); URL still names the server.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Notify, when set, is told once, in one line (Unreachable), that
	// Redis cannot be reached at start while Open retries quietly.
	Notify func(line string)
	// Fenced refuses every new connection to a Redis server whose state
	// is not reconciled for its run (ErrNotReconciled; see Ready): work a
	// service had in flight when Redis restarted from an earlier state
	// cannot then reach that state before the reflector has reconciled
	// it. The services open their store fenced; the reflector reconciles
	// through an unfenced one (Unfenced).
	Fenced bool
	// History, when set, tells whether the installation has a history in
	// the streams (a campaign was submitted): a state never marked
	// reconciled is then one Redis lost, not a new installation's (see
	// Ready), and one without a history is marked reconciled when the
	// store opens, before anything is submitted. The services and the
	// local stack ask the CAMPAIGNS stream.
	History func(ctx context.Context) (bool, error)
}

// Store is the Redis state of Crucible.
type Store struct {
	rdb     redis.UniversalClient
	prefix  string
	members memberCache
	addr    string
	notify  func(string)
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	gate    gate
	// uo and fenced are how the client was made (Unfenced).
	uo     redis.UniversalOptions
	fenced bool
}

// Open connects to Redis and checks the connection.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.URL == "" {
		return nil, errors.New("store: no Redis URL")
	}
	uo := &redis.UniversalOptions{MasterName: o.MasterName}
	if strings.Contains(o.URL, "://") {
		po, err := redis.ParseURL(o.URL)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		uo.Addrs = []string{po.Addr}
		uo.DB = po.DB
		uo.Username, uo.Password = po.Username, po.Password
		uo.TLSConfig = po.TLSConfig
	} else {
		for _, a := range strings.Split(o.URL, ",") {
			uo.Addrs = append(uo.Addrs, strings.TrimSpace(a))
		}
	}
	if o.Username != "" {
		uo.Username = o.Username
	}
	if o.Password != "" {
		uo.Password = o.Password
	}
	if o.TLSCAFile != "" || o.TLSCertFile != "" {
		cfg, err := tlsfiles.Client(o.TLSCAFile, o.TLSCertFile, o.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		uo.TLSConfig = cfg
	}
	uo.Dialer = o.Dial
	uo.MaxRetries = 5
	uo.MinRetryBackoff = 20 * time.Millisecond
	uo.MaxRetryBackoff = 500 * time.Millisecond
	s := &Store{prefix: "crucible:", addr: strings.Join(uo.Addrs, ","), notify: o.Notify, dial: o.Dial, uo: *uo, fenced: o.Fenced}
	if o.Namespace != "" {
		s.prefix = "crucible:" + o.Namespace + ":"
	}
	if o.History != nil {
		s.gate.history.Store(&o.History)
	}
	rdb := s.newClient(o.Fenced)
	s.rdb = rdb
	if err := s.Ping(ctx); err != nil {
		rdb.Close()
		return nil, err
	}
	s.markIfNew(ctx)
	return s, nil
}

// Ping checks the connection, retrying with backoff (at most outage.RetryEvery
// apart) until ctx ends: a service that starts while Redis restarts or
// fails over waits for it, as it waits for NATS, instead of exiting into
// a crash loop. The first failure is told once to Options.Notify. Give
// ctx a deadline.
func (s *Store) Ping(ctx context.Context) error {
	delay := 100 * time.Millisecond
	told := false
	var cause error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.rdb.Ping(pctx).Err()
		cancel()
		if err == nil || errors.Is(err, ErrNotReconciled) {
			return nil // reachable (a fenced store waits for the reflector)
		}
		if cause == nil || ctx.Err() == nil {
			// The last failure before ctx ended says why; a dial that
			// fails says it better than the pool's timeout.
			cause = err
			if s.dial == nil && !strings.Contains(s.addr, ",") {
				if perr := outage.Probe(s.addr); perr != nil {
					cause = perr
				}
			}
		}
		if !told && s.notify != nil {
			s.notify(outage.Unreachable("Redis", s.addr, cause, outage.RetryEvery))
			told = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("store: cannot reach Redis at %s: %s (gave up: %w)", s.addr, outage.Cause(cause), ctx.Err())
		case <-time.After(delay):
		}
		delay = min(2*delay, outage.RetryEvery)
	}
}

// Close closes the connection.
func (s *Store) Close() error { return s.rdb.Close() }

// AddHook instruments the store's commands (tracing; tests that play a
// race between two services at a chosen command).
func (s *Store) AddHook(h redis.Hook) { s.rdb.AddHook(h) }

// Prefix is what every key of the store starts with ("crucible:" or
// "crucible:<namespace>:").
func (s *Store) Prefix() string { return s.prefix }

// Client exposes the Redis client (metrics, tests).
func (s *Store) Client() redis.UniversalClient { return s.rdb }

// ck is a campaign key: crucible:[ns:]{<campaign>}:<parts>.
func (s *Store) ck(campaign string, parts ...string) string {
	return s.prefix + "{" + campaign + "}:" + strings.Join(parts, ":")
}

// mk is a memory-bank key: crucible:[ns:]{mem:<context>}:<parts>.
func (s *Store) mk(context string, parts ...string) string {
	return s.prefix + "{mem:" + context + "}:" + strings.Join(parts, ":")
}

// DeleteNamespace removes every key of the store's namespace (tests clean
// up with it). It refuses to run without a namespace.
func (s *Store) DeleteNamespace(ctx context.Context) error {
	if s.prefix == "crucible:" {
		return errors.New("store: refusing to delete keys outside a namespace")
	}
	iter := s.rdb.Scan(ctx, 0, s.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := s.rdb.Del(ctx, k).Err(); err != nil {
			return err
		}
	}
	return nil
}
