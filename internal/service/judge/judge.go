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
	return s.bus.Run(ctx, spec, bus.RunOptions{Concurrency: s.cfg.Concurrency, DrainTimeout: s.cfg.DrainTimeout, Service: "judge"}, s.handle)
}

func (s *Service) handle(ctx context.Context, d *bus.Delivery) error {
	// Only stable hits come before the judge: the evaluator says which in
	// a header, which spares decoding the others. (A malformed one is the
	// reflector's to dead-letter.)
	if d.Header.Get(messages.HeaderJudge) == "no" {
		return nil
	}
	var ev messages.Evaluation
	if err := bus.Decode(d, &ev); err != nil {
		return err
	}
	if !ev.ForJudge() {
		return nil
	}
	spec, err := s.specs.Get(ctx, ev.Campaign)
	if err != nil {
		return fmt.Errorf("evaluation %s: %w", ev.ID, err)
	}
	v, err := s.debated(ctx, spec, &ev, judge.Judge(spec, &ev, s.cfg.Options, time.Now().UTC()))
	if err != nil {
		return err
	}
	if err := s.bus.Publish(ctx, v.Subject(), &v); err != nil {
		return err
	}
	if err := s.store.RecordVerdict(ctx, ev.Campaign, ev.ID, v.Accepted, store.JudgedClass(&ev), Find(&ev, v.Accepted)); err != nil {
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

// Find is what an accepted candidate on or below the hull adds to its
// campaign's hull: its formation energy, a reference phase of later
// candidates. Nothing else joins the hull — not a hit the judge rejected
// (a hull outlier, a mixture of known phases, a low-confidence value),
// nor one above the hull, which would not change it.
func Find(ev *messages.Evaluation, accepted bool) *store.Find {
	fe, ok := ev.Properties["formation_energy_per_atom"]
	if !accepted || !ok || !ev.Valid || ev.HullOutlier || ev.EAboveHull == nil || *ev.EAboveHull > 1e-9 {
		return nil
	}
	return &store.Find{ID: ev.ID, Formula: ev.Candidate.Formula, EnergyPerAtom: fe.Value}
}
