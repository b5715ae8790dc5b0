package task

import (
	"strings"
	"testing"
)

// FuzzParseGoal checks that no goal makes the parser panic, and that a goal
// read without error gives valid constraints and element rules.
func FuzzParseGoal(f *testing.F) {
	for _, b := range Builtins() {
		f.Add(b.Goal)
	}
	for _, s := range []string{
		"Band gap 0.7-2.0 eV", "Formation energy -2--1 eV/atom", "Band gap between 1 and 2 eV and density ≤ 3 g/cm³",
		"must contain Li, Na, or K", "exclude Pb, Xx", "195 GPa >= shear_modulus >= 65 GPa", "≤≤≥", ",,;;and and",
		"Band gap ≥ 1e400 eV", "K ≥ -0 GPa", "only", "exclude", "(", "Band gap ≥ .5",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, goal string) {
		g, err := ParseGoal(goal)
		if err != nil {
			return
		}
		task := Task{Name: "fuzz", Constraints: g.Constraints, Elements: g.Elements}
		if verr := task.Validate(); verr != nil && !strings.Contains(verr.Error(), "forbidden by the other rules") {
			t.Errorf("ParseGoal(%q) gave an invalid task: %v", goal, verr)
		}
		for _, n := range g.Notes {
			if strings.TrimSpace(n) == "" {
				t.Errorf("ParseGoal(%q): empty note", goal)
			}
		}
	})
}

// FuzzDecodeTasks checks that no task file makes the decoder panic and that
// every task it returns is valid.
func FuzzDecodeTasks(f *testing.F) {
	y, err := EncodeYAML(Builtins()...)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(y)
	f.Add([]byte("name: X\ngoal: Band gap ≥ 2 eV"))
	f.Add([]byte(`[{"name":"A","constraints":[{"property":"band_gap","lower":1}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, _, _ := DecodeTasks(data)
		for _, task := range tasks {
			if err := task.Validate(); err != nil {
				t.Errorf("DecodeTasks returned an invalid task %q: %v", task.Name, err)
			}
		}
	})
}
