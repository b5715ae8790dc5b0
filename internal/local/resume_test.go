package local_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestInterruptResume: an interrupted run writes its partial results and
// summary and keeps its state in its output folder; a run resumed from
// there reaches the budget with every evaluation exactly once, and the
// finished run's streams and store are removed. The resumed run's
// wall_seconds is the sum of its parts'.
func TestInterruptResume(t *testing.T) {
	out := t.TempDir()
	o, db := deps(t)
	spec := &messages.CampaignSpec{ID: "resume", Task: easyTask(), Budget: 60, Seed: 5, BatchSize: 4, MaxInFlight: 2}
	stackOpts := local.Options{Oracle: o, JetStreamDir: local.StreamsDir(out),
		Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }}

	st1, err := local.Start(context.Background(), stackOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer st1.Close()
	if err := local.WriteRunSpec(out, spec); err != nil {
		t.Fatal(err)
	}
	interrupt := make(chan struct{})
	go func() {
		waitEvaluated(t, st1, spec.ID, 12)
		close(interrupt)
	}()
	res, err := local.Run(context.Background(), st1, spec, local.RunOptions{Out: out, Interrupt: interrupt, Timeout: 3 * time.Minute})
	if !errors.Is(err, local.ErrInterrupted) {
		t.Fatalf("interrupted run: %v, want ErrInterrupted", err)
	}
	partial := res.Summary.Evaluated
	if res.Summary.State != messages.StatePaused || partial < 12 || partial >= spec.Budget || len(res.Evaluations) != partial {
		t.Fatalf("interrupted: %s, %d evaluated, %d evaluations written", res.Summary.State, partial, len(res.Evaluations))
	}
	if n := lines(t, filepath.Join(out, "evaluations.jsonl")); n != partial {
		t.Errorf("evaluations.jsonl has %d lines after the interrupt, want %d", n, partial)
	}
	if err := st1.Suspend(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	resumed, err := local.ReadRunSpec(out)
	if err != nil {
		t.Fatal(err)
	}
	// Say the first part ran for 1000 s: the resumed run adds its own.
	var first map[string]any
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(data, &first)
	}
	if err != nil || first["wall_seconds"] != res.Summary.WallSeconds || res.Summary.WallSeconds <= 0 {
		t.Fatalf("summary.json of the interrupted run: wall_seconds %v (%v), want %v", first["wall_seconds"], err, res.Summary.WallSeconds)
	}
	first["wall_seconds"] = 1000.0
	if data, err = json.Marshal(first); err == nil {
		err = os.WriteFile(filepath.Join(out, "summary.json"), data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	stackOpts.ResumeFrom = out
	st2, err := local.Start(context.Background(), stackOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	began := time.Now()
	res, err = local.Run(context.Background(), st2, resumed, local.RunOptions{Out: out, Resume: true, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if w, d := res.Summary.WallSeconds, time.Since(began).Seconds(); w <= 1000 || w > 1000+d {
		t.Errorf("resumed after a first part of 1000 s, in %.1f s: wall_seconds %.1f", d, w)
	}
	if res.Summary.State != messages.StateCompleted || res.Summary.Evaluated != spec.Budget || res.Summary.Proposed != spec.Budget {
		t.Fatalf("resumed: %s, %d evaluated, %d proposed; want completed, %d", res.Summary.State, res.Summary.Evaluated, res.Summary.Proposed, spec.Budget)
	}
	evaluatedOnce(t, res, spec.Budget)
	st2.Close()
	if err := local.Finished(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(local.StreamsDir(out)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the streams of the finished run are still there: %v", err)
	}
	var sum messages.Summary
	data, err = os.ReadFile(filepath.Join(out, "summary.json"))
	if err == nil {
		err = json.Unmarshal(data, &sum)
	}
	if err != nil || sum.Evaluated != spec.Budget || sum.WallSeconds != res.Summary.WallSeconds {
		t.Errorf("summary.json: %d evaluated, wall_seconds %.1f, %v", sum.Evaluated, sum.WallSeconds, err)
	}
}

func lines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		n++
	}
	return n
}

// TestPrepareOut: a folder with files is refused unless forced, and
// forcing removes an earlier run's results only.
func TestPrepareOut(t *testing.T) {
	dir := t.TempDir()
	if err := local.PrepareOut(filepath.Join(dir, "new"), false); err != nil {
		t.Errorf("a missing folder: %v", err)
	}
	for _, f := range []string{"evaluations.jsonl", "discoveries/old.cif", "notes.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := local.PrepareOut(dir, false); !errors.Is(err, local.ErrOutNotEmpty) {
		t.Errorf("a folder with files: %v, want ErrOutNotEmpty", err)
	}
	if err := local.PrepareOut(dir, true); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]bool{"evaluations.jsonl": false, "discoveries": false, "notes.txt": true} {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != want {
			t.Errorf("%s after --force: exists %v, want %v", f, err == nil, want)
		}
	}
}

// TestInterruptAbort: a second interrupt (RunOptions.Abort) stops the
// drain at once: the run returns without waiting for the work in flight,
// with ErrInterrupted and the results so far written; the resume does the
// work left in flight and reaches the budget with every evaluation
// exactly once.
func TestInterruptAbort(t *testing.T) {
	out := t.TempDir()
	o, db := deps(t)
	spec := &messages.CampaignSpec{ID: "abort", Task: easyTask(), Budget: 24, Seed: 6, BatchSize: 4, MaxInFlight: 2}
	stackOpts := local.Options{Oracle: o, JetStreamDir: local.StreamsDir(out),
		Proposer: func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) }}
	stackOpts.Evaluator.Delay = 250 * time.Millisecond // a second a generation: a drain takes seconds
	st1, err := local.Start(context.Background(), stackOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer st1.Close()
	if err := local.WriteRunSpec(out, spec); err != nil {
		t.Fatal(err)
	}
	interrupt, abort := make(chan struct{}), make(chan struct{})
	go func() {
		waitEvaluated(t, st1, spec.ID, 4)
		close(interrupt)
		time.Sleep(100 * time.Millisecond)
		close(abort)
	}()
	res, err := local.Run(context.Background(), st1, spec, local.RunOptions{Out: out, Interrupt: interrupt, Abort: abort, Timeout: 3 * time.Minute})
	if !errors.Is(err, local.ErrInterrupted) {
		t.Fatalf("aborted run: %v, want ErrInterrupted", err)
	}
	if s := res.Summary; s.Evaluated < 4 || s.Proposed <= s.Evaluated || s.Evaluated >= spec.Budget {
		t.Fatalf("aborted: %d proposed, %d evaluated; want work left in flight", s.Proposed, s.Evaluated)
	}
	if n := lines(t, filepath.Join(out, "evaluations.jsonl")); n != len(res.Evaluations) || n < 4 {
		t.Errorf("evaluations.jsonl has %d lines after the abort, %d collected", n, len(res.Evaluations))
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Errorf("no summary after the abort: %v", err)
	}
	if err := st1.Suspend(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	st1.Close()

	stackOpts.ResumeFrom = out
	stackOpts.Evaluator.Delay = 0
	st2, err := local.Start(context.Background(), stackOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	res, err = local.Run(context.Background(), st2, spec, local.RunOptions{Out: out, Resume: true, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.State != messages.StateCompleted || res.Summary.Evaluated != spec.Budget {
		t.Fatalf("resumed: %s, %d evaluated; want completed, %d", res.Summary.State, res.Summary.Evaluated, spec.Budget)
	}
	evaluatedOnce(t, res, spec.Budget)
}

// evaluatedOnce checks that a resumed run evaluated budget distinct
// candidates, none twice.
func evaluatedOnce(t *testing.T, res *local.Result, budget int) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range res.Evaluations {
		if seen[ev.ID] {
			t.Errorf("%s evaluated twice", ev.ID)
		}
		seen[ev.ID] = true
	}
	if len(seen) != budget {
		t.Errorf("%d distinct evaluations, want %d", len(seen), budget)
	}
}
