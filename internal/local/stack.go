// Package local runs a whole Crucible installation in one process: NATS
// with JetStream and a Redis-protocol server (embedded, or real ones), the
// four services as goroutines, and a client that submits a campaign and
// collects its results. `crucible local`, the end-to-end tests and the
// pipeline benchmark use it.
package local

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/embedded"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/judge"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/service/reflector"
	"github.com/crucible-sci/crucible/internal/store"
)

// Options configure a local stack.
type Options struct {
	// NATSURL and RedisURL select real servers; empty starts embedded ones.
	NATSURL, RedisURL string
	// JetStreamDir stores the embedded server's streams ("" = temporary).
	JetStreamDir string
	// Namespace isolates the stack on shared servers.
	Namespace string
	// MemoryStreams keeps streams in memory (tests on a real server).
	MemoryStreams bool

	// Proposer builds the proposer's configuration once the store is
	// open (its generators read the store).
	Proposer  func(*store.Store) proposer.Config
	Evaluator evaluator.Config
	Reflector reflector.Config
	// ReflectorLLM builds the reflector's LLM once the store is open
	// (nil: campaigns with reflector llm reflect by the rules).
	ReflectorLLM func(*store.Store) reflector.LLM
	Judge        judge.Config
	// Oracle is shared by the evaluator replicas.
	Oracle evaluator.Oracle
	// Evaluators is the number of evaluator replicas (default 1).
	Evaluators int
	// NoServices starts only the infrastructure (a client-only stack).
	NoServices bool
	// Notify is told, in one line each, that NATS or Redis cannot be
	// reached at start (nil: a warning in the log).
	Notify func(line string)
	// ResumeFrom is the output folder of an interrupted run whose store
	// the embedded store starts from (Stack.Suspend wrote it).
	ResumeFrom string
	Log        *zap.Logger
}

// Stack is a running local installation.
type Stack struct {
	Bus   *bus.Bus
	Store *store.Store
	Log   *zap.Logger

	opts  Options
	nats  *embedded.NATS
	redis *embedded.Redis

	mu       sync.Mutex
	services map[string]*running
	seq      int
	closed   sync.Once
}

type running struct {
	cancel context.CancelFunc
	done   chan error
}

