package llm

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

var update = flag.Bool("update", false, "rewrite the golden prompts")

// member builds a pool member from a candidate of testdata/answers.
func member(t testing.TB, file string, index int, g int, score float64, props map[string]float64, ehull float64) store.Member {
	t.Helper()
	ex, err := extractCandidates(answer(t, file))
	if err != nil {
		t.Fatal(err)
	}
	_, s, err := crystal.ParseCandidateJSON(ex.Candidates[index])
	if err != nil {
		t.Fatal(err)
	}
	m := store.Member{ID: "m", Formula: s.Composition().ReducedFormula(), Structure: messages.StructureOf(s), Score: score,
		Valid: true, Generation: g, Properties: props, EAboveHull: &ehull}
	tk, _ := task.ByName("Stable Wide-Bandgap Semiconductors")
	for _, c := range tk.Constraints {
		v := props[c.Property]
		l, u := c.Bounds()
		margin := 1.0
		if v < l || v > u {
			margin = -0.5
		}
		m.Margins = append(m.Margins, messages.Margin{Property: c.Property, Kind: string(c.Kind), Value: v, Margin: margin, Weight: 1})
	}
	m.Feasible = m.Margins[0].Margin >= 0 && m.Margins[1].Margin >= 0
	return m
}

// fixtureInput is a generation-3 input of the wide-bandgap task: two
// successes, two failures, two rejected proposals, a reflection, a
// directive and six rules.
func fixtureInput(t testing.TB) *proposer.Input {
	t.Helper()
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "wbg-test", Task: tk, Budget: 40, Generator: messages.GeneratorSpec{Kind: messages.GeneratorLLM}}
	spec.ApplyDefaults()
	zns := member(t, "well_formed.json", 0, 0, 0.9, map[string]float64{"band_gap": 3.1, "formation_energy_per_atom": -1.2}, 0.02)
	zns.Seed = true
	gan := member(t, "well_formed.json", 1, 2, 0.7, map[string]float64{"band_gap": 2.9, "formation_energy_per_atom": -1.05}, 0.0)
	gan.Formula = "GaN"
	fail1 := member(t, "overlap.json", 1, 1, -0.2, map[string]float64{"band_gap": 1.7, "formation_energy_per_atom": -0.6}, 0.31)
	fail1.Formula = "ZnS"
	fail2 := member(t, "well_formed.json", 1, 2, -0.1, map[string]float64{"band_gap": 2.1, "formation_energy_per_atom": -1.1}, 0.15)
	rej1 := store.Member{Formula: "XxO", Generation: 2, Score: -1, Reasons: []messages.Reason{{Code: "unknown_element", Detail: `species[0]: unknown element: "Xx"`}}}
	rej2 := store.Member{Formula: "MgO", Generation: 1, Score: -1, Reasons: []messages.Reason{{Code: "overlap", Detail: "sites 0 and 1 are 0.15 Å apart (minimum 0.5 Å)"}}}
	return &proposer.Input{
		Spec: spec, Request: &messages.GenerationRequest{Campaign: spec.ID, Generation: 3, Slots: 2}, Island: 1,
		Successes: []store.Member{zns, gan}, Failures: []store.Member{fail2, fail1}, Rejects: []store.Member{rej1, rej2},
		Reflections: []messages.Reflection{{Episode: 0, Bullets: []string{"Nitrides of group 13 met both constraints most often.", "Sulfides were too unstable."}}},
		Directives:  []messages.Directive{{Kind: messages.DirectiveExcludeElement, Element: "Cd", Reason: "toxic"}},
		Rules:       []int{12, 0, 4, 2, 8, 10},
		Seed:        1,
	}
}

