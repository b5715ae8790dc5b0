package task

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/crucible-sci/crucible/pkg/strictjson"
)

// ErrBadFile is returned for a task file that cannot be read as a whole
// (bad CSV, unknown columns, bad YAML or JSON, no tasks).
var ErrBadFile = errors.New("bad task file")

// looseHullBound is the energy above hull (eV/atom) beyond which a hull
// constraint excludes almost nothing: LLEMA's task file uses 5 eV/atom,
// fifty times its own stability criterion (0.1 eV/atom, §3.2).
const looseHullBound = 1.0

// Issue is a warning about a task read from a file: a clause kept as a note
// because it was not understood, a property name not recognised, a bound
// too loose to mean anything. The task is still usable.
type Issue struct {
	// Line is the CSV line of the task, 0 for YAML and JSON files.
	Line int `json:"line,omitempty"`
	// Task is the task's name.
	Task    string `json:"task,omitempty"`
	Message string `json:"message"`
}

func (i Issue) String() string {
	var b strings.Builder
	if i.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", i.Line)
	}
	if i.Task != "" {
		fmt.Fprintf(&b, "%s: ", i.Task)
	}
	b.WriteString(i.Message)
	return b.String()
}

// LoadFile reads a task file; see ParseFile.
func LoadFile(path string) ([]Task, []Issue, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read tasks: %w", err)
	}
	tasks, issues, err := ParseFile(path, data)
	if err != nil {
		return tasks, issues, prefixEach(path, err)
	}
	return tasks, issues, nil
}

// ParseFile reads tasks from the contents of a file named name: LLEMA's CSV
// format for .csv (ReadCSV), typed tasks for .yaml, .yml and .json
// (DecodeTasks). It returns the tasks it could read, warnings, and an error
// joining every problem (nil when all tasks are valid).
func ParseFile(name string, data []byte) ([]Task, []Issue, error) {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".csv":
		return ReadCSV(bytes.NewReader(data))
	case ".yaml", ".yml", ".json":
		return DecodeTasks(data)
	default:
		return nil, nil, fmt.Errorf("%w: unknown file type %q (want .csv, .yaml, .yml or .json)", ErrBadFile, ext)
	}
}

// ReadCSV reads tasks in LLEMA's CSV format (LLEMA §2.5; the authors'
// all_tasks.csv): a header with the columns Task and Goal and optionally
// Properties (any order, any case), then one task per row. The goal is
// parsed with ParseGoal; the Properties column, a comma-separated list of
// property names, each optionally followed by its canonical name in
// parentheses ("Optical band gap (band_gap)"), adds the properties the
// goal does not constrain to Task.Properties.
//
// It returns the valid tasks, warnings, and an error joining one error per
// bad row, each naming its line and task; a row whose goal yields no
// constraint is an error (ErrNoConstraint).
func ReadCSV(r io.Reader) ([]Task, []Issue, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil, fmt.Errorf("%w: empty CSV", ErrBadFile)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadFile, err)
	}
	nameCol, goalCol, propsCol := -1, -1, -1
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		col := map[string]*int{"task": &nameCol, "name": &nameCol, "goal": &goalCol, "properties": &propsCol}[h]
		switch {
		case col == nil:
			return nil, nil, fmt.Errorf("%w: unknown column %q (want Task, Goal, Properties)", ErrBadFile, header[i])
		case *col >= 0:
			return nil, nil, fmt.Errorf("%w: column %q given twice", ErrBadFile, header[i])
		}
		*col = i
	}
	if nameCol < 0 || goalCol < 0 {
		return nil, nil, fmt.Errorf("%w: the header needs the columns Task and Goal, got %q", ErrBadFile, strings.Join(header, ","))
	}
	var (
		tasks  []Task
		issues []Issue
		errs   []error
		seen   = map[string]int{}
		rows   int
	)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if errors.Is(err, csv.ErrFieldCount) {
			rows++
			errs = append(errs, fmt.Errorf("%w: %w", ErrBadFile, err))
			continue
		}
		if err != nil {
			return tasks, issues, errors.Join(append(errs, fmt.Errorf("%w: %w", ErrBadFile, err))...)
		}
		rows++
		line, _ := cr.FieldPos(0)
		name := strings.TrimSpace(rec[nameCol])
		props := ""
		if propsCol >= 0 {
			props = rec[propsCol]
		}
		t, warnings, err := taskFromRow(name, rec[goalCol], props)
		for _, w := range warnings {
			issues = append(issues, Issue{Line: line, Task: name, Message: w})
		}
		if prev, dup := seen[taskKey(name)]; dup && name != "" {
			err = errors.Join(err, fmt.Errorf("%w: same name as the task on line %d", ErrBadTask, prev))
		}
		if err != nil {
			errs = append(errs, prefixEach(fmt.Sprintf("line %d (%q)", line, name), err))
			continue
		}
		seen[taskKey(name)] = line
		tasks = append(tasks, t)
	}
	if rows == 0 {
		errs = append(errs, fmt.Errorf("%w: no tasks after the header", ErrBadFile))
	}
	return tasks, issues, errors.Join(errs...)
}

