package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// CampaignOptions configure RunCampaign.
type CampaignOptions struct {
	// Data is the data directory; Out receives the results (see Write).
	Data, Out string
	// State, when set, is a directory whose memory banks are loaded before
	// the campaign and saved after it (ReadState, WriteState).
	State string
	// NATSURL and RedisURL select real servers; empty starts embedded ones.
	NATSURL, RedisURL string
	// Evaluators is the number of evaluator replicas.
	Evaluators int
	// Delay is an artificial oracle cost per candidate; Timeout bounds the
	// campaign (0 = none).
	Delay, Timeout time.Duration
	// Baseline proposes with the random-substitution baseline.
	Baseline bool
	// LLM is the client of generator or reflector llm (nil: none). Every
	// model the campaign asks is checked against it before anything starts.
	LLM *llm.Client
	Log *zap.Logger
	// Stderr, when not nil, receives the progress (redrawn in place when
	// TTY) and what is loaded and started.
	Stderr io.Writer
	TTY    bool
	// Resume continues the interrupted run whose results and state are in
	// Out (Suspend) instead of submitting the campaign afresh.
	Resume bool
	// Interrupt, when closed, drains the campaign: RunCampaign keeps its
	// state in Out for a resume and returns the partial results with
	// ErrInterrupted. Abort, when closed after it, stops the drain at once
	// (RunOptions.Abort): the same, without waiting for the work in flight.
	Interrupt, Abort <-chan struct{}
}

// RunCampaign runs one campaign on a whole installation in this process:
// it checks the LLM endpoint, loads the oracle from the data directory,
// starts the stack, runs the campaign to its end and writes the results.
func RunCampaign(ctx context.Context, spec *messages.CampaignSpec, o CampaignOptions) (*Result, error) {
	if o.LLM != nil {
		// Refuse to start against an endpoint that cannot serve the
		// model, with the reason, rather than spend the campaign on it.
		for _, m := range LLMModels(spec) {
			if err := o.LLM.Check(ctx, m); err != nil {
				return nil, fmt.Errorf("the LLM endpoint cannot serve model %q: %w", m, err)
			}
		}
	}
	say := func(format string, args ...any) {
		if o.Stderr != nil {
			fmt.Fprintf(o.Stderr, format, args...)
		}
	}
	say("loading the oracle from %s …\n", o.Data)
	var stack atomic.Pointer[Stack]
	notify := func(string) {}
	if o.Stderr != nil {
		notify = func(line string) { fmt.Fprintln(o.Stderr, line) }
	}
	opts, loaded, err := WithData(Options{
		NATSURL: o.NATSURL, RedisURL: o.RedisURL, Evaluators: o.Evaluators, Log: o.Log, Notify: notify,
	}, o.Data, o.Baseline, spec, o.LLM, func() (*nats.Conn, error) {
		if st := stack.Load(); st != nil {
			return st.Bus.NC, nil
		}
		return nil, errors.New("the installation has not started")
	})
	if err != nil {
		return nil, err
	}
	if err := loaded.Oracle.Prepare(spec.Task.Required()); err != nil {
		return nil, err
	}
	opts.Evaluator.Delay = o.Delay
	if o.NATSURL == "" {
		opts.JetStreamDir = StreamsDir(o.Out)
	}
	if o.Resume {
		opts.ResumeFrom = o.Out
	}
	st, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	stack.Store(st)
	// The run's streams stay in Out only for a resume.
	keep := false
	defer func() {
		st.Close()
		if !keep {
			_ = Finished(o.Out)
		}
	}()
	if err := WriteRunSpec(o.Out, spec); err != nil {
		return nil, err
	}
	if o.State != "" {
		n, err := LoadState(ctx, st.Store, o.State)
		if err != nil {
			return nil, err
		}
		say("state %s: %d memory banks\n", o.State, n)
	}
	say("campaign %s: %s, budget %d, generator %s, %d evaluator(s)\n",
		spec.ID, spec.Task.Name, spec.Budget, GeneratorLabel(spec, o.Baseline), o.Evaluators)
	var progress func(Progress)
	if o.Stderr != nil {
		progress = client.ProgressPrinter(o.Stderr, o.TTY)
	}
	res, err := Run(ctx, st, spec, RunOptions{Out: o.Out, OnProgress: progress, Timeout: o.Timeout, Provided: loaded.Provided,
		Generator: GeneratorLabel(spec, o.Baseline), Interrupt: o.Interrupt, Abort: o.Abort, Resume: o.Resume})
	say("\n")
	if errors.Is(err, ErrInterrupted) {
		keep = true
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if serr := st.Suspend(sctx, o.Out); serr != nil {
			return res, fmt.Errorf("interrupted, and the campaign's state could not be kept: %w", serr)
		}
		return res, err
	}
	if err != nil {
		return nil, err
	}
	if o.State != "" {
		if err := SaveState(ctx, st.Store, o.State); err != nil {
			return nil, err
		}
	}
	if res.Status != nil && res.Status.State == messages.StateExhausted {
		say("campaign exhausted: %s\n", res.Status.Message)
	}
	return res, nil
}