// Start starts the servers (unless real ones are given), connects, and
// starts one proposer, opts.Evaluators evaluators, one reflector and one
// judge.
func Start(ctx context.Context, opts Options) (st *Stack, err error) {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Evaluators < 1 {
		opts.Evaluators = 1
	}
	s := &Stack{opts: opts, Log: opts.Log, services: map[string]*running{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	natsURL, redisURL := opts.NATSURL, opts.RedisURL
	store.RouteLogs(opts.Log)
	busOpts := bus.Options{Name: "crucible-local", Namespace: opts.Namespace, MemoryStorage: opts.MemoryStreams, Logger: opts.Log, Notify: opts.Notify}
	if natsURL == "" {
		if s.nats, err = embedded.StartNATS(opts.JetStreamDir); err != nil {
			return nil, err
		}
		// The services talk to the embedded server without a socket.
		natsURL, busOpts.InProcess = s.nats.URL(), s.nats.Server()
	}
	busOpts.URL = natsURL
	storeOpts := store.Options{URL: redisURL, Namespace: opts.Namespace, Notify: opts.Notify}
	if redisURL == "" {
		if s.redis, err = embedded.StartRedis(); err != nil {
			return nil, err
		}
		// As with NATS, the services reach the embedded server in-process.
		storeOpts.URL, storeOpts.Dial = s.redis.URL(), s.redis.Dial
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if s.Bus, err = bus.Connect(cctx, busOpts); err != nil {
		return nil, err
	}
	if err = s.Bus.EnsureStreams(cctx); err != nil {
		return nil, err
	}
	storeOpts.History = app.History(s.Bus)
	if s.Store, err = store.Open(cctx, storeOpts); err != nil {
		return nil, err
	}
	if opts.ResumeFrom != "" && s.redis != nil {
		if err = restore(cctx, s.Store, opts.ResumeFrom); err != nil {
			return nil, err
		}
	}
	if opts.NoServices {
		return s, nil
	}
	s.StartService("proposer")
	for i := 0; i < opts.Evaluators; i++ {
		s.StartService("evaluator")
	}
	s.StartService("reflector")
	s.StartService("judge")
	return s, nil
}

// StartService starts one more replica of a service ("proposer",
// "evaluator", "reflector", "judge"; "evaluator-screen" and
// "evaluator-relax" are evaluators of one role, "evaluator" has the role
// of Options.Evaluator) and returns its name.
func (s *Stack) StartService(kind string) string {
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("%s-%d", kind, s.seq)
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	log := s.Log.With(zap.String("service", name))
	var run func(context.Context) error
	switch kind {
	case "proposer":
		var cfg proposer.Config
		if s.opts.Proposer != nil {
			cfg = s.opts.Proposer(s.Store)
		}
		run = proposer.New(s.Bus, s.Store, log, cfg).Run
	case "evaluator", "evaluator-screen", "evaluator-relax":
		cfg := s.opts.Evaluator
		cfg.Name = name
		switch kind {
		case "evaluator-screen":
			cfg.Role = evaluator.RoleScreen
		case "evaluator-relax":
			cfg.Role = evaluator.RoleRelax
		}
		run = evaluator.New(s.Bus, s.Store, s.opts.Oracle, log, cfg).Run
	case "reflector":
		cfg := s.opts.Reflector
		if s.opts.ReflectorLLM != nil {
			cfg.LLM = s.opts.ReflectorLLM(s.Store)
		}
		run = reflector.New(s.Bus, s.Store, log, cfg).Run
	case "judge":
		run = judge.New(s.Bus, s.Store, log, s.opts.Judge).Run
	default:
		cancel()
		r.done <- fmt.Errorf("unknown service %q", kind)
		return name
	}
	go func() {
		err := run(ctx)
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Error("service stopped", zap.Error(err))
		}
		r.done <- err
	}()
	s.mu.Lock()
	s.services[name] = r
	s.mu.Unlock()
	return name
}

// StopService stops a replica as SIGTERM would (it drains) and waits for
// it.
func (s *Stack) StopService(name string) error {
	s.mu.Lock()
	r, ok := s.services[name]
	delete(s.services, name)
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("no service %q", name)
	}
	r.cancel()
	return <-r.done
}

// Services lists the running replicas.
func (s *Stack) Services() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.services))
	for name := range s.services {
		out = append(out, name)
	}
	return out
}

// stopServices stops every service, all at once, and waits for them.
func (s *Stack) stopServices() {
	var wg sync.WaitGroup
	for _, name := range s.Services() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = s.StopService(name)
		}()
	}
	wg.Wait()
}

// Purge stops every service (draining), then deletes the namespace's
// streams and keys: what a test or benchmark on shared servers does before
// Close so that it leaves nothing behind. It refuses to run without a
// namespace.
func (s *Stack) Purge(ctx context.Context) error {
	if s.opts.Namespace == "" {
		return errors.New("local: refusing to purge a stack without a namespace")
	}
	s.stopServices()
	return errors.Join(s.Bus.DeleteStreams(ctx), s.Store.DeleteNamespace(ctx))
}

// URLs are the NATS and Redis servers the stack runs on: the real ones it
// was given, or the embedded ones' listening addresses, for another
// process (crucible serve, a service binary) to join the stack.
func (s *Stack) URLs() (natsURL, redisURL string) {
	natsURL, redisURL = s.opts.NATSURL, s.opts.RedisURL
	if s.nats != nil {
		natsURL = s.nats.URL()
	}
	if s.redis != nil {
		redisURL = s.redis.URL()
	}
	return natsURL, redisURL
}

// Close stops every service (draining), then the connections and servers;
// it may be called again.
func (s *Stack) Close() { s.closed.Do(s.close) }

func (s *Stack) close() {
	s.stopServices()
	if s.Bus != nil {
		s.Bus.Close()
	}
	if s.Store != nil {
		_ = s.Store.Close()
	}
	if s.nats != nil {
		s.nats.Shutdown()
	}
	if s.redis != nil {
		s.redis.Close()
	}
}
