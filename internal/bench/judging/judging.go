// Package judging compares the judges of Crucible on a fixed set of
// stable hits: the rule checks (pkg/judge), the offline debate and the
// LLM debate (pkg/debate) — accept and reject rates, the reasons of the
// rejections, whether each rejects the hits the project's credibility
// measures say it should (ordered mixtures of known phases, known
// compounds, metals for band-gap tasks, energies beyond the calibrated
// stability margin), rounds and tokens per debate, and debates per second.
package judging

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/service/judge"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/debate"
	pjudge "github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Description is the bench's help text.
const Description = `judging compares the judges on a fixed set of stable hits: the first
--per-run hits the judge weighed (feasible, stable or a hull outlier) of
each "crucible local" result DIR given, in their evaluations.jsonl order.
Each hit is judged by the rule checks, by the offline debate, and with
--fake-llm by the LLM debate against the in-process fake OpenAI-compatible
endpoint (roles call their tools, then state positions read off the
results). It prints, per judge, the verdicts, the reasons of the
rejections by role or check, the credibility measures — how many ordered
mixtures, known compounds, metals for a gap task (P(metal) ≥ 0.5) and
energies beyond the calibrated stability margin (E_hull > threshold − kσ)
it accepted — rounds, LLM calls and tokens per debate, and judgements per
second of one worker and of --workers at once. --ids FILE writes the set's
candidate ids.`

// Options choose the set and the judges.
type Options struct {
	Dirs    []string
	PerRun  int
	Workers int
	FakeLLM bool
	// Sources are the debate tools' reference data; without hulls they
	// are read from the data directory.
	Sources debate.Sources
	// IDs, when set, receives the set's ids, one "dir id" a line.
	IDs io.Writer
}

// Hit is a stable hit of the set and its campaign.
type Hit struct {
	Dir  string
	Spec *messages.CampaignSpec
	Ev   *messages.Evaluation
}

// Result is one judge's outcome on the set.
type Result struct {
	Judge    string
	Verdicts map[string]int
	Reasons  map[string]int
	// Flagged counts the set's hits under each credibility measure and
	// Accepted those of them the judge accepted.
	Flagged, Accepted     map[string]int
	Rounds, Calls, Tokens float64 // means per debate
	PerSecond, PerSecondW float64
	Workers               int
}

// Measures of credibility.
const (
	MeasureMixture = "ordered mixture"
	MeasureKnown   = "known compound"
	MeasureMetal   = "metal for a gap task"
	MeasureMargin  = "beyond the calibrated margin"
)

var measures = []string{MeasureMixture, MeasureKnown, MeasureMetal, MeasureMargin}

// flags are the credibility measures a hit falls under.
func flags(spec *messages.CampaignSpec, ev *messages.Evaluation) []string {
	var out []string
	if n := ev.Novelty; n != nil {
		switch n.Class {
		case messages.NoveltyOrderedMixture:
			out = append(out, MeasureMixture)
		case messages.NoveltyKnownStructure, messages.NoveltyKnownFormula:
			out = append(out, MeasureKnown)
		}
	} else if ev.Known {
		out = append(out, MeasureKnown)
	}
	for _, c := range spec.Task.Constraints {
		if pv, ok := ev.Properties[c.Property]; ok && strings.Contains(c.Property, "band_gap") && (pv.Metallic || (pv.MetalProbability != nil && *pv.MetalProbability >= 0.5)) {
			out = append(out, MeasureMetal)
			break
		}
	}
	if ev.EAboveHull != nil {
		sigma := 0.0
		if c := ev.EAboveHullCalibrated; c != nil && c.Q68 > 0 {
			sigma = c.Q68
		} else if fe, ok := ev.Properties["formation_energy_per_atom"]; ok {
			sigma = pjudge.Sigma("formation_energy_per_atom", fe, ev)
		}
		if *ev.EAboveHull > spec.StabilityThreshold-spec.ConfidenceK*sigma {
			out = append(out, MeasureMargin)
		}
	}
	return out
}

