package reflection

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// stat is a discovery.CompositionStat; e gives EMin and EMax when present.
func stat(formula string, queries, stable, hits int, e ...float64) discovery.CompositionStat {
	s := discovery.CompositionStat{Formula: formula, Queries: queries, Stable: stable, Hits: hits}
	if len(e) > 0 {
		s.EMin = &e[0]
		s.EMax = &e[len(e)-1]
	}
	return s
}

func bandGapTask() task.Task {
	return task.Task{Name: "Wide gaps", Constraints: []task.Constraint{task.AtLeast("band_gap", 2)}}
}

// input is a campaign "c1" of a band-gap task whose counters agree with the
// compositions.
func input(comps ...discovery.CompositionStat) Input {
	in := Input{Campaign: "c1", Context: "task-wide-gaps", Episode: 1, Task: bandGapTask(), StabilityThreshold: 0.1, Compositions: comps}
	for _, c := range comps {
		in.Counters.Evaluated += c.Queries
		in.Counters.Valid += c.Queries
		in.Counters.Hits += c.Hits
		in.Counters.Stable += c.Stable
		in.Counters.StableHits += min(c.Hits, c.Stable)
	}
	in.EpisodeEvaluated = in.Counters.Evaluated
	return in
}

func fixture(t *testing.T) Input {
	t.Helper()
	data, err := os.ReadFile("testdata/episode.json")
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	if err := in.Task.Validate(); err != nil {
		t.Fatalf("fixture task: %v", err)
	}
	return in
}

// keys writes directives as "kind:subject", caps with "=limit".
func keys(ds []messages.Directive) []string {
	out := []string{}
	for _, d := range ds {
		k := d.Key()
		if d.Kind == messages.DirectiveCapComposition {
			k += "=" + strconv.Itoa(d.Limit)
		}
		out = append(out, k)
	}
	return out
}

// applyBank applies a reflection to a bank, as the store does.
func applyBank(in Input, out Output) Input {
	bank := map[string]Experience{}
	for _, e := range in.Existing {
		bank[e.Key] = e
	}
	for _, op := range out.Ops {
		if op.Delete {
			delete(bank, op.Experience.Key)
		} else {
			bank[op.Experience.Key] = op.Experience
		}
	}
	in.Existing = nil
	for _, e := range bank {
		in.Existing = append(in.Existing, e)
	}
	sort.Slice(in.Existing, func(i, j int) bool { return in.Existing[i].Key < in.Existing[j].Key })
	ds := map[string]messages.Directive{}
	for _, d := range in.Directives {
		ds[d.Key()] = d
	}
	for _, d := range out.Revoke {
		delete(ds, d.Key())
	}
	for _, d := range out.Directives {
		ds[d.Key()] = d
	}
	in.Directives = nil
	for _, d := range ds {
		in.Directives = append(in.Directives, d)
	}
	sort.Slice(in.Directives, func(i, j int) bool { return in.Directives[i].Key() < in.Directives[j].Key() })
	return in
}

func TestReflectIsDeterministic(t *testing.T) {
	in := fixture(t)
	want := Reflect(in)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20; i++ {
		sh := in
		sh.Compositions = slices.Clone(in.Compositions)
		sh.Existing = slices.Clone(in.Existing)
		sh.Directives = slices.Clone(in.Directives)
		rng.Shuffle(len(sh.Compositions), func(a, b int) { sh.Compositions[a], sh.Compositions[b] = sh.Compositions[b], sh.Compositions[a] })
		rng.Shuffle(len(sh.Existing), func(a, b int) { sh.Existing[a], sh.Existing[b] = sh.Existing[b], sh.Existing[a] })
		rng.Shuffle(len(sh.Directives), func(a, b int) { sh.Directives[a], sh.Directives[b] = sh.Directives[b], sh.Directives[a] })
		if got := Reflect(sh); !reflect.DeepEqual(got, want) {
			t.Fatalf("permutation %d changed the reflection:\n%+v\nwant\n%+v", i, got, want)
		}
	}
}

