// Package judge is the service that decides which hits are discoveries: it
// reads evaluations, passes those that are feasible and stable to the
// tool-grounded checks of pkg/judge, and publishes a discovery (accepted)
// or a verdict (rejected) with the evidence.
package judge

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/internal/service/specs"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Config tunes the judge.
type Config struct {
	Concurrency  int
	DrainTimeout time.Duration
	Options      judge.Options
	// Debate equips the judge to debate hits (debate.go).
	Debate DebateConfig
}

// Service is a judge replica.
type Service struct {
	bus   *bus.Bus
	store *store.Store
	log   *zap.Logger
	cfg   Config
	specs *specs.Cache
	// workers is the debate pool.
	workers chan struct{}
}

var metricVerdicts = prometheus.NewCounterVec(prometheus.CounterOpts{
	Namespace: "crucible", Subsystem: "judge", Name: "verdicts_total",
	Help: "Verdicts published, by decision (accepted, rejected).",
}, []string{"decision"})

// Collectors are the judge's metrics.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{metricVerdicts, metricDebates, metricDebateSeconds}
}

// New builds a judge.
func New(b *bus.Bus, s *store.Store, log *zap.Logger, cfg Config) *Service {
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 8
	}
	if cfg.Debate.Workers < 1 {
		cfg.Debate.Workers = DefaultDebateWorkers
	}
	return &Service{bus: b, store: s, log: log, cfg: cfg, specs: specs.New(s), workers: make(chan struct{}, cfg.Debate.Workers)}
}

// Run consumes evaluations until ctx is cancelled, then drains.
func (s *Service) Run(ctx context.Context) error {
	spec, err := messages.ConsumerByName(messages.ConsumerJudge)
	if err != nil {
		return err
	}
	return s.bus.Run(ctx, spec, bus.RunOptions{Concurrency: s.cfg.Concurrency, DrainTimeout: s.cfg.DrainTimeout, Service: "judge", Ready: s.store.Ready}, s.handle)
}

func (s *Service) handle(ctx context.Context, d *bus.Delivery) error {
	// Only stable hits come before the judge: the evaluator says which in
	// a header, which spares decoding the others (a header that says no
	// can only keep an evaluation from being judged; one that says yes,
	// or none, is verified). A malformed one is the reflector's to
	// dead-letter.
	if d.Header.Get(messages.HeaderJudge) == "no" {
		return nil
	}
	var ev messages.Evaluation
	if err := bus.Decode(d, &ev); err != nil {
		return err
	}
	spec, err := s.specs.Get(ctx, ev.Campaign)
	if err != nil {
		return fmt.Errorf("evaluation %s: %w", ev.ID, err)
	}
	if ok, err := s.verify(ctx, d, spec, &ev); !ok || err != nil {
		return err
	}
	v, err := s.debated(ctx, spec, &ev, judge.Judge(spec, &ev, s.cfg.Options, time.Now().UTC()))
	if err != nil {
		return err
	}
	if err := s.bus.Publish(ctx, v.Subject(), &v); err != nil {
		return err
	}
	if _, err := s.store.RecordVerdict(ctx, ev.Campaign, ev.ID, v.Accepted, store.JudgedClass(&ev), store.FindOf(&ev, v.Accepted)); err != nil {
		return err
	}
	decision := "rejected"
	if !v.Accepted {
		// Counted, as discoveries are, for the campaign's state.
		if err := s.store.RecordJudgeRejection(ctx, ev.Campaign, ev.ID); err != nil {
			return err
		}
	} else {
		decision = "accepted"
		s.log.Info("discovery", zap.String("campaign", ev.Campaign), zap.String("candidate", ev.ID), zap.String("formula", v.Formula))
	}
	metricVerdicts.WithLabelValues(decision).Inc()
	return nil
}
