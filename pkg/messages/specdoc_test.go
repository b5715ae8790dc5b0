package messages

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/task"
)

// specDoc is the reference of campaign specs and task files.
const specDoc = "../../docs/campaign-spec.md"

// docRow is one row of a table of specDoc: a field (or property) and its
// cells after the name.
type docRow struct {
	name  string
	cells []string
}

// docTable reads the table of the section headed "## <heading>": rows whose
// first cell is a name in backticks.
func docTable(t *testing.T, heading string) map[string]docRow {
	t.Helper()
	return docTableIn(t, specDoc, heading)
}

// docTableIn reads the table of the section headed "## <heading>" of doc.
func docTableIn(t *testing.T, doc, heading string) map[string]docRow {
	t.Helper()
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]docRow{}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## "+heading
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := strings.Trim(cells[0], "`")
		if _, dup := rows[name]; dup {
			t.Errorf("%s: %s listed twice under %q", doc, name, heading)
		}
		rows[name] = docRow{name: name, cells: cells[1:]}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no table under %q", doc, heading)
	}
	return rows
}

// docField is a field of a Go type as its YAML/JSON form names it:
// "generator.kind", "constraints[].lower".
type docField struct {
	path string
	typ  string
	// index leads from the walked type to the field (reflect.Value.
	// FieldByIndex), through slices at their first element.
	index [][]int
}

