package task

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	tasks, issues, err := LoadFile(filepath.Join("testdata", "user_tasks.csv"))
	if err != nil {
		t.Fatalf("LoadFile: %v", err)
	}
	want := []struct {
		name        string
		constraints []string
		elements    ElementRules
		properties  []string
		notes       []string
	}{
		{"Lead-free Absorbers",
			[]string{"band_gap ≥ 1.1 eV", "band_gap ≤ 1.8 eV", "formation_energy_per_atom ≤ -0.2 eV/atom"},
			ElementRules{Exclude: []string{"Pb", "Cd"}}, []string{"e_above_hull"}, []string{"prefer chalcogenides"}},
		{"Light Superhard Ceramics",
			[]string{"bulk_modulus 150–400 GPa", "density ≤ 4 g/cm³"},
			ElementRules{AllowedOnly: []string{"B", "C", "N", "Si", "Al", "O"}}, nil, nil},
		{"Li Oxide Conductors",
			[]string{"e_above_hull ≤ 0.05 eV/atom", "band_gap ≥ 2 eV"},
			ElementRules{MustContainAll: []string{"Li", "O"}}, nil, []string{"high ionic conductivity"}},
	}
	if len(tasks) != len(want) {
		t.Fatalf("%d tasks, want %d", len(tasks), len(want))
	}
	for i, w := range want {
		got := tasks[i]
		if got.Name != w.name {
			t.Errorf("task %d: name %q, want %q", i, got.Name, w.name)
		}
		if cs := constraintStrings(got.Constraints); !slices.Equal(cs, w.constraints) {
			t.Errorf("%s: constraints %q, want %q", w.name, cs, w.constraints)
		}
		if !reflect.DeepEqual(got.Elements, w.elements) {
			t.Errorf("%s: elements %+v, want %+v", w.name, got.Elements, w.elements)
		}
		if !slices.Equal(got.Properties, w.properties) {
			t.Errorf("%s: properties %q, want %q", w.name, got.Properties, w.properties)
		}
		if !slices.Equal(got.Notes, w.notes) {
			t.Errorf("%s: notes %q, want %q", w.name, got.Notes, w.notes)
		}
	}
	wantIssues := []string{
		`line 3: Light Superhard Ceramics: properties: "Vickers hardness" is not a property Crucible knows`,
		`line 4: Li Oxide Conductors: not understood, kept as a note: "high ionic conductivity"`,
	}
	if len(issues) != len(wantIssues) {
		t.Fatalf("issues %v, want %d", issues, len(wantIssues))
	}
	for i, w := range wantIssues {
		if !strings.HasPrefix(issues[i].String(), w) {
			t.Errorf("issue %q, want prefix %q", issues[i], w)
		}
	}
}

func TestReadCSVRowErrors(t *testing.T) {
	tasks, _, err := LoadFile(filepath.Join("testdata", "bad_tasks.csv"))
	if len(tasks) != 1 || tasks[0].Name != "Good Task" {
		t.Errorf("tasks %v, want only the good one", tasks)
	}
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{
		`line 3 ("Hardness Task"): clause "Vickers hardness >= 20 GPa": unknown property "Vickers hardness"`,
		`line 4 ("Inverted"): clause "Shear modulus 200-100 GPa": bad constraint: lower bound 200 is above upper bound 100`,
		`line 5 ("Only Words"): no constraint: the goal "prefer cheap oxides; rank by stability" states no property constraint`,
		`line 6 ("Wrong Unit"): clause "Density <= 5 GPa": bad unit`,
		`line 7 ("good task"): bad task: same name as the task on line 2`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\ndoes not contain\n%s", err, want)
		}
	}
	for _, target := range []error{ErrUnknownProperty, ErrBadConstraint, ErrNoConstraint, ErrUnit, ErrBadTask} {
		if !errors.Is(err, target) {
			t.Errorf("error does not wrap %v", target)
		}
	}
}

func TestReadCSVFileErrors(t *testing.T) {
	tests := []struct {
		name, csv, text string
	}{
		{"empty", "", "empty CSV"},
		{"header only", "Task,Goal\n", "no tasks"},
		{"unknown column", "Task,Goals\nA,Band gap ≥ 1 eV\n", `unknown column "Goals"`},
		{"no goal column", "Task,Properties\nA,Band gap\n", "needs the columns Task and Goal"},
		{"column twice", "Task,Goal,goal\nA,B,C\n", "given twice"},
		{"bad quoting", "Task,Goal\n\"A,Band gap ≥ 1 eV\n", "bad task file"},
		{"short row", "Task,Goal\nA\n", "wrong number of fields"},
		{"empty name", "Task,Goal\n,Band gap ≥ 1 eV\n", "name: bad task: empty"},
	}
	for _, tt := range tests {
		_, _, err := ParseFile("x.csv", []byte(tt.csv))
		if err == nil || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.text)
		}
	}
	if _, _, err := ParseFile("tasks.txt", []byte("Task,Goal\n")); !errors.Is(err, ErrBadFile) {
		t.Errorf("unknown extension: %v, want ErrBadFile", err)
	}
}

