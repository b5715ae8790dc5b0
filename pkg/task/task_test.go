package task

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func TestValidateNamesTheField(t *testing.T) {
	valid := func() Task {
		return Task{Name: "t", Constraints: []Constraint{AtLeast("band_gap", 1), Between("bulk_modulus", 100, 200)}}
	}
	tests := []struct {
		name   string
		edit   func(*Task)
		field  string // the FieldError's field
		target error  // errors.Is target
		text   string // substring of the message
	}{
		{"empty name", func(t *Task) { t.Name = " " }, "name", ErrBadTask, "empty"},
		{"no constraints", func(t *Task) { t.Constraints = nil }, "constraints", ErrNoConstraint, "at least one"},
		{"unknown property", func(t *Task) { t.Constraints[1].Property = "hardness" }, "constraints[1].property", ErrUnknownProperty, `"hardness"`},
		{"alias not canonical", func(t *Task) { t.Constraints[0].Property = "Band gap" }, "constraints[0].property", ErrUnknownProperty, `use the canonical name "band_gap"`},
		{"missing property", func(t *Task) { t.Constraints[0].Property = "" }, "constraints[0].property", ErrUnknownProperty, "missing"},
		{"inverted interval", func(t *Task) { t.Constraints[1] = Between("bulk_modulus", 300, 100) }, "constraints[1].lower", ErrBadConstraint, "lower bound 300 is above upper bound 100"},
		{"interval without upper", func(t *Task) { t.Constraints[1].Upper = nil }, "constraints[1].upper", ErrBadConstraint, "kind interval needs the upper bound"},
		{"lower without lower", func(t *Task) { t.Constraints[0].Lower = nil }, "constraints[0].lower", ErrBadConstraint, "kind lower needs the lower bound"},
		{"upper without upper", func(t *Task) { t.Constraints[0] = Constraint{Property: "density", Kind: Upper} }, "constraints[0].upper", ErrBadConstraint, "kind upper needs the upper bound"},
		{"lower with an upper", func(t *Task) { t.Constraints[0].Upper = new(3.0) }, "constraints[0].upper", ErrBadConstraint, "kind lower takes no upper bound"},
		{"missing kind", func(t *Task) { t.Constraints[0].Kind = "" }, "constraints[0].kind", ErrBadConstraint, "missing"},
		{"bad kind", func(t *Task) { t.Constraints[0].Kind = "target" }, "constraints[0].kind", ErrBadConstraint, `"target"`},
		{"NaN bound", func(t *Task) { t.Constraints[0].Lower = new(math.NaN()) }, "constraints[0].lower", ErrBadConstraint, "not finite"},
		{"zero weight", func(t *Task) { t.Constraints[1] = t.Constraints[1].WithWeight(0) }, "constraints[1].weight", ErrBadConstraint, "must be positive"},
		{"negative weight", func(t *Task) { t.Constraints[0] = t.Constraints[0].WithWeight(-1) }, "constraints[0].weight", ErrBadConstraint, "must be positive"},
		{"empty exclude", func(t *Task) { t.Elements.Exclude = []string{} }, "elements.exclude", ErrBadElementRule, "empty element set"},
		{"empty one-of", func(t *Task) { t.Elements.MustContainOneOf = []string{} }, "elements.must_contain_one_of", ErrBadElementRule, "empty element set"},
		{"unknown element", func(t *Task) { t.Elements.Exclude = []string{"Pb", "Xx"} }, "elements.exclude[1]", crystal.ErrUnknownElement, `"Xx"`},
		{"lower-case symbol", func(t *Task) { t.Elements.AllowedOnly = []string{"li"} }, "elements.allowed_only[0]", crystal.ErrUnknownElement, `"li"`},
		{"one-of all excluded", func(t *Task) {
			t.Elements = ElementRules{MustContainOneOf: []string{"Pb", "Cd"}, Exclude: []string{"Pb", "Cd"}}
		}, "elements.must_contain_one_of", ErrBadElementRule, "forbidden"},
		{"required but toxic", func(t *Task) {
			t.Elements = ElementRules{MustContainAll: []string{"O", "Pb"}, NonToxic: true}
		}, "elements.must_contain_all[1]", ErrBadElementRule, "Pb is required"},
		{"allowed all rare", func(t *Task) {
			t.Elements = ElementRules{AllowedOnly: []string{"Pt", "Ir"}, EarthAbundant: true}
		}, "elements.allowed_only", ErrBadElementRule, "forbidden"},
		{"unknown reported property", func(t *Task) { t.Properties = []string{"e_above_hull", "colour"} }, "properties[1]", ErrUnknownProperty, `"colour"`},
	}
	for _, tt := range tests {
		task := valid()
		tt.edit(&task)
		err := task.Validate()
		if err == nil {
			t.Errorf("%s: Validate() = nil", tt.name)
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%s: error %q does not name field %q", tt.name, err, tt.field)
		}
		if !errors.Is(err, tt.target) {
			t.Errorf("%s: error %q is not %v", tt.name, err, tt.target)
		}
		if !strings.Contains(err.Error(), tt.field+": ") || !strings.Contains(err.Error(), tt.text) {
			t.Errorf("%s: error %q lacks %q or %q", tt.name, err, tt.field+": ", tt.text)
		}
	}
	if err := valid().Validate(); err != nil {
		t.Errorf("valid task: %v", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	task := Task{Constraints: []Constraint{{Property: "x", Kind: Lower}}}
	err := task.Validate()
	for _, field := range []string{"name: ", "constraints[0].property: ", "constraints[0].lower: "} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate() = %v, want it to report %q", err, field)
		}
	}
}