func renderFixture(t *testing.T, in *proposer.Input, budget int) *Rendered {
	t.Helper()
	tmpl, err := LoadTemplate(DefaultTemplate)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tmpl.Render(NewPromptData(in), budget, EstimateChat)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRenderGolden(t *testing.T) {
	r := renderFixture(t, fixtureInput(t), 1<<20)
	got := "SYSTEM:\n" + r.System + "\n\nUSER:\n" + r.User
	path := filepath.Join("testdata", "prompt_v1.golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("prompt differs from %s (run with -update to accept):\n%s", path, got)
	}
	if r.Dropped != 0 {
		t.Fatalf("dropped %d with an unlimited budget", r.Dropped)
	}
	t.Logf("prompt of the fixture: %d tokens (estimate)", r.Tokens)
}

func TestRenderSections(t *testing.T) {
	in := fixtureInput(t)
	r := renderFixture(t, in, 1<<20)
	for _, want := range []string{
		"# Task: Stable Wide-Bandgap Semiconductors", "- Band gap ≥ 2.5 eV", "- Formation energy ≤ -1 eV/atom",
		"≤ 0.1 eV/atom counts as stable", "- Do not use Cd (toxic)", "1. Same-group elemental substitution",
		"13. Tolerance-factor guided substitution", "- Nitrides of group 13 met both constraints most often.",
		"- ZnS (known material): Band gap 3.1 eV ✓, Formation energy -1.2 eV/atom ✓; E_hull 0.020 eV/atom (stable)",
		"Band gap 1.7 eV ✗ (needs ≥ 2.5)", "E_hull 0.310 eV/atom (unstable)", `{"formula":"GaN","lattice":{"a":3.19,"b":3.19,"c":5.19,"alpha":90,"beta":90,"gamma":120}`,
		`- XxO: unknown_element: species[0]: unknown element: "Xx"`, "Propose 2 new candidates",
		`{"candidates":[{"formula":"…"`,
	} {
		if !strings.Contains(r.User, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	// Generation 0: no rules (LLEMA App. D.2), and one candidate asked.
	in.Request.Generation, in.Rules, in.Request.Slots = 0, nil, 1
	r = renderFixture(t, in, 1<<20)
	if strings.Contains(r.User, "## Design rules") || !strings.Contains(r.User, "Propose 1 new candidate,") {
		t.Errorf("generation-0 prompt:\n%s", r.User)
	}
	// Empty pools say so.
	in.Successes, in.Failures, in.Rejects, in.Reflections, in.Directives = nil, nil, nil, nil, nil
	r = renderFixture(t, in, 1<<20)
	if strings.Count(r.User, "None yet.") != 2 || strings.Contains(r.User, "## Rejected") || strings.Contains(r.User, "## Lessons") || strings.Contains(r.User, "## Enforced") {
		t.Errorf("empty prompt:\n%s", r.User)
	}
}

// TestRenderStructureRules: a task that requires a structure family, a
// stoichiometry and anions says so in the prompt, as requirements.
func TestRenderStructureRules(t *testing.T) {
	in := fixtureInput(t)
	in.Spec.Task.Structure, in.Spec.Task.Formula, in.Spec.Task.Anions = "perovskite", "ABX3", []string{"O"}
	r := renderFixture(t, in, 1<<20)
	for _, want := range []string{
		"- Required (a candidate outside is discarded unevaluated): structure: perovskite — a three-dimensional network of corner-sharing BX6 octahedra",
		"- Required (a candidate outside is discarded unevaluated): stoichiometry ABX3",
		"- Required (a candidate outside is discarded unevaluated): anions: only O",
	} {
		if !strings.Contains(r.User, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
}

func TestRenderBudgetDropsOldestFirst(t *testing.T) {
	in := fixtureInput(t)
	full := renderFixture(t, in, 1<<20)
	// The demonstrations, oldest first: MgO reject (g1), ZnS failure (g1),
	// ZnS seed success (g0) comes first of all.
	r := renderFixture(t, in, full.Tokens-1)
	if r.Dropped != 1 || r.Tokens > full.Tokens-1 {
		t.Fatalf("dropped %d, %d tokens", r.Dropped, r.Tokens)
	}
	if strings.Contains(r.User, "(known material)") {
		t.Fatalf("the generation-0 seed was kept:\n%s", r.User)
	}
	r = renderFixture(t, in, full.Tokens-200)
	if r.Dropped < 2 || strings.Contains(r.User, "- MgO: overlap") {
		t.Fatalf("dropped %d; the generation-1 reject should go before later demonstrations:\n%s", r.Dropped, r.User)
	}
	if !strings.Contains(r.User, "- XxO: unknown_element") {
		t.Fatalf("the generation-2 reject went before older demonstrations:\n%s", r.User)
	}
	// A budget below the fixed part: everything droppable goes, the rest
	// is sent.
	r = renderFixture(t, in, 256)
	if want := 2 + 2 + 2 + 2; r.Dropped != want || strings.Contains(r.User, "## Lessons") {
		t.Fatalf("dropped %d, want %d:\n%s", r.Dropped, want, r.User)
	}
	if !strings.Contains(r.User, "# Task:") || !strings.Contains(r.User, `{"candidates":`) {
		t.Fatalf("the fixed part was cut:\n%s", r.User)
	}
	// The input is untouched.
	if len(in.Successes) != 2 || len(in.Rejects) != 2 {
		t.Fatal("Render modified the input")
	}
}

func TestTemplates(t *testing.T) {
	vs := TemplateVersions()
	if len(vs) == 0 || vs[0] != "v1" {
		t.Fatalf("versions %v", vs)
	}
	if _, err := LoadTemplate("v0"); err == nil {
		t.Fatal("an unknown version loaded")
	}
	tmpl, err := LoadTemplate("v1")
	if err != nil {
		t.Fatal(err)
	}
	// OpenAI's strict structured output wants every object closed and
	// every property required.
	var schema map[string]any
	if err := json.Unmarshal(tmpl.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v map[string]any)
	walk = func(path string, v map[string]any) {
		if v["type"] == "object" {
			if v["additionalProperties"] != false {
				t.Errorf("%s: additionalProperties is not false", path)
			}
			props, _ := v["properties"].(map[string]any)
			req, _ := v["required"].([]any)
			if len(req) != len(props) {
				t.Errorf("%s: %d properties, %d required", path, len(props), len(req))
			}
			for name, p := range props {
				walk(path+"."+name, p.(map[string]any))
			}
		}
		if items, ok := v["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
	}
	walk("$", schema)
}
