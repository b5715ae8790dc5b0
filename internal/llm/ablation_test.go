package llm_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/service/reflector"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TestReflectorAblation is MADE's ablation of reflection (§5): the evolve
// generator on 3 tasks × 3 seeds × 4 episodes with the reflector off, by
// rules and by LLM (the fake model of llmtest.Agents), each campaign with
// its own empty memory bank. It reports, per mode and task, the new
// stable candidates per episode (N_stable: valid, stable, not in the
// reference data), the least-squares slope of N_stable over the episodes,
// and the unique compositions per episode. It is a measurement, run on
// demand: CRUCIBLE_ABLATION=1 go test ./internal/llm -run
// TestReflectorAblation -v -timeout 60m (CRUCIBLE_ABLATION_BUDGET sets
// the evaluations per episode, 10 by default; CRUCIBLE_ABLATION_MODES the
// modes and their order, "off,rules,llm" by default).
func TestReflectorAblation(t *testing.T) {
	if os.Getenv("CRUCIBLE_ABLATION") == "" {
		t.Skip("a measurement: set CRUCIBLE_ABLATION=1 to run it")
	}
	perEpisode := 10
	if v := os.Getenv("CRUCIBLE_ABLATION_BUDGET"); v != "" {
		fmt.Sscan(v, &perEpisode)
	}
	const episodes = 4
	data := testbed.DataDir(t)
	_, oracle, err := wire.Oracle(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	db, err := wire.Reference(data)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, llmtest.Agents(11))
	client, err := llm.NewClient(llm.Config{BaseURL: srv.URL, Model: "fake-reflector"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := local.Start(ctx, local.Options{
		NATSURL: testbed.NATSURL(), RedisURL: testbed.RedisURL(), Namespace: testsrv.Namespace(), MemoryStreams: true,
		Oracle:       oracle,
		Proposer:     func(s *store.Store) proposer.Config { return wire.Proposer(db, s, wire.ProposerOptions{}) },
		ReflectorLLM: func(s *store.Store) reflector.LLM { return llm.NewReflector(client, s, nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = st.Purge(context.Background())
		st.Close()
	})
	tasks := []string{"Stable Wide-Bandgap Semiconductors", "Hard, Stiff Ceramics", "Solid-State Electrolytes"}
	modes := []string{messages.ReflectorOff, messages.ReflectorRules, messages.ReflectorLLM}
	if v := os.Getenv("CRUCIBLE_ABLATION_MODES"); v != "" {
		// The modes and their order (each task runs them in turn on one
		// stack): "rules,off" checks that the order is not what differs.
		modes = strings.Split(v, ",")
	}
	// directives and lessons show whether reflection had a lever at all:
	// evolve reads no bullets, only directives and lessons (its weights).
	t.Logf("%-36s %-5s %4s  %-22s %7s  %-22s %5s %5s", "task", "mode", "seed", "N_stable per episode", "slope", "unique per episode", "dirs", "lessons")
	type agg struct{ slope, unique, stable float64 }
	sums := map[string]*agg{}
	for ti, name := range tasks {
		tk, err := task.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range modes {
			for seed := uint64(1); seed <= 3; seed++ {
				id := fmt.Sprintf("abl-%d-%s-%d", ti, mode, seed)
				spec := &messages.CampaignSpec{ID: id, Task: tk, Budget: episodes * perEpisode, Episodes: episodes, Seed: seed,
					Reflector:     messages.ReflectorSpec{Mode: mode, Model: map[bool]string{true: "fake-reflector"}[mode == messages.ReflectorLLM]},
					MemoryContext: id}
				res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 10 * time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				if mode == messages.ReflectorOff && len(res.Reflections) != 0 {
					t.Errorf("%s: reflector off wrote %d reflections", id, len(res.Reflections))
				}
				if mode != messages.ReflectorOff && len(res.Reflections) != episodes {
					t.Errorf("%s: %d reflections, want %d", id, len(res.Reflections), episodes)
				}
				dirs := 0
				for _, r := range res.Reflections {
					if mode == messages.ReflectorLLM && r.Mode != messages.ReflectorLLM {
						t.Errorf("%s: reflection by %s (%s)", id, r.Mode, r.Fallback)
					}
					dirs += len(r.Directives)
				}
				lessons, err := st.Store.Experiences(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				nStable := make([]float64, episodes)
				formulas := make([]map[string]bool, episodes)
				for e := range formulas {
					formulas[e] = map[string]bool{}
				}
				for _, ev := range res.Evaluations {
					e := ev.Candidate.Episode
					if e < 0 || e >= episodes {
						continue
					}
					formulas[e][ev.Candidate.Formula] = true
					if ev.Valid && ev.Stable && !ev.Known {
						nStable[e]++
					}
				}
				unique := make([]float64, episodes)
				meanUnique := 0.0
				for e := range unique {
					unique[e] = float64(len(formulas[e]))
					meanUnique += unique[e] / episodes
				}
				s := slope(nStable)
				key := name + "/" + mode
				if sums[key] == nil {
					sums[key] = &agg{}
				}
				sums[key].slope += s / 3
				sums[key].unique += meanUnique / 3
				for _, n := range nStable {
					sums[key].stable += n / episodes / 3
				}
				t.Logf("%-36s %-5s %4d  %-22s %7.2f  %-22s %5d %5d", name, mode, seed, fmt.Sprint(nStable), s, fmt.Sprint(unique), dirs, len(lessons))
			}
		}
	}
	t.Logf("means over the 3 seeds")
	t.Logf("%-36s %-5s %9s %7s %9s", "task", "mode", "N_stable/ep", "slope", "unique/ep")
	for _, name := range tasks {
		for _, mode := range modes {
			a := sums[name+"/"+mode]
			t.Logf("%-36s %-5s %9.2f %7.2f %9.2f", name, mode, a.stable, a.slope, a.unique)
		}
	}
}

// slope is the least-squares slope of y over 0, 1, …
func slope(y []float64) float64 {
	n := float64(len(y))
	var sx, sy, sxx, sxy float64
	for i, v := range y {
		x := float64(i)
		sx, sy, sxx, sxy = sx+x, sy+v, sxx+x*x, sxy+x*v
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / d
}