// taskFromRow builds a task from a CSV row.
func taskFromRow(name, goal, props string) (Task, []string, error) {
	goal = strings.TrimSpace(goal)
	pg, err := ParseGoal(goal)
	t := Task{Name: name, Goal: goal, Constraints: pg.Constraints, Elements: pg.Elements, Notes: pg.Notes}
	warnings := pg.Issues
	for _, item := range splitList(props) {
		p, perr := PropertyByName(propertyColumnName(item))
		if perr != nil {
			warnings = append(warnings, fmt.Sprintf("properties: %q is not a property Crucible knows; not reported", item))
			continue
		}
		t.Properties = append(t.Properties, p.Name)
	}
	t.Properties = reportOnly(t)
	warnings = append(warnings, hullWarnings(t)...)
	if err != nil {
		return t, warnings, err
	}
	return t, warnings, t.Validate()
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// propertyColumnName takes the canonical name in parentheses when the item
// has one ("d proxy (piezo_max_dij)"), else the whole item.
func propertyColumnName(item string) string {
	open, close := strings.LastIndex(item, "("), strings.LastIndex(item, ")")
	if open >= 0 && close > open {
		if inner := strings.TrimSpace(item[open+1 : close]); inner != "" {
			return inner
		}
	}
	return item
}

// reportOnly returns t.Properties without the constrained properties, each
// once, or nil.
func reportOnly(t Task) []string {
	var out []string
	for _, p := range unique(t.Properties) {
		constrained := false
		for _, c := range t.Constraints {
			constrained = constrained || c.Property == p
		}
		if !constrained {
			out = append(out, p)
		}
	}
	return out
}

// hullWarnings flags energy-above-hull bounds too loose to mean anything.
func hullWarnings(t Task) []string {
	var out []string
	for _, c := range t.Constraints {
		if _, u := c.Bounds(); c.Property == "e_above_hull" && u > looseHullBound && c.Kind != Lower {
			out = append(out, fmt.Sprintf("%s excludes almost nothing (LLEMA calls ≤ 0.1 eV/atom stable, §3.2); the campaign's stability threshold applies separately", c.String()))
		}
	}
	return out
}

// DecodeTasks reads typed tasks from YAML or JSON (JSON is YAML): one task,
// a list of tasks, or an object whose only key is "tasks" holding the list.
// Fields are those of Task; an unknown field is an error. It completes what
// a person would leave out:
//
//   - a property alias ("Band gap") becomes the canonical name;
//   - a constraint without kind gets the kind its bounds imply;
//   - a task with a goal but no constraints takes its constraints, element
//     rules (added to those given; a "one of" or allowed set may come from
//     one place only) and notes (appended) from ParseGoal, whose warnings
//     are returned as issues. When constraints are given the goal is only
//     text.
//
// It returns the valid tasks, warnings, and an error joining each invalid
// task's errors, prefixed with its position ("tasks[1] (\"name\"): ...").
func DecodeTasks(data []byte) ([]Task, []Issue, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadFile, err)
	}
	js = bytes.TrimSpace(js)
	var raws []json.RawMessage
	listed := true
	switch {
	case len(js) == 0 || string(js) == "null":
		return nil, nil, fmt.Errorf("%w: no tasks", ErrBadFile)
	case js[0] == '[':
		if err := json.Unmarshal(js, &raws); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadFile, err)
		}
	case js[0] == '{':
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(js, &probe); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadFile, err)
		}
		if list, ok := probe["tasks"]; ok && len(probe) == 1 {
			if err := json.Unmarshal(list, &raws); err != nil {
				return nil, nil, fmt.Errorf("%w: tasks: %w", ErrBadFile, err)
			}
		} else {
			raws, listed = []json.RawMessage{js}, false
		}
	default:
		return nil, nil, fmt.Errorf("%w: want a task, a list of tasks or {tasks: [...]}", ErrBadFile)
	}
	if len(raws) == 0 {
		return nil, nil, fmt.Errorf("%w: no tasks", ErrBadFile)
	}
	var (
		tasks  []Task
		issues []Issue
		errs   []error
		seen   = map[string]string{}
	)
	for i, raw := range raws {
		where := ""
		if listed {
			where = fmt.Sprintf("tasks[%d]", i)
		}
		var t Task
		if err := strictjson.Decode(raw, &t); err != nil {
			errs = append(errs, prefixed(where, "", err))
			continue
		}
		warnings, err := complete(&t)
		for _, w := range warnings {
			issues = append(issues, Issue{Task: t.Name, Message: w})
		}
		if err == nil {
			err = t.Validate()
		}
		if prev, dup := seen[taskKey(t.Name)]; dup && t.Name != "" {
			err = errors.Join(err, fmt.Errorf("%w: same name as %s", ErrBadTask, prev))
		}
		if err != nil {
			errs = append(errs, prefixed(where, t.Name, err))
			continue
		}
		seen[taskKey(t.Name)] = where
		tasks = append(tasks, t)
	}
	return tasks, issues, errors.Join(errs...)
}

