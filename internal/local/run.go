package local

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Progress is a snapshot of a running campaign for a progress display.
type Progress = client.Progress

// Result is what a finished local campaign produced.
type Result struct {
	Status      *messages.Status
	Summary     *messages.Summary
	Evaluations []*messages.Evaluation // proposed candidates, by generation and index
	Seeds       []*messages.Evaluation
	Discoveries []*messages.Verdict
	Verdicts    []*messages.Verdict // rejected by the judge
	Reflections []*messages.Reflection
	Prompts     []*messages.Prompt // LLM exchanges (generator, reflector or debate llm)
}

// RunOptions configure Run.
type RunOptions struct {
	// Provided are the properties of the plug-in model servers, which the
	// campaign may constrain.
	Provided []string
	// Out is the directory the results are written to ("" = none).
	Out string
	// OnProgress is called about twice a second while the campaign runs.
	OnProgress func(Progress)
	// Timeout bounds the whole campaign (0 = none).
	Timeout time.Duration
	// Generator names the generator in the summary when the stack's
	// proposer uses one the spec does not name (the random-substitution
	// baseline); empty keeps the spec's.
	Generator string
	// Interrupt, when closed, stops the run: see Run. Abort, when closed
	// after it, stops the wait for the work in flight at once.
	Interrupt, Abort <-chan struct{}
	// Resume continues a campaign that exists instead of refusing it.
	Resume bool
}

// ErrInterrupted is returned, with the partial result, by a Run that
// RunOptions.Interrupt stopped: the campaign is paused, its work in
// flight evaluated, and its results so far written.
var ErrInterrupted = errors.New("interrupted")

// DrainTimeout bounds how long an interrupted Run waits for the work in
// flight before it writes what it has (RunOptions.Abort ends the wait
// sooner).
const DrainTimeout = 2 * time.Minute

// Run submits spec to the stack, waits for the campaign to finish and for
// the judge to catch up, and collects (and writes) its results.
//
// When o.Interrupt closes first, Run pauses the campaign (its state stays
// exactly where it stopped), waits up to DrainTimeout for its generations
// in flight to be evaluated and judged, writes the partial results and
// summary, and returns them with ErrInterrupted. When o.Abort closes
// meanwhile, it stops waiting at once and writes what is there: the work
// still in flight stays in the campaign's state (its messages in the
// streams), and a resume does it. With o.Resume, a
// campaign that exists already (a paused or interrupted one) is resumed
// instead of submitted, and its summary's wall_seconds adds those of the
// summary the interrupted run wrote to o.Out: the time spent running,
// without the time between the interrupt and the resume.
func Run(ctx context.Context, s *Stack, spec *messages.CampaignSpec, o RunOptions) (*Result, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	start := time.Now()
	var before float64 // the wall time of the parts of a resumed run before this one
	if o.Resume && o.Out != "" {
		var err error
		if before, err = priorWallSeconds(o.Out); err != nil {
			return nil, err
		}
	}
	cl := &client.Client{Bus: s.Bus, Store: s.Store, Provided: o.Provided}
	if err := cl.Submit(ctx, spec); err != nil {
		if !o.Resume || !errors.Is(err, client.ErrExists) {
			return nil, err
		}
		if err := resume(ctx, cl, spec.ID); err != nil {
			return nil, err
		}
	}
	stopProgress := make(chan struct{})
	var wg sync.WaitGroup
	if o.OnProgress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.WatchProgress(ctx, spec.ID, 500*time.Millisecond, stopProgress, o.OnProgress)
		}()
	}
	wctx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	if o.Interrupt != nil {
		go func() {
			select {
			case <-o.Interrupt:
				stopWait()
			case <-wctx.Done():
			}
		}()
	}
	status, err := cl.WaitDone(wctx, spec.ID)
	interrupted := false
	select {
	case <-o.Interrupt:
		interrupted = true
	default:
	}
	// actx ends with ctx, or when the drain of an interrupted run is
	// aborted: its waits are cut short, what is there is written.
	actx, stopAbort := context.WithCancel(ctx)
	defer stopAbort()
	if o.Abort != nil {
		go func() {
			select {
			case <-o.Abort:
				stopAbort()
			case <-actx.Done():
			}
		}()
	}
	aborted := func() bool { return ctx.Err() == nil && actx.Err() != nil }
	if interrupted {
		stopWait() // a final status may have come meanwhile: it is read again below
		status, err = drain(actx, cl, spec.ID)
		if aborted() {
			status, err = standing(ctx, cl, spec.ID)
		}
	}
	if err == nil && status == nil {
		err = fmt.Errorf("campaign %s: no final status", spec.ID)
	}
	if err == nil && status.State == messages.StateRejected {
		err = fmt.Errorf("campaign %s rejected: %s", spec.ID, status.Message)
	}
	if err == nil {
		if err = waitIdle(actx, cl, messages.ConsumerJudge); err != nil && interrupted && aborted() {
			err = nil // the judge's backlog waits for the resume
		}
	}
	close(stopProgress)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res := &Result{Status: status, Summary: status.Summary}
	if err := collect(ctx, cl, spec.ID, spec.Generator.Kind == messages.GeneratorLLM || spec.Reflector.Mode == messages.ReflectorLLM || spec.Judge.Debate == messages.DebateLLM, res); err != nil {
		return nil, err
	}
	res.sort()
	// The judge counts discoveries and rejections after the final status
	// was sent: take the counts from the collected events.
	if res.Summary != nil {
		if o.Generator != "" {
			res.Summary.Generator = o.Generator
		}
		res.Summary.Discoveries = len(res.Discoveries)
		res.Summary.JudgeRejected = len(res.Verdicts)
		res.Summary.WallSeconds = before + time.Since(start).Seconds()
	}
	if o.Out != "" {
		if err := Write(o.Out, res); err != nil {
			return res, err
		}
	}
	if interrupted && messages.Finished(status.State) {
		interrupted = false // it finished while draining: nothing to resume
	}
	if interrupted {
		return res, ErrInterrupted
	}
	return res, nil
}