// TestReflectFixture checks the whole reflection on one episode of a
// solid-state electrolyte campaign (testdata/episode.json).
func TestReflectFixture(t *testing.T) {
	in := fixture(t)
	out := Reflect(in)
	// Cl and F explain every failed composition but TlBr and LiBO2 (two
	// queries each); the cap on Li4P2O7, which now has a hit, is lifted.
	if got, want := keys(out.Directives), []string{"exclude_element:Cl", "exclude_element:F"}; !slices.Equal(got, want) {
		t.Errorf("directives %v, want %v", got, want)
	}
	if got, want := keys(out.Revoke), []string{"cap_composition:Li4P2O7=6"}; !slices.Equal(got, want) {
		t.Errorf("revoked %v, want %v", got, want)
	}
	type op struct {
		edit, key string
		support   int
	}
	var ops []op
	for _, o := range out.Ops {
		ops = append(ops, op{o.Edit, o.Experience.Key, o.Experience.Support})
	}
	want := []op{
		{EditDelete, "comp:Li4P2O7", 0}, // contradicted by its hit
		{EditMerge, "comp:LiPO3", 0},    // merged into sys:Li-O-P
		{EditModify, "comp:MgAl2O4", 3}, // support max(2, 3): same campaign
		{EditAdd, "elem:Cl", 15},
		{EditAdd, "elem:F", 10},
		// Families of two or more compositions with 3 queries.
		{EditAdd, "fam:AB3", 9},
		{EditAdd, "fam:ABC2", 3},
		// 9 queries of this campaign in Li-O-P + 4 of sse-1 behind LiPO3's
		// lesson; the contradicted Li4P2O7 lesson carries nothing.
		{EditMerge, "sys:Li-O-P", 13},
	}
	if !reflect.DeepEqual(ops, want) {
		t.Errorf("ops\n%v\nwant\n%v", ops, want)
	}
	for _, o := range out.Ops {
		if o.Reason == "" {
			t.Errorf("op %s %s without a reason", o.Edit, o.Experience.Key)
		}
		if !o.Delete && (o.Experience.Text == "" || o.Experience.Kind == "" || !slices.Contains(o.Experience.Campaigns, "sse-2")) {
			t.Errorf("put %+v incomplete", o.Experience)
		}
	}
	if n := len(out.Bullets); n < MinBullets || n > MaxBullets {
		t.Errorf("%d bullets", n)
	}
	r := &messages.Reflection{Schema: messages.SchemaVersion, Campaign: in.Campaign, Context: in.Context, Episode: in.Episode, Bullets: out.Bullets, Directives: out.Directives}
	if err := r.Validate(); err != nil {
		t.Errorf("reflection message: %v", err)
	}
}

// TestReflectIsIdempotent applies a reflection to the bank and reflects
// again on the same evidence: nothing is left to learn.
func TestReflectIsIdempotent(t *testing.T) {
	for name, in := range map[string]Input{
		"fixture": fixture(t),
		"merge": input(stat("Li3PO4", 3, 1, 1), stat("Li4P2O7", 2, 0, 1), stat("LiPO3", 4, 1, 2),
			stat("NaCl3", 4, 0, 0), stat("Na2Cl5", 3, 0, 0), stat("NaCl5", 3, 0, 0)),
	} {
		first := Reflect(in)
		next := applyBank(in, first)
		second := Reflect(next)
		if len(second.Ops) != 0 || len(second.Directives) != 0 || len(second.Revoke) != 0 {
			t.Errorf("%s: second reflection still edits: ops %+v, directives %v, revoked %v", name, second.Ops, keys(second.Directives), keys(second.Revoke))
		}
	}
}

