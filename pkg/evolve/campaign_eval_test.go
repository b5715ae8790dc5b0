//go:build evolvecampaign

package evolve

// A simplified LLEMA campaign with the real oracle (reference lookup, CGCNN
// band gap and formation energy, convex hull of the reference phases), to
// compare Propose with RandomSubstitution at the same budget: 10 seeds from
// Seeds over the reference tables on 5 islands, Boltzmann island choice
// (pkg/island), top-2 successes and failures as parents, 6 of the 14 rules
// after generation 0, b = 2, a hit is feasible, a stable hit also within
// 0.1 eV/atom of the hull. No reflection, directives or campaign finds.
// Slow (tens of seconds): run with
//
//	CRUCIBLE_DATA=<data dir> go test -tags evolvecampaign -run TestCampaign -v ./pkg/evolve/
//
// EVOLVE_TASK (task name), EVOLVE_BUDGET (evaluations per campaign, 300),
// EVOLVE_SEEDS (campaigns per generator, 4) and EVOLVE_VERBOSE (log every
// candidate) tune it. Each evolve campaign runs on its own Generator, as a
// proposer does, and the log gives the generator's time per generation.

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/island"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/task"
)

type member struct {
	Parent
	stable bool
}

type islandState struct {
	success, failure []member
	sum              float64
	n                int
}

type campaignResult struct {
	evaluated, hits, stableHits, known, stable int
	formulas                                   map[string]bool
	byOp                                       map[string]*[3]int
	// generations and generating: how many generations, and the time
	// spent in the generator.
	generations int
	generating  time.Duration
}