// Load reads the set: the first perRun hits the judge weighs of each
// local result.
func Load(dirs []string, perRun int) ([]Hit, error) {
	var hits []Hit
	for _, dir := range dirs {
		var sum struct {
			Campaign string `json:"campaign"`
			Task     string `json:"task"`
		}
		data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &sum); err != nil {
			return nil, fmt.Errorf("%s: summary: %w", dir, err)
		}
		tk, err := task.ByName(sum.Task)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		spec := &messages.CampaignSpec{ID: sum.Campaign, Task: tk, Budget: 1}
		spec.ApplyDefaults()
		f, err := os.Open(filepath.Join(dir, "evaluations.jsonl"))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		n := 0
		for sc.Scan() && n < perRun {
			var ev messages.Evaluation
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: evaluation: %w", dir, err)
			}
			if ev.ForJudge() {
				hits = append(hits, Hit{Dir: dir, Spec: spec, Ev: &ev})
				n++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return hits, nil
}

// judgement is one hit's outcome.
type judgement struct {
	verdict string
	reasons []string
	rounds  int
	calls   int
	tokens  int
}

// Run judges the set with each judge; it returns the set's size.
func Run(ctx context.Context, o Options) (int, []Result, error) {
	rs, n, err := run(ctx, o)
	return n, rs, err
}

func run(ctx context.Context, o Options) ([]Result, int, error) {
	if o.Workers < 1 {
		o.Workers = 4
	}
	hits, err := Load(o.Dirs, o.PerRun)
	if err != nil {
		return nil, 0, err
	}
	if len(hits) == 0 {
		return nil, 0, fmt.Errorf("no stable hits in %v", o.Dirs)
	}
	if o.Sources.Hulls == nil {
		dir, err := datadir.Dir()
		if err != nil {
			return nil, 0, err
		}
		db, err := wire.Reference(dir)
		if err != nil {
			return nil, 0, err
		}
		dc, err := judge.DebateData(db)
		if err != nil {
			return nil, 0, err
		}
		o.Sources.Hulls, o.Sources.Reference = dc.Hulls, dc.Reference
	}
	if o.IDs != nil {
		for _, h := range hits {
			fmt.Fprintf(o.IDs, "%s %s\n", filepath.Base(h.Dir), h.Ev.ID)
		}
	}
	now := time.Now()
	rules := func(_ context.Context, h Hit) (judgement, error) {
		v := pjudge.Judge(h.Spec, h.Ev, pjudge.Options{}, now)
		j := judgement{verdict: "rejected"}
		if v.Accepted {
			j.verdict = "accepted"
		}
		for _, c := range v.Checks {
			if !c.Passed {
				j.reasons = append(j.reasons, c.Name)
			}
		}
		return j, nil
	}
	run := func(agents func(*messages.CampaignSpec) (map[string]debate.Agent, debate.Judge)) func(context.Context, Hit) (judgement, error) {
		return func(ctx context.Context, h Hit) (judgement, error) {
			c := &debate.Case{Spec: h.Spec, Evaluation: h.Ev, Sources: o.Sources}
			var opts debate.Options
			if agents != nil {
				opts.Agents, opts.Judge = agents(h.Spec)
			}
			tr, err := debate.Run(ctx, c, opts)
			if err != nil {
				return judgement{}, err
			}
			d := tr.Debate
			j := judgement{verdict: d.Verdict, rounds: len(d.Rounds), calls: d.Calls, tokens: d.PromptTokens + d.CompletionTokens}
			for _, r := range d.Reasons {
				// "novelty: …", "novelty opposes: …": the role.
				j.reasons = append(j.reasons, strings.FieldsFunc(r, func(c rune) bool { return c == ':' || c == ' ' })[0])
			}
			return j, nil
		}
	}
	judges := []struct {
		name string
		f    func(context.Context, Hit) (judgement, error)
	}{{"rules", rules}, {"debate offline", run(nil)}}
	if o.FakeLLM {
		srv := llmtest.Start(llmtest.Debater())
		defer srv.Close()
		client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake-debater", Concurrency: 64})
		if err != nil {
			return nil, 0, err
		}
		judges = append(judges, struct {
			name string
			f    func(context.Context, Hit) (judgement, error)
		}{"debate llm (fake endpoint)", run(func(spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
			return llm.DebateAgents(client, nil, spec)
		})})
	}
	var out []Result
	for _, jd := range judges {
		r := Result{Judge: jd.name, Verdicts: map[string]int{}, Reasons: map[string]int{}, Flagged: map[string]int{}, Accepted: map[string]int{}, Workers: o.Workers}
		start := time.Now()
		js := make([]judgement, len(hits))
		for i, h := range hits {
			if js[i], err = jd.f(ctx, h); err != nil {
				return nil, 0, fmt.Errorf("%s on %s: %w", jd.name, h.Ev.ID, err)
			}
		}
		r.PerSecond = float64(len(hits)) / time.Since(start).Seconds()
		r.PerSecondW, err = parallel(ctx, hits, o.Workers, jd.f)
		if err != nil {
			return nil, 0, err
		}
		for i, j := range js {
			r.Verdicts[j.verdict]++
			for _, why := range j.reasons {
				r.Reasons[why]++
			}
			accepted := j.verdict == "accepted" || j.verdict == messages.DebateDiscovery
			for _, m := range flags(hits[i].Spec, hits[i].Ev) {
				r.Flagged[m]++
				if accepted {
					r.Accepted[m]++
				}
			}
			r.Rounds += float64(j.rounds) / float64(len(js))
			r.Calls += float64(j.calls) / float64(len(js))
			r.Tokens += float64(j.tokens) / float64(len(js))
		}
		out = append(out, r)
	}
	return out, len(hits), nil
}

// parallel judges the set with n workers and returns judgements per
// second.
func parallel(ctx context.Context, hits []Hit, n int, f func(context.Context, Hit) (judgement, error)) (float64, error) {
	start := time.Now()
	next := make(chan Hit)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range next {
				if _, err := f(ctx, h); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
				}
			}
		}()
	}
	for _, h := range hits {
		next <- h
	}
	close(next)
	wg.Wait()
	return float64(len(hits)) / time.Since(start).Seconds(), first
}