// walkFields lists the fields of t by their json names, nested structs
// and lists of structs recursively. leaf types are listed as "object"
// without their fields (documented elsewhere).
func walkFields(t reflect.Type, prefix string, index [][]int, leaf func(reflect.Type) bool) []docField {
	var out []docField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		idx := append(slices.Clone(index), []int{i})
		ft := f.Type
		if name == "" && f.Anonymous && ft.Kind() == reflect.Struct {
			// An embedded struct's fields are inlined.
			out = append(out, walkFields(ft, prefix, idx, leaf)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		path := prefix + name
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		out = append(out, docField{path: path, typ: typeName(ft, leaf), index: idx})
		switch {
		case ft.Kind() == reflect.Struct && ft != timeType && !leaf(ft):
			out = append(out, walkFields(ft, path+".", idx, leaf)...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, walkFields(ft.Elem(), path+"[].", append(idx, nil), leaf)...)
		}
	}
	return out
}

var timeType = reflect.TypeFor[time.Time]()

// typeName is the type of a field's YAML/JSON value, as the doc writes it.
func typeName(t reflect.Type, leaf func(reflect.Type) bool) string {
	switch {
	case t == timeType:
		return "time"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "object"
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem(), leaf) + "s"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// fieldOf returns the field at f.index in v (a pointer to the walked
// struct), through the first element of slices.
func fieldOf(v reflect.Value, f docField) reflect.Value {
	v = v.Elem()
	for _, step := range f.index {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		if step == nil {
			if v.Len() == 0 {
				return reflect.Value{}
			}
			v = v.Index(0)
			continue
		}
		v = v.FieldByIndex(step)
	}
	return v
}

// literal is a default cell that is one code span, without the backticks.
var literal = regexp.MustCompile("^`([^`]*)`$")

// checkRows checks that every field has a row with its type and a
// meaning, and every row a field.
func checkRows(t *testing.T, heading string, rows map[string]docRow, fields []docField) {
	t.Helper()
	for _, f := range fields {
		r, ok := rows[f.path]
		switch {
		case !ok:
			t.Errorf("%s, %q: field %s (%s) is not documented", specDoc, heading, f.path, f.typ)
		case len(r.cells) != 3:
			t.Errorf("%s, %q: row %s has %d cells, want type, default, meaning", specDoc, heading, f.path, len(r.cells)+1)
		case r.cells[0] != f.typ:
			t.Errorf("%s, %q: %s is documented as %q, its type is %q", specDoc, heading, f.path, r.cells[0], f.typ)
		case r.cells[2] == "" && f.typ != "object":
			t.Errorf("%s, %q: %s has no meaning", specDoc, heading, f.path)
		}
	}
	for name := range rows {
		if !slices.ContainsFunc(fields, func(f docField) bool { return f.path == name }) {
			t.Errorf("%s, %q: %s is documented but is no field", specDoc, heading, name)
		}
	}
}

// TestCampaignSpecDocumented: docs/campaign-spec.md documents every field
// of a campaign spec with its type; a constant default it gives is the
// one ApplyDefaults applies, and a field it says is required fails
// validation when left out.
func TestCampaignSpecDocumented(t *testing.T) {
	rows := docTable(t, "Campaign spec")
	isTask := func(t reflect.Type) bool { return t == reflect.TypeFor[task.Task]() }
	fields := walkFields(reflect.TypeFor[CampaignSpec](), "", nil, isTask)
	checkRows(t, "Campaign spec", rows, fields)

	// Two campaigns that differ in everything the defaults may depend on:
	// a default both get alike is a constant.
	specOf := func(id, name string, budget int) *CampaignSpec {
		c := &CampaignSpec{ID: id, Budget: budget, Task: task.Task{Name: name, Constraints: []task.Constraint{task.AtLeast("band_gap", 1)}}}
		c.ApplyDefaults()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := specOf("c1", "Alpha", 10), specOf("c2", "Beta Gamma", 1000)
	for _, f := range fields {
		r, ok := rows[f.path]
		if !ok || len(r.cells) != 3 || f.typ == "object" || f.typ == "time" {
			continue
		}
		va, vb := fieldOf(reflect.ValueOf(a), f), fieldOf(reflect.ValueOf(b), f)
		if va.Kind() == reflect.Pointer && !va.IsNil() && vb.Kind() == reflect.Pointer && !vb.IsNil() {
			va, vb = va.Elem(), vb.Elem() // an optional number: its value
		}
		constant := va.IsValid() && !va.IsZero() && reflect.DeepEqual(va.Interface(), vb.Interface())
		lit := literal.FindStringSubmatch(r.cells[1])
		switch {
		case constant && lit == nil:
			t.Errorf("%s: %s defaults to %v, documented as %q", specDoc, f.path, va, r.cells[1])
		case lit != nil && !constant:
			t.Errorf("%s: %s is documented to default to %s, but ApplyDefaults gives %v and %v", specDoc, f.path, lit[1], va, vb)
		case lit != nil && fmt.Sprint(va) != lit[1]:
			t.Errorf("%s: %s is documented to default to %s, ApplyDefaults gives %v", specDoc, f.path, lit[1], va)
		}
		if r.cells[1] == "*required*" {
			c := *a
			fieldOf(reflect.ValueOf(&c), f).SetZero()
			if c.Validate() == nil {
				t.Errorf("%s: %s is documented as required, but a campaign without it is valid", specDoc, f.path)
			}
		}
	}
	if r := rows["task"]; len(r.cells) == 3 && r.cells[1] == "*required*" {
		c := *a
		c.Task = task.Task{}
		if c.Validate() == nil {
			t.Errorf("%s: task is documented as required, but a campaign without it is valid", specDoc)
		}
	}
}

// TestTaskDocumented: docs/campaign-spec.md documents every field of a
// task with its type; its constant defaults are those the code assumes,
// and a field it says is required fails validation when left out.
func TestTaskDocumented(t *testing.T) {
	rows := docTable(t, "Task")
	fields := walkFields(reflect.TypeFor[task.Task](), "", nil, func(reflect.Type) bool { return false })
	checkRows(t, "Task", rows, fields)

	valid := func() *task.Task {
		return &task.Task{Name: "x", Constraints: []task.Constraint{task.AtLeast("band_gap", 1)}}
	}
	for _, f := range fields {
		r, ok := rows[f.path]
		if !ok || len(r.cells) != 3 {
			continue
		}
		if lit := literal.FindStringSubmatch(r.cells[1]); lit != nil {
			var want string
			switch f.path {
			case "constraints[].weight":
				want = fmt.Sprint(task.Constraint{}.EffectiveWeight())
			default:
				want = fmt.Sprint(reflect.Zero(fieldOf(reflect.ValueOf(valid()), f).Type()))
			}
			if lit[1] != want {
				t.Errorf("%s: task field %s is documented to default to %s, the code's default is %s", specDoc, f.path, lit[1], want)
			}
		}
		if r.cells[1] == "*required*" {
			tk := valid()
			fieldOf(reflect.ValueOf(tk), f).SetZero()
			if tk.Validate() == nil {
				t.Errorf("%s: task field %s is documented as required, but a task without it is valid", specDoc, f.path)
			}
		}
	}
}

// TestPropertiesDocumented: the Properties table lists every property a
// constraint may name, with its unit and support.
func TestPropertiesDocumented(t *testing.T) {
	rows := docTable(t, "Properties")
	for _, p := range task.Properties() {
		r, ok := rows[p.Name]
		switch {
		case !ok:
			t.Errorf("%s: property %s is not listed", specDoc, p.Name)
		case len(r.cells) != 2 || r.cells[0] != p.Unit || r.cells[1] != string(p.Support):
			t.Errorf("%s: property %s listed as %q, want unit %q, support %q", specDoc, p.Name, r.cells, p.Unit, p.Support)
		}
		delete(rows, p.Name)
	}
	for name := range rows {
		t.Errorf("%s: %s is listed but is no property", specDoc, name)
	}
}