// TestReflectNeverContradictsSuccess runs the rules on random campaigns and
// checks that no directive caps, excludes or avoids anything that
// succeeded, nor excludes an element the task requires.
func TestReflectNeverContradictsSuccess(t *testing.T) {
	formulas := []string{"LiF", "LiCl", "Li2O", "Li3N", "NaCl", "NaCl3", "Na2O", "KBr", "MgO", "MgCl2", "AlN", "Al2O3",
		"TlCl", "TlBr", "Tl2O", "ZnO", "ZnS", "GaN", "CdS", "CdSe", "LiAlO2", "NaAlO2", "Li3PO4", "LiPO3", "BN", "SiC"}
	tk := bandGapTask()
	tk.Elements = task.ElementRules{MustContainOneOf: []string{"Li", "Na"}, MustContainAll: []string{"O"}}
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 300; trial++ {
		var comps []discovery.CompositionStat
		for _, f := range formulas {
			if rng.IntN(3) == 0 {
				continue
			}
			q := 1 + rng.IntN(8)
			h, s := 0, 0
			if rng.IntN(4) == 0 {
				h = rng.IntN(q + 1)
			}
			if rng.IntN(4) == 0 {
				s = rng.IntN(q + 1)
			}
			comps = append(comps, stat(f, q, s, h))
		}
		in := input(comps...)
		in.Task = tk
		in.Options.ExcludeWithoutContrast = trial%2 == 0
		out := Reflect(in)
		okFormula, okElem, okSys := map[string]bool{}, map[string]bool{}, map[string]bool{}
		r := newReflection(in)
		for _, c := range r.comps {
			if c.success() {
				okFormula[c.Formula] = true
				okSys[c.system] = true
				for _, e := range c.elements {
					okElem[e] = true
				}
			}
		}
		if len(out.Directives) > DefaultMaxDirectives {
			t.Fatalf("%d directives", len(out.Directives))
		}
		for _, d := range out.Directives {
			if err := d.Validate(); err != nil {
				t.Fatalf("invalid directive %+v: %v", d, err)
			}
			switch {
			case okFormula[d.Formula], okElem[d.Element], okSys[d.System]:
				t.Fatalf("trial %d: %s contradicts a success", trial, d.Key())
			case d.Element == "O":
				t.Fatalf("trial %d: excluded the required O", trial)
			}
		}
		if slices.Contains(keys(out.Directives), "exclude_element:Li") && slices.Contains(keys(out.Directives), "exclude_element:Na") {
			t.Fatalf("trial %d: excluded all of Li and Na", trial)
		}
		if n := len(out.Bullets); n < MinBullets || n > MaxBullets {
			t.Fatalf("trial %d: %d bullets", trial, n)
		}
	}
}

// TestReflectCleansBadInput feeds inconsistent statistics: no panic, and
// the rules see cleaned numbers.
func TestReflectCleansBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	in := input(
		discovery.CompositionStat{Formula: "NaCl3", Queries: 2, EMin: &nan, EMax: &inf},
		discovery.CompositionStat{Formula: "NaCl3", Queries: 2},           // a duplicate: summed
		discovery.CompositionStat{Formula: "Xx2O", Queries: 5},            // not a formula: capped all the same
		discovery.CompositionStat{Formula: "", Queries: 9},                // ignored
		discovery.CompositionStat{Formula: "KBr", Queries: -4, Hits: 3},   // negative queries: ignored
		discovery.CompositionStat{Formula: "ZnO2", Queries: 3, Hits: 7},   // hits capped at the queries
		discovery.CompositionStat{Formula: "MgO", Queries: 1, Stable: -2}, // negative stable: 0
	)
	in.Directives = []messages.Directive{{Kind: messages.DirectiveCapComposition}, {Kind: "teleport"}}
	in.Existing = []Experience{{Key: ""}, {Key: "comp:ZnO2", Text: "old", Kind: KindComposition, Support: -3}}
	in.Counters.Evaluated = -1
	out := Reflect(in)
	if got, want := keys(out.Directives), []string{"cap_composition:Xx2O=5", "cap_composition:NaCl3=4"}; !slices.Equal(got, want) {
		t.Errorf("directives %v, want %v", got, want)
	}
	if out.Stats.UniqueCompositions != 4 || out.Stats.Queries != 13 || out.Stats.HitCompositions != 1 || out.Stats.Evaluated != 0 {
		t.Errorf("stats %+v", out.Stats)
	}
	for _, op := range out.Ops {
		if op.Experience.Key == "comp:ZnO2" && (op.Experience.Support != 3 || op.Edit != EditModify) {
			t.Errorf("ZnO2 lesson %+v, want support 3 (negative support counts as none)", op)
		}
	}
	if n := len(out.Bullets); n < MinBullets || n > MaxBullets {
		t.Errorf("%d bullets", n)
	}
}