// Write prints the comparison as a Markdown table, then the reasons.
func Write(w io.Writer, hits int, rs []Result) error {
	fmt.Fprintf(w, "%d stable hits\n\n", hits)
	fmt.Fprintln(w, "| judge | accepted | reject | needs-relaxation | needs-calculation | "+strings.Join(measures, " | ")+" | rounds | LLM calls | tokens | per s (1 worker) | per s (workers) |")
	fmt.Fprintln(w, "|---|---|---|---|---|"+strings.Repeat("---|", len(measures))+"---|---|---|---|---|")
	for _, r := range rs {
		acc := r.Verdicts["accepted"] + r.Verdicts[messages.DebateDiscovery]
		rej := r.Verdicts["rejected"] + r.Verdicts[messages.DebateReject]
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d |", r.Judge, acc, rej, r.Verdicts[messages.DebateNeedsRelaxation], r.Verdicts[messages.DebateNeedsCalculation])
		for _, m := range measures {
			fmt.Fprintf(w, " %d of %d accepted |", r.Accepted[m], r.Flagged[m])
		}
		fmt.Fprintf(w, " %.2f | %.1f | %.0f | %.0f | %.0f (%d) |\n", r.Rounds, r.Calls, r.Tokens, r.PerSecond, r.PerSecondW, r.Workers)
	}
	fmt.Fprintln(w)
	for _, r := range rs {
		keys := make([]string, 0, len(r.Reasons))
		for k := range r.Reasons {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if r.Reasons[keys[i]] != r.Reasons[keys[j]] {
				return r.Reasons[keys[i]] > r.Reasons[keys[j]]
			}
			return keys[i] < keys[j]
		})
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, r.Reasons[k])
		}
		fmt.Fprintf(w, "%s — reasons of the verdicts other than accepted: %s\n", r.Judge, strings.Join(parts, ", "))
	}
	return nil
}