// priorWallSeconds is the wall time an interrupted run in out recorded in
// its summary.json, 0 without one.
func priorWallSeconds(out string) (float64, error) {
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var sum messages.Summary
	if err := json.Unmarshal(data, &sum); err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Join(out, "summary.json"), err)
	}
	return sum.WallSeconds, nil
}

// resume continues a campaign that exists: a paused one is resumed, and
// one running or finished is only waited for.
func resume(ctx context.Context, cl *client.Client, campaign string) error {
	st, err := cl.Store.State(ctx, campaign)
	if err != nil {
		return err
	}
	if st.Status != messages.StatePaused {
		return nil
	}
	_, err = cl.Resume(ctx, campaign)
	return err
}

// drain pauses an interrupted campaign, waits up to DrainTimeout for its
// generations in flight, and returns its final status if it finished
// meanwhile, else a status with its summary as it stands.
func drain(ctx context.Context, cl *client.Client, campaign string) (*messages.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, DrainTimeout)
	defer cancel()
	if _, err := cl.Pause(ctx, campaign); err != nil && !errors.Is(err, client.ErrRefused) {
		return nil, err
	}
	for {
		st, err := cl.Store.State(ctx, campaign)
		if err != nil {
			return nil, err
		}
		if st.Inflight == 0 || messages.Finished(st.Status) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("campaign %s: generations still in flight after %v: %w", campaign, DrainTimeout, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if st, err := cl.Store.State(ctx, campaign); err == nil && messages.Finished(st.Status) {
		return cl.WaitDone(ctx, campaign)
	}
	return standing(ctx, cl, campaign)
}

// standing is a status with a campaign's summary as it stands.
func standing(ctx context.Context, cl *client.Client, campaign string) (*messages.Status, error) {
	sum, err := cl.Show(ctx, campaign)
	if err != nil {
		return nil, err
	}
	return &messages.Status{Schema: messages.SchemaVersion, Campaign: campaign, State: sum.State, Counters: sum.Counters, Summary: sum, At: time.Now().UTC()}, nil
}

// sort puts the results in the order of their candidates (generation,
// then index) rather than of the streams, where concurrent services
// interleave them: the files of two runs of an ordered campaign compare
// line by line.
func (r *Result) sort() {
	byCandidate := func(a, b *messages.Candidate) int {
		return cmp.Or(cmp.Compare(a.Generation, b.Generation), cmp.Compare(a.Index, b.Index), cmp.Compare(a.ID, b.ID))
	}
	for _, evs := range [][]*messages.Evaluation{r.Seeds, r.Evaluations} {
		slices.SortStableFunc(evs, func(a, b *messages.Evaluation) int { return byCandidate(&a.Candidate, &b.Candidate) })
	}
	for _, vs := range [][]*messages.Verdict{r.Discoveries, r.Verdicts} {
		slices.SortStableFunc(vs, func(a, b *messages.Verdict) int {
			return byCandidate(&a.Evaluation.Candidate, &b.Evaluation.Candidate)
		})
	}
	slices.SortStableFunc(r.Reflections, func(a, b *messages.Reflection) int { return cmp.Compare(a.Episode, b.Episode) })
}

// waitIdle waits until a durable consumer has nothing pending.
func waitIdle(ctx context.Context, cl *client.Client, consumer string) error {
	for {
		idle, err := cl.ConsumerIdle(ctx, consumer)
		if err == nil && idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the %s to catch up: %w", consumer, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// collect reads a campaign's evaluations, verdicts and reflections back
// from the streams, and its LLM prompts with withPrompts (following a
// subject without messages costs a fetch timeout).
func collect(ctx context.Context, cl *client.Client, campaign string, withPrompts bool, res *Result) error {
	evs, err := client.Read[messages.Evaluation](ctx, cl, messages.StreamEvaluations, messages.SubjectEvaluations, campaign, true)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if ev.Candidate.Seed {
			res.Seeds = append(res.Seeds, ev)
		} else {
			res.Evaluations = append(res.Evaluations, ev)
		}
	}
	for _, subj := range []string{messages.SubjectDiscoveries, messages.SubjectVerdicts} {
		vs, err := client.Read[messages.Verdict](ctx, cl, messages.StreamDiscoveries, subj, campaign, true)
		if err != nil {
			return err
		}
		for _, v := range vs {
			if v.Accepted {
				res.Discoveries = append(res.Discoveries, v)
			} else {
				res.Verdicts = append(res.Verdicts, v)
			}
		}
	}
	if res.Reflections, err = client.Read[messages.Reflection](ctx, cl, messages.StreamCampaigns, messages.SubjectReflections, campaign, false); err != nil || !withPrompts {
		return err
	}
	res.Prompts, err = cl.Prompts(ctx, campaign)
	return err
}

// Write stores a result in dir: evaluations.jsonl (one evaluation per
// line, with its candidate id), seeds.jsonl, discoveries.jsonl,
// discoveries/<id>.cif, reflections.jsonl, prompts.jsonl (the LLM
// exchanges, generator llm only) and summary.json.
func Write(dir string, res *Result) error {
	if err := os.MkdirAll(filepath.Join(dir, "discoveries"), 0o755); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "evaluations.jsonl"), res.Evaluations); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "seeds.jsonl"), res.Seeds); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "discoveries.jsonl"), res.Discoveries); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "verdicts.jsonl"), res.Verdicts); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "reflections.jsonl"), res.Reflections); err != nil {
		return err
	}
	if len(res.Prompts) > 0 {
		if err := writeJSONL(filepath.Join(dir, "prompts.jsonl"), res.Prompts); err != nil {
			return err
		}
	}
	for _, d := range res.Discoveries {
		if err := WriteCIF(filepath.Join(dir, "discoveries", d.ID+".cif"), d.Evaluation.FinalStructure()); err != nil {
			return fmt.Errorf("discovery %s: %w", d.ID, err)
		}
	}
	if res.Summary != nil {
		data, err := json.MarshalIndent(res.Summary, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "summary.json"), append(data, '\n'), 0o644)
	}
	return nil
}

func writeJSONL[T any](path string, items []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// WriteCIF writes a wire structure as a P1 CIF.
func WriteCIF(path string, st messages.Structure) error {
	s, err := st.Crystal()
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := crystal.WriteCIF(f, s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