func prefixed(where, name string, err error) error {
	switch {
	case where != "" && name != "":
		return prefixEach(fmt.Sprintf("%s (%q)", where, name), err)
	case where != "":
		return prefixEach(where, err)
	case name != "":
		return prefixEach(fmt.Sprintf("%q", name), err)
	}
	return err
}

// prefixEach wraps every error joined in err (flattened) with the prefix,
// so that each line of the message says where it comes from.
func prefixEach(prefix string, err error) error {
	var errs []error
	for _, e := range Errors(err) {
		errs = append(errs, fmt.Errorf("%s: %w", prefix, e))
	}
	return errors.Join(errs...)
}

// Errors lists the errors joined in err (errors.Join, at any depth): the
// errors of a task file, one per problem.
func Errors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, Errors(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// complete fills in what DecodeTasks documents: canonical property names,
// constraint kinds, and constraints from the goal.
func complete(t *Task) ([]string, error) {
	for i := range t.Constraints {
		c := &t.Constraints[i]
		if p, err := PropertyByName(c.Property); err == nil {
			c.Property = p.Name
		}
		if c.Kind == "" {
			switch {
			case c.Lower != nil && c.Upper != nil:
				c.Kind = Interval
			case c.Lower != nil:
				c.Kind = Lower
			case c.Upper != nil:
				c.Kind = Upper
			}
		}
	}
	for i, name := range t.Properties {
		if p, err := PropertyByName(name); err == nil {
			t.Properties[i] = p.Name
		}
	}
	if len(t.Constraints) > 0 || strings.TrimSpace(t.Goal) == "" {
		return hullWarnings(*t), nil
	}
	pg, err := ParseGoal(t.Goal)
	if err != nil {
		return pg.Issues, fieldErr("goal", err)
	}
	t.Constraints = pg.Constraints
	t.Notes = append(t.Notes, pg.Notes...)
	t.Properties = reportOnly(*t)
	t.Elements, err = mergeRules(t.Elements, pg.Elements)
	return append(pg.Issues, hullWarnings(*t)...), err
}

// mergeRules adds the rules of b to a: exclusions and required elements
// are united; a "one of" set or an allowed set given in both is an error,
// as their union would weaken the rule.
func mergeRules(a, b ElementRules) (ElementRules, error) {
	union := func(x, y []string) []string {
		if x == nil && y == nil {
			return nil
		}
		return unique(append(append([]string{}, x...), y...))
	}
	either := func(field string, x, y []string) ([]string, error) {
		if x != nil && y != nil {
			return nil, fieldErr("elements."+field, fmt.Errorf("%w: given both in elements and in the goal", ErrBadElementRule))
		}
		if x != nil {
			return x, nil
		}
		return y, nil
	}
	oneOf, err1 := either("must_contain_one_of", a.MustContainOneOf, b.MustContainOneOf)
	allowed, err2 := either("allowed_only", a.AllowedOnly, b.AllowedOnly)
	return ElementRules{
		MustContainOneOf: oneOf,
		MustContainAll:   union(a.MustContainAll, b.MustContainAll),
		Exclude:          union(a.Exclude, b.Exclude),
		AllowedOnly:      allowed,
		EarthAbundant:    a.EarthAbundant || b.EarthAbundant,
		NonToxic:         a.NonToxic || b.NonToxic,
	}, errors.Join(err1, err2)
}

// EncodeYAML writes tasks as a YAML task file ({tasks: [...]}) that
// DecodeTasks reads back to the same tasks.
func EncodeYAML(tasks ...Task) ([]byte, error) {
	return yaml.Marshal(struct {
		Tasks []Task `json:"tasks"`
	}{tasks})
}