func TestDecodeTasks(t *testing.T) {
	tasks, issues, err := LoadFile(filepath.Join("testdata", "tasks.yaml"))
	if err != nil {
		t.Fatalf("LoadFile(tasks.yaml): %v", err)
	}
	if len(issues) != 0 {
		t.Errorf("issues %v, want none", issues)
	}
	if len(tasks) != 2 {
		t.Fatalf("%d tasks, want 2", len(tasks))
	}
	stiff := tasks[0]
	if got, want := constraintStrings(stiff.Constraints), []string{"bulk_modulus ≥ 150 GPa (weight 2)", "density ≤ 4.5 g/cm³", "shear_modulus 80–250 GPa"}; !slices.Equal(got, want) {
		t.Errorf("typed constraints %q, want %q", got, want)
	}
	if want := (ElementRules{MustContainAll: []string{"O"}, Exclude: []string{"Be", "Pb"}}); !reflect.DeepEqual(stiff.Elements, want) {
		t.Errorf("typed elements %+v, want %+v", stiff.Elements, want)
	}
	if !slices.Equal(stiff.Properties, []string{"e_above_hull"}) || len(stiff.Notes) != 1 || stiff.Domain != "Structural" {
		t.Errorf("typed task: %+v", stiff)
	}
	goalOnly := tasks[1]
	if got, want := constraintStrings(goalOnly.Constraints), []string{"band_gap 1–1.5 eV", "formation_energy_per_atom ≤ 0 eV/atom"}; !slices.Equal(got, want) {
		t.Errorf("constraints from the goal %q, want %q", got, want)
	}
	if want := (ElementRules{Exclude: []string{"Cu"}, EarthAbundant: true, NonToxic: true}); !reflect.DeepEqual(goalOnly.Elements, want) {
		t.Errorf("merged elements %+v, want %+v", goalOnly.Elements, want)
	}
	if !slices.Equal(goalOnly.Notes, []string{"prefer sulfides"}) {
		t.Errorf("notes %q", goalOnly.Notes)
	}

	single, _, err := LoadFile(filepath.Join("testdata", "task.json"))
	if err != nil || len(single) != 1 || single[0].Name != "Insulating Nitrides" || len(single[0].Constraints) != 2 {
		t.Errorf("LoadFile(task.json) = %+v, %v", single, err)
	}
}

func TestDecodeTasksErrors(t *testing.T) {
	tasks, _, err := LoadFile(filepath.Join("testdata", "bad_tasks.yaml"))
	if len(tasks) != 1 || tasks[0].Name != "Fine" {
		t.Errorf("tasks %+v, want only Fine", tasks)
	}
	for _, want := range []string{
		`tasks[0]: unknown key "lowr" (did you mean "lower"?)`,
		`tasks[1] ("Zero Weight"): constraints[0].weight: bad constraint: weight 0 must be positive`,
		`tasks[1] ("Zero Weight"): constraints[1].property: unknown property "hardness"`,
		`tasks[1] ("Zero Weight"): elements.exclude: bad element rule: empty element set`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error\n%v\ndoes not contain\n%s", err, want)
		}
	}
	inline := []struct{ name, doc, text string }{
		{"empty", "", "no tasks"},
		{"scalar", "just text", "want a task"},
		{"empty list", "tasks: []", "no tasks"},
		{"bad yaml", "tasks: [", "bad task file"},
		{"goal with an error", "name: X\ngoal: Band gap ≥ 2 GPa", `goal: clause "Band gap ≥ 2 GPa"`},
		{"duplicate names", "- {name: A, goal: Band gap ≥ 1 eV}\n- {name: a, goal: Band gap ≥ 2 eV}", "same name as tasks[0]"},
		{"one-of twice", "name: X\ngoal: Band gap ≥ 1 eV, must contain Li/Na\nelements: {must_contain_one_of: [K, Rb]}", "elements.must_contain_one_of: bad element rule: given both"},
	}
	for _, tt := range inline {
		_, _, err := DecodeTasks([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.text)
		}
	}
}

// TestRoundTrip writes every built-in task as YAML and as JSON and reads
// it back unchanged.
func TestRoundTrip(t *testing.T) {
	builtins := Builtins()
	y, err := EncodeYAML(builtins...)
	if err != nil {
		t.Fatal(err)
	}
	back, issues, err := DecodeTasks(y)
	if err != nil || len(issues) != 0 {
		t.Fatalf("DecodeTasks(EncodeYAML(builtins)): %v, %v\n%s", err, issues, y)
	}
	if !reflect.DeepEqual(back, builtins) {
		t.Errorf("YAML round trip changed the tasks:\n%s", y)
	}
	for _, b := range builtins {
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := ParseFile("task.json", j)
		if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], b) {
			t.Errorf("%s: JSON round trip: %v\n%s", b.Name, err, j)
		}
	}
}

// TestJSONFieldNames pins the wire names other packages depend on.
func TestJSONFieldNames(t *testing.T) {
	task := Task{
		Name:        "n",
		Constraints: []Constraint{Between("band_gap", 1, 2).WithWeight(2)},
		Elements:    ElementRules{MustContainOneOf: []string{"Li"}, MustContainAll: []string{"O"}, Exclude: []string{"Pb"}, AllowedOnly: []string{"Li", "O"}, EarthAbundant: true, NonToxic: true},
		Properties:  []string{"density"},
		Notes:       []string{"x"},
	}
	j, err := json.Marshal(task)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"n","constraints":[{"property":"band_gap","kind":"interval","lower":1,"upper":2,"weight":2}],` +
		`"elements":{"must_contain_one_of":["Li"],"must_contain_all":["O"],"exclude":["Pb"],"allowed_only":["Li","O"],"earth_abundant":true,"non_toxic":true},` +
		`"properties":["density"],"notes":["x"]}`
	if string(j) != want {
		t.Errorf("JSON\n%s\nwant\n%s", j, want)
	}
	if j, _ := json.Marshal(Task{Name: "n", Constraints: []Constraint{AtLeast("band_gap", 0)}}); !strings.Contains(string(j), `"lower":0`) || strings.Contains(string(j), "elements") {
		t.Errorf("zero bound must be written and empty rules omitted: %s", j)
	}
	var e Evaluation
	if j, _ := json.Marshal(e); string(j) != `{"margins":null,"score":0,"feasible":false}` {
		t.Errorf("evaluation JSON %s", j)
	}
}
