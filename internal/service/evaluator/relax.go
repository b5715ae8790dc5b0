package evaluator

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/bus"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

// RelaxOracle is an oracle with a relax tier.
type RelaxOracle interface {
	Oracle
	// Relax relaxes one item's structure and evaluates the relaxed
	// structure. A structure it cannot relax is a RelaxOutcome with
	// Failed set, not an error; an error (the context's) means the item
	// could not be handled and will be retried.
	Relax(ctx context.Context, item Item) (RelaxOutcome, error)
}

// ReasonRelax is the warning code of a candidate the relax tier could not
// relax (oracle.ReasonRelax).
const ReasonRelax = string(oracle.ReasonRelax)

// RelaxOutcome is the relax tier's answer for one item.
type RelaxOutcome struct {
	// Outcome is the evaluation of the relaxed structure.
	Outcome Outcome
	// Relaxation is the relaxation, its structure the relaxed one.
	Relaxation *messages.Relaxation
	// Failed, when set, says why the structure could not be relaxed; the
	// other fields are then empty and the screened evaluation stands.
	Failed *messages.Reason
}

var (
	metricRelaxQueued = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "relax_queued_total",
		Help: "Screened candidates that passed the screen and were queued for relaxation.",
	})
	metricRelaxed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "relaxed_total",
		Help: "Relaxations, by result (converged, unconverged, failed).",
	}, []string{"result"})
	metricRelaxSteps = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "relax_steps",
		Help: "FIRE steps per relaxation.", Buckets: prometheus.ExponentialBuckets(4, 2, 8),
	})
	metricRelaxSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "crucible", Subsystem: "evaluator", Name: "relax_seconds",
		Help:    "Time to relax a candidate and evaluate the relaxed structure.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 16),
	})
)

// runRelax consumes relax jobs, RelaxWorkers at once: each relaxation
// runs on one goroutine.
func (s *Service) runRelax(ctx context.Context, o RelaxOracle) error {
	spec, err := messages.ConsumerByName(messages.ConsumerRelax)
	if err != nil {
		return err
	}
	h := func(ctx context.Context, d *bus.Delivery) error { return s.handleRelax(ctx, o, d) }
	return s.bus.Run(ctx, spec, bus.RunOptions{Concurrency: s.cfg.RelaxWorkers, DrainTimeout: s.cfg.DrainTimeout, Service: "evaluator-relax", Ready: s.store.Ready}, h)
}

// handleRelax relaxes one screened candidate and publishes its
// evaluation: the relaxed one, or the screened one with a warning when
// the structure cannot be relaxed.
func (s *Service) handleRelax(ctx context.Context, o RelaxOracle, d *bus.Delivery) error {
	var job messages.RelaxJob
	if err := bus.Decode(d, &job); err != nil {
		return err
	}
	screened := &job.Screened
	c := &screened.Candidate
	spec, err := s.specs.Get(ctx, c.Campaign)
	if err != nil {
		return fmt.Errorf("relax %s: %w", c.ID, err)
	}
	if skip, err := s.verify(ctx, c); skip || err != nil {
		if lateRedelivery(d, err) {
			return nil
		}
		return err
	}
	finds, err := s.campaignFinds(ctx, c.Campaign)
	if err != nil {
		return fmt.Errorf("relax %s: %w", c.ID, err)
	}
	extra := finds.of(c) // as of its proposal in an ordered campaign
	start := time.Now()
	var ro RelaxOutcome
	if st, err := c.Structure.Crystal(); err != nil {
		// The screen read it, so this does not happen; were it to, the
		// screened evaluation stands rather than the campaign stall.
		ro.Failed = &messages.Reason{Code: ReasonRelax, Detail: "structure: " + err.Error()}
	} else if ro, err = o.Relax(ctx, Item{Structure: st, StatedFormula: c.Structure.Formula, Extra: extra, Properties: spec.Task.Required()}); err != nil {
		return fmt.Errorf("relax %s: %w", c.ID, err)
	}
	elapsed := time.Since(start).Seconds()
	metricRelaxSeconds.Observe(elapsed)
	var ev *messages.Evaluation
	if ro.Failed != nil {
		metricRelaxed.WithLabelValues("failed").Inc()
		s.log.Info("candidate not relaxed; its screened evaluation stands",
			zap.String("campaign", c.Campaign), zap.String("candidate", c.ID), zap.String("reason", ro.Failed.Detail))
		cp := *screened
		ev = &cp
		ev.Warnings = append(append([]messages.Reason(nil), ev.Warnings...), *ro.Failed)
		ev.Tier = messages.TierScreen
		ev.OracleSeconds += elapsed
	} else {
		ev = Score(spec, c, &ro.Outcome)
		ev.Tier = messages.TierRelax
		ev.Screened = messages.ScreenedOf(screened)
		rx := *ro.Relaxation
		rx.Seconds = elapsed
		ev.Relaxation = &rx
		ev.OracleSeconds = screened.OracleSeconds + elapsed
		if rx.Converged {
			metricRelaxed.WithLabelValues("converged").Inc()
		} else {
			metricRelaxed.WithLabelValues("unconverged").Inc()
		}
		metricRelaxSteps.Observe(float64(rx.Steps))
	}
	ev.Evaluator = s.cfg.Name
	ev.EvaluatedAt = time.Now().UTC()
	if err := s.publish(ctx, ev); err != nil {
		return err
	}
	metricLatency.Observe(time.Since(c.ProposedAt).Seconds())
	return nil
}
