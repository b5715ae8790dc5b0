package proposer

import (
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

func TestCheckerEnforcesDirectives(t *testing.T) {
	spec := &messages.CampaignSpec{ID: "c", Budget: 10, Task: task.Task{Name: "t",
		Constraints: []task.Constraint{task.AtLeast("band_gap", 1)}, Elements: task.ElementRules{Exclude: []string{"Cd"}}}}
	spec.ApplyDefaults()
	dirs := []messages.Directive{
		{Kind: messages.DirectiveCapComposition, Formula: "MgO", Limit: 2, Reason: "3 queries, none stable"},
		{Kind: messages.DirectiveExcludeElement, Element: "Ba", Reason: "never a hit"},
		{Kind: messages.DirectiveAvoidSystem, System: "Ca-S", Reason: "three capped compositions"},
	}
	counts := map[string]int{"MgO": 1}
	k := newChecker(spec, dirs, counts, func(string) bool { return false }, CheckOptions{})
	cases := []struct {
		formula string
		code    string // "" when accepted
	}{
		{"MgO", ""},          // 1 query so far, the cap is 2
		{"MgO", "directive"}, // the pending one fills the cap
		{"BaO", "directive"},
		{"CaS", "directive"},
		{"CdO", "element_rule"},
		{"NaCl", ""},
	}
	for i, tc := range cases {
		c := &messages.Candidate{}
		// The generator's fingerprint reaches the candidate.
		reasons := k.check(Proposed{Structure: crystaltest.Build(t, "rocksalt", tc.formula), Fingerprint: tc.formula + "-given"}, c)
		switch {
		case tc.code == "" && len(reasons) > 0:
			t.Errorf("%d %s rejected: %v", i, tc.formula, reasons)
		case tc.code == "" && c.Fingerprint != tc.formula+"-given":
			t.Errorf("%d %s: fingerprint %q", i, tc.formula, c.Fingerprint)
		case tc.code != "" && (len(reasons) == 0 || reasons[0].Code != tc.code):
			t.Errorf("%d %s: reasons %v, want code %s", i, tc.formula, reasons, tc.code)
		}
	}
	// A stated formula that disagrees with the structure is rejected.
	if r := k.check(Proposed{Structure: crystaltest.Build(t, "rocksalt", "NaCl"), Formula: "NaCl2"}, &messages.Candidate{}); len(r) == 0 || r[0].Code != string(crystal.ReasonFormulaMismatch) {
		t.Errorf("formula mismatch: %v", r)
	}
	if r := k.check(Proposed{}, &messages.Candidate{}); len(r) == 0 || r[0].Code != "no_structure" {
		t.Errorf("no structure: %v", r)
	}
}

// TestCheckerEnforcesStructureRules: the built-in perovskite-oxide task
// rejects fluorides, other stoichiometries and ABO3 cells that are not
// perovskites, each with its reason code.
func TestCheckerEnforcesStructureRules(t *testing.T) {
	tk, err := task.ByName("Toxic-Free Perovskite Oxides")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "c", Budget: 10, Task: tk}
	spec.ApplyDefaults()
	k := newChecker(spec, nil, map[string]int{}, func(string) bool { return false }, CheckOptions{})
	flat := crystaltest.Build(t, "perovskite", "SrTiO3")
	m := flat.Lattice.Matrix()
	m[2][2] *= 0.6
	l, err := crystal.NewLattice(m)
	if err != nil {
		t.Fatal(err)
	}
	flat.Lattice = l
	for _, tc := range []struct {
		name  string
		s     *crystal.Structure
		codes []string
	}{
		{"SrTiO3", crystaltest.Build(t, "perovskite", "SrTiO3"), nil},
		{"KMgF3", crystaltest.Build(t, "perovskite", "KMgF3"), []string{task.RuleAnions}},
		{"MgO", crystaltest.Build(t, "rocksalt", "MgO"), []string{task.RuleFormula, task.RuleStructure}},
		{"collapsed SrTiO3", flat, []string{task.RuleStructure}},
	} {
		var codes []string
		for _, r := range k.check(Proposed{Structure: tc.s}, &messages.Candidate{}) {
			codes = append(codes, r.Code)
		}
		if !slices.Equal(codes, tc.codes) {
			t.Errorf("%s: codes %v, want %v", tc.name, codes, tc.codes)
		}
	}
}
