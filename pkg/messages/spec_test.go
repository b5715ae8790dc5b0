package messages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const specYAML = `id: perovskites-01
budget: 500
episodes: 2
islands: 4
generator: {kind: evolve}
task:
  name: Toxic-free perovskite oxides
  constraints:
    - {property: band_gap, kind: lower, lower: 2.0}
    - {property: bulk_modulus, kind: interval, lower: 90, upper: 135}
  elements:
    exclude: [Pb, Cd]
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A spec file, then a task, then the settings given one by one.
func TestAssembleSpecPrecedence(t *testing.T) {
	file := writeFile(t, "campaign.yaml", specYAML)
	spec, issues, err := AssembleSpec(SpecSource{File: file})
	if err != nil || len(issues) != 0 {
		t.Fatalf("%v %v", err, issues)
	}
	if spec.ID != "perovskites-01" || spec.Budget != 500 || spec.Episodes != 2 || spec.Islands != 4 ||
		spec.Task.Name != "Toxic-free perovskite oxides" || len(spec.Task.Elements.Exclude) != 2 {
		t.Errorf("from the file: %+v", spec)
	}
	if spec.Seed == 0 || spec.BatchSize != DefaultBatchSize || spec.Schema != SchemaVersion {
		t.Errorf("no random seed or defaults: %+v", spec)
	}

	spec, _, err = AssembleSpec(SpecSource{File: file, TaskName: "stable wide-bandgap semiconductors",
		Set: CampaignSpec{Budget: 40, Islands: 2, Seed: 7, StabilityThreshold: 0.05, Generator: GeneratorSpec{Kind: GeneratorLLM, Model: "m", Temperature: 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	if spec.ID != "perovskites-01" || spec.Episodes != 2 || spec.Task.Name != "Stable Wide-Bandgap Semiconductors" ||
		spec.Budget != 40 || spec.Islands != 2 || spec.Seed != 7 || spec.StabilityThreshold != 0.05 ||
		spec.Generator.Kind != GeneratorLLM || spec.Generator.Model != "m" || spec.Generator.Temperature != 0.5 {
		t.Errorf("the task and settings do not override the file: %+v", spec)
	}
	if spec.Generator.MaxLLMCalls != DefaultLLMCallsPerSlot*20 {
		t.Errorf("LLM call budget %d, want the default for 40 evaluations in batches of 2", spec.Generator.MaxLLMCalls)
	}
}

func TestAssembleSpecIdentity(t *testing.T) {
	a, _, err := AssembleSpec(SpecSource{TaskName: "Stable Wide-Bandgap Semiconductors", Set: CampaignSpec{Budget: 10}})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := AssembleSpec(SpecSource{TaskName: "Stable Wide-Bandgap Semiconductors", Set: CampaignSpec{Budget: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.ID, "stable-wide-bandgap-semiconductors-") || len(a.ID) != len("stable-wide-bandgap-semiconductors-")+6 {
		t.Errorf("id %q, want the task's slug and six hex digits", a.ID)
	}
	if a.ID == b.ID || a.Seed == b.Seed {
		t.Errorf("two campaigns share id %q or seed %d", a.ID, a.Seed)
	}
	if err := ValidateCampaignID(a.ID); err != nil {
		t.Error(err)
	}
}

func TestAssembleSpecTaskFile(t *testing.T) {
	one := writeFile(t, "one.yaml", "name: Loose\nconstraints:\n  - {property: e_above_hull, upper: 5}\n  - {property: band_gap, lower: 1}\n")
	spec, issues, err := AssembleSpec(SpecSource{TaskFile: one, Set: CampaignSpec{Budget: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Task.Name != "Loose" || len(issues) != 1 || !strings.Contains(issues[0].Message, "excludes almost nothing") {
		t.Errorf("task %q, issues %v", spec.Task.Name, issues)
	}
	two := writeFile(t, "two.yaml", "tasks:\n  - {name: A, constraints: [{property: band_gap, lower: 1}]}\n  - {name: B, constraints: [{property: band_gap, lower: 2}]}\n")
	if _, _, err := AssembleSpec(SpecSource{TaskFile: two, Set: CampaignSpec{Budget: 10}}); err == nil || !strings.Contains(err.Error(), "holds 2 tasks") {
		t.Errorf("two tasks: %v", err)
	}
}

// Bad or missing input is an error saying what is wrong.
func TestAssembleSpecErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  SpecSource
		is   error
		want string
	}{
		{"no task", SpecSource{Set: CampaignSpec{Budget: 10}}, ErrNoTask, ""},
		{"no budget", SpecSource{TaskName: "Stable Wide-Bandgap Semiconductors"}, ErrNoBudget, ""},
		{"name and file", SpecSource{TaskName: "x", TaskFile: "y", Set: CampaignSpec{Budget: 10}}, nil, "give one"},
		{"unknown task", SpecSource{TaskName: "no such task", Set: CampaignSpec{Budget: 10}}, nil, "unknown task"},
		{"unknown field", SpecSource{File: writeFile(t, "typo.yaml", "budjet: 10\ntask: {name: x, constraints: [{property: band_gap, lower: 1}]}\n")}, nil, `unknown key "budjet" (did you mean "budget"?)`},
		{"unknown task field", SpecSource{File: writeFile(t, "typo.yaml", "budget: 10\ntask: {name: x, goals: y, constraints: [{property: band_gap, lower: 1}]}\n")}, nil, `unknown key "goals" (did you mean "goal"?)`},
		{"bad YAML", SpecSource{File: writeFile(t, "bad.yaml", "budget: [10\n")}, nil, "bad.yaml"},
		{"invalid", SpecSource{TaskName: "Stable Wide-Bandgap Semiconductors", Set: CampaignSpec{Budget: 10, Islands: MaxIslands + 1}}, ErrInvalid, "campaign.islands"},
		{"missing file", SpecSource{File: filepath.Join(t.TempDir(), "absent.yaml")}, os.ErrNotExist, ""},
	} {
		_, _, err := AssembleSpec(tc.src)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %v %q", tc.name, err, tc.is, tc.want)
		}
	}
}

// The oracle's tiers and the screen: decoded strictly, defaulted, checked.
func TestSpecOracle(t *testing.T) {
	spec, _, err := AssembleSpec(SpecSource{File: writeFile(t, "c.yaml", specYAML)})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Oracle != DefaultOracle || spec.Screen.MaxEAboveHull != DefaultScreenMaxEAboveHull || spec.Screen.Multiple() != DefaultScreenErrorMultiple {
		t.Errorf("defaults: oracle %q, screen %+v", spec.Oracle, spec.Screen)
	}
	spec, _, err = AssembleSpec(SpecSource{File: writeFile(t, "c.yaml", specYAML+"oracle: relax\nscreen: {max_e_above_hull: 0.2, error_multiple: 0}\n")})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Oracle != OracleRelax || spec.Screen.MaxEAboveHull != 0.2 || spec.Screen.Multiple() != 0 {
		t.Errorf("oracle %q, screen %+v (multiple %v): want relax, 0.2, 0", spec.Oracle, spec.Screen, spec.Screen.Multiple())
	}
	spec, _, err = AssembleSpec(SpecSource{File: writeFile(t, "c.yaml", specYAML+"oracle: relax\n"), Set: CampaignSpec{Oracle: OracleScreen}})
	if err != nil || spec.Oracle != OracleScreen {
		t.Errorf("a flag's oracle does not override the file's: %q, %v", spec.Oracle, err)
	}
	for extra, field := range map[string]string{
		"oracle: dft\n":                    "campaign.oracle",
		"screen: {max_e_above_hull: -1}\n": "campaign.screen.max_e_above_hull",
		"screen: {error_multiple: -0.5}\n": "campaign.screen.error_multiple",
		"screen: {max_e_above_hul: 0.2}\n": `unknown key "max_e_above_hul" (did you mean "max_e_above_hull"?)`,
		"screen: {max_e_above_hull: 11}\n": "campaign.screen.max_e_above_hull",
	} {
		_, _, err := AssembleSpec(SpecSource{File: writeFile(t, "c.yaml", specYAML+extra)})
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%q: error %v, want one naming %s", extra, err, field)
		}
	}
}