func TestCampaign(t *testing.T) {
	dir := testbed.DataDir(t)
	o, err := oracle.Open(dir, oracle.Options{Checkpoints: []string{"band-gap", "formation-energy-per-atom"}})
	if err != nil {
		t.Fatal(err)
	}
	ref := o.Reference()
	name := "Stable Wide-Bandgap Semiconductors"
	if s := os.Getenv("EVOLVE_TASK"); s != "" {
		name = s
	}
	tk, err := task.ByName(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "data", "mp_e_form.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sources []SeedSource
	seen := map[string]bool{}
	for _, r := range rows[1:] {
		c, err := crystal.ParseFormula(r[0])
		if err != nil {
			continue
		}
		fm := c.ReducedFormula()
		if seen[fm] {
			continue
		}
		seen[fm] = true
		props := map[string]float64{}
		for k, v := range ref.Properties(fm) {
			props[k] = v.Value
		}
		sources = append(sources, SeedSource{Formula: fm, Properties: props})
	}
	budget := envInt(t, "EVOLVE_BUDGET", 300)
	gens := map[string]func() func(Input) ([]Proposal, []Rejection){
		"evolve": func() func(Input) ([]Proposal, []Rejection) { return new(Generator).Propose },
		"random": func() func(Input) ([]Proposal, []Rejection) { return RandomSubstitution },
	}
	totals := map[string]campaignResult{}
	for _, name := range []string{"evolve", "random"} {
		var tot campaignResult
		tot.formulas = map[string]bool{}
		tot.byOp = map[string]*[3]int{}
		for seed := uint64(1); seed <= uint64(envInt(t, "EVOLVE_SEEDS", 4)); seed++ {
			r := runCampaign(t, o, tk, sources, gens[name](), seed, budget)
			tot.evaluated += r.evaluated
			tot.hits += r.hits
			tot.stableHits += r.stableHits
			tot.known += r.known
			tot.stable += r.stable
			for op, c := range r.byOp {
				if tot.byOp[op] == nil {
					tot.byOp[op] = &[3]int{}
				}
				for i := range c {
					tot.byOp[op][i] += c[i]
				}
			}
			t.Logf("%s seed %d: %d evaluated, hit %.1f %%, stable hit %.1f %%, stable %.1f %%, known %.1f %%, unique %d; %d generations, %.2f ms each",
				name, seed, r.evaluated, pct(r.hits, r.evaluated), pct(r.stableHits, r.evaluated), pct(r.stable, r.evaluated), pct(r.known, r.evaluated), len(r.formulas),
				r.generations, float64(r.generating.Microseconds())/1000/float64(max(r.generations, 1)))
		}
		t.Logf("%s total: hit %.1f %%, stable hit %.1f %%, stable %.1f %%, known %.1f %%",
			name, pct(tot.hits, tot.evaluated), pct(tot.stableHits, tot.evaluated), pct(tot.stable, tot.evaluated), pct(tot.known, tot.evaluated))
		totals[name] = tot
		ops := make([]string, 0, len(tot.byOp))
		for op := range tot.byOp {
			ops = append(ops, op)
		}
		slices.Sort(ops)
		for _, op := range ops {
			c := tot.byOp[op]
			t.Logf("  %-22s %4d proposals, hit %5.1f %%, stable hit %5.1f %%", op, c[0], pct(c[1], c[0]), pct(c[2], c[0]))
		}
	}
	e, r := totals["evolve"], totals["random"]
	if pct(e.hits, e.evaluated) <= pct(r.hits, r.evaluated) || pct(e.stableHits, e.evaluated) <= pct(r.stableHits, r.evaluated) {
		t.Errorf("evolve (hit %.1f %%, stable hit %.1f %%) does not beat random substitution (%.1f %%, %.1f %%)",
			pct(e.hits, e.evaluated), pct(e.stableHits, e.evaluated), pct(r.hits, r.evaluated), pct(r.stableHits, r.evaluated))
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func evaluate(t *testing.T, o *oracle.Oracle, tk task.Task, ss []*crystal.Structure) []member {
	reqs := make([]oracle.Request, len(ss))
	for i, s := range ss {
		reqs[i] = oracle.Request{Structure: s, Hull: true}
	}
	res, err := o.Evaluate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]member, len(ss))
	for i, r := range res {
		props := map[string]float64{}
		for k, v := range r.Properties {
			props[k] = v.Value
		}
		if r.Stability != nil {
			props["e_above_hull"] = r.Stability.EAboveHull
		}
		ev := tk.Evaluate(task.Values(props).Lookup)
		score := ev.Score
		if !r.Valid {
			score = -1
		}
		out[i] = member{Parent{Structure: ss[i], Score: score, Feasible: r.Valid && ev.Feasible, Properties: props},
			r.Stability != nil && r.Stability.EAboveHull <= StableHull}
	}
	return out
}

func runCampaign(t *testing.T, o *oracle.Oracle, tk task.Task, sources []SeedSource, gen func(Input) ([]Proposal, []Rejection), seed uint64, budget int) campaignResult {
	rng := rand.New(rand.NewPCG(seed, 99))
	const islands, topK, b = 5, 2, 2
	seeds := Seeds(tk, sources, 10, rng)
	isl := make([]islandState, islands)
	var ss []*crystal.Structure
	for _, s := range seeds {
		ss = append(ss, s.Structure)
	}
	fps := map[string]bool{}
	add := func(i int, m member) {
		if fp, err := crystal.Fingerprint(m.Structure); err == nil {
			fps[fp] = true
		}
		if m.Feasible {
			isl[i].success = append(isl[i].success, m)
		} else {
			isl[i].failure = append(isl[i].failure, m)
		}
		isl[i].sum += m.Score
		isl[i].n++
	}
	for i, m := range evaluate(t, o, tk, ss) {
		m.ID = seeds[i].Formula
		add(i%islands, m)
	}
	res := campaignResult{formulas: map[string]bool{}, byOp: map[string]*[3]int{}}
	u := 0
	for g := 0; res.evaluated < budget && g < 10*budget; g++ {
		scores := make([]float64, islands)
		counts := make([]int, islands)
		for i := range isl {
			if isl[i].n > 0 {
				scores[i] = isl[i].sum / float64(isl[i].n)
			}
			counts[i] = isl[i].n
		}
		k, _ := island.Select(rng, scores, counts, u)
		top := func(ms []member) []Parent {
			c := slices.Clone(ms)
			slices.SortStableFunc(c, func(a, b member) int {
				switch {
				case a.Score > b.Score:
					return -1
				case a.Score < b.Score:
					return 1
				}
				return 0
			})
			var out []Parent
			for _, m := range c[:min(topK, len(c))] {
				out = append(out, m.Parent)
			}
			return out
		}
		in := Input{Task: tk, Successes: top(isl[k].success), Failures: top(isl[k].failure), Slots: b,
			Known: o.Reference().Known, Seen: func(fp string) bool { return fps[fp] },
			RNG: rand.New(rand.NewPCG(seed, uint64(g)))}
		if g > 0 {
			in.Rules = rng.Perm(len(Rules))[:6]
		}
		start := time.Now()
		props, _ := gen(in)
		res.generating += time.Since(start)
		res.generations++
		if len(props) == 0 {
			continue
		}
		var ss []*crystal.Structure
		for _, p := range props {
			ss = append(ss, p.Structure)
		}
		for i, m := range evaluate(t, o, tk, ss) {
			m.ID = fmt.Sprintf("%s/%d/%d", props[i].Formula, g, i)
			add(k, m)
			u++
			res.evaluated++
			res.formulas[props[i].Formula] = true
			if props[i].Known {
				res.known++
			}
			c := res.byOp[props[i].Operator]
			if c == nil {
				c = &[3]int{}
				res.byOp[props[i].Operator] = c
			}
			c[0]++
			if m.Feasible {
				c[1]++
				if m.stable {
					c[2]++
				}
			}
			if m.Feasible {
				res.hits++
				if m.stable {
					res.stableHits++
				}
			}
			if m.stable {
				res.stable++
			}
			if os.Getenv("EVOLVE_VERBOSE") != "" {
				t.Logf("g%d %-10s %-20s gap %.2f ef %.2f eh %.3f hit=%v %s", g, props[i].Formula, props[i].Operator,
					m.Properties["band_gap"], m.Properties["formation_energy_per_atom"], valueOr(m.Properties, "e_above_hull"), m.Feasible, props[i].Rationale)
			}
		}
	}
	return res
}

func valueOr(m map[string]float64, k string) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}