func TestConstraintWords(t *testing.T) {
	tests := []struct {
		c             Constraint
		str, describe string
	}{
		{AtLeast("band_gap", 2.5), "band_gap ≥ 2.5 eV", "Band gap ≥ 2.5 eV"},
		{AtMost("formation_energy_per_atom", -1), "formation_energy_per_atom ≤ -1 eV/atom", "Formation energy ≤ -1 eV/atom"},
		{Between("bulk_modulus", 100, 300), "bulk_modulus 100–300 GPa", "Bulk modulus 100–300 GPa"},
		{Between("dielectric_constant", 3.7, 95), "dielectric_constant 3.7–95", "Dielectric constant 3.7–95"},
		{AtMost("density", 5).WithWeight(2), "density ≤ 5 g/cm³ (weight 2)", "Density ≤ 5 g/cm³ (weight 2)"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.str {
			t.Errorf("String() = %q, want %q", got, tt.str)
		}
		if got := tt.c.Describe(); got != tt.describe {
			t.Errorf("Describe() = %q, want %q", got, tt.describe)
		}
	}
}

func TestSupport(t *testing.T) {
	tests := []struct {
		task          string
		support       Support
		unsupported   []string
		referenceOnly []string
	}{
		{"Hard, Stiff Ceramics", SupportSurrogate, nil, nil},
		{"High-k Dielectrics", SupportSurrogate, nil, nil},
		{"Piezo Energy Harvesters", SupportSurrogate, nil, nil},
		{"Transparent Conductors", SupportSurrogate, nil, nil},
		{"Electrically Insulating Dielectrics", SupportSurrogate, nil, nil},
	}
	for _, tt := range tests {
		task := mustTask(t, tt.task)
		if got := task.Support(); got != tt.support {
			t.Errorf("%s: Support() = %s, want %s", tt.task, got, tt.support)
		}
		if got := task.Unsupported(); !slices.Equal(got, tt.unsupported) {
			t.Errorf("%s: Unsupported() = %v, want %v", tt.task, got, tt.unsupported)
		}
		if got := task.ReferenceOnly(); !slices.Equal(got, tt.referenceOnly) {
			t.Errorf("%s: ReferenceOnly() = %v, want %v", tt.task, got, tt.referenceOnly)
		}
	}
	for _, b := range Builtins() {
		if got := b.Support(); got != SupportSurrogate {
			t.Errorf("built-in %q: Support() = %s, want surrogate", b.Name, got)
		}
	}
	electronic := Task{Constraints: []Constraint{AtLeast("dielectric_electronic", 4)}}
	if got := electronic.ReferenceOnly(); !slices.Equal(got, []string{"dielectric_electronic"}) || electronic.Support() != SupportReference {
		t.Errorf("ε∞ task: ReferenceOnly() = %v, Support() = %s", got, electronic.Support())
	}
	density := Task{Constraints: []Constraint{AtMost("density", 3)}}
	if got := density.Support(); got != SupportStructure {
		t.Errorf("density-only task: Support() = %s, want structure", got)
	}
	if got := (Task{Constraints: []Constraint{AtMost("e_above_hull", 0.1), AtMost("density", 3)}}).Support(); got != SupportHull {
		t.Errorf("hull and density: Support() = %s, want hull", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	orig := mustTask(t, "Toxic_Free_Perovskite_Oxide")
	c := orig.Clone()
	*c.Constraints[0].Lower = 99
	c.Elements.Exclude[0] = "Fe"
	c.Notes[0] = "changed"
	if *orig.Constraints[0].Lower != 2 || orig.Elements.Exclude[0] != "Pb" || orig.Notes[0] == "changed" {
		t.Error("Clone shares memory with the original")
	}
}

func TestCheckProviders(t *testing.T) {
	thermo := Task{Name: "thermoelectrics", Constraints: []Constraint{AtLeast("seebeck_coefficient", 200), AtLeast("band_gap", 0.1)}}
	err := thermo.CheckProviders(nil)
	if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), "seebeck_coefficient") || !strings.Contains(err.Error(), "models/registry.yaml") {
		t.Errorf("CheckProviders without a plug-in: %v, want the property and how to add a provider", err)
	}
	if err := thermo.CheckProviders([]string{"seebeck_coefficient"}); err != nil {
		t.Errorf("with a plug-in for it: %v", err)
	}
	for _, b := range Builtins() {
		if err := b.CheckProviders(nil); err != nil {
			t.Errorf("built-in %s: %v", b.Name, err)
		}
	}
}
