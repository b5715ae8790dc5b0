package task

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Listing is a task with its support, as "crucible tasks --json" writes
// it: one line per task.
type Listing struct {
	Task
	Support       Support  `json:"support"`
	Unsupported   []string `json:"unsupported,omitempty"`
	ReferenceOnly []string `json:"reference_only,omitempty"`
	Issues        []string `json:"issues,omitempty"`
}

// Listing is the task with its support and the given issues.
func (t Task) Listing(issues []string) Listing {
	return Listing{Task: t, Support: t.Support(), Unsupported: t.Unsupported(), ReferenceOnly: t.ReferenceOnly(), Issues: issues}
}

// WriteText describes the task in words: name and domain, with detailed
// the description and goal, then one line per constraint (its property
// and how Crucible supports it), the element rules, the reported
// properties, the notes, the support (SupportText) and the issues.
func (t Task) WriteText(w io.Writer, issues []string, detailed bool) error {
	title := t.Name
	if t.Domain != "" {
		title += " (" + t.Domain + ")"
	}
	fmt.Fprintln(w, title)
	if detailed && t.Description != "" {
		fmt.Fprintln(w, "  "+t.Description)
	}
	if detailed && t.Goal != "" {
		fmt.Fprintln(w, "  goal: "+t.Goal)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range t.Constraints {
		support := "unknown property"
		if p, err := PropertyByName(c.Property); err == nil {
			support = string(p.Support)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Describe(), c.Property, support)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range t.Elements.Describe() {
		fmt.Fprintln(w, "  elements: "+r)
	}
	for _, r := range t.DescribeStructure() {
		fmt.Fprintln(w, "  requires: "+r)
	}
	if len(t.Properties) > 0 {
		fmt.Fprintln(w, "  also reports: "+strings.Join(t.Properties, ", "))
	}
	for _, n := range t.Notes {
		fmt.Fprintln(w, "  note: "+n)
	}
	fmt.Fprintln(w, "  "+t.SupportText())
	for _, is := range issues {
		fmt.Fprintln(w, "  warning: "+is)
	}
	return nil
}

// SupportText says in words whether Crucible can evaluate the task: which
// constrained properties nothing provides, and which only the reference
// tables do.
func (t Task) SupportText() string {
	var parts []string
	if u := t.Unsupported(); len(u) > 0 {
		parts = append(parts, fmt.Sprintf("unsupported: %s (no oracle in Crucible: declare a plug-in model server for it, docs/plugins.md; until then no candidate can be feasible)", strings.Join(u, ", ")))
	}
	if r := t.ReferenceOnly(); len(r) > 0 {
		parts = append(parts, fmt.Sprintf("reference only: %s (known for compounds in the reference table, none for novel ones)", strings.Join(r, ", ")))
	}
	if len(parts) == 0 {
		return "support: every property from surrogates, the structure or the hull"
	}
	return "support: " + strings.Join(parts, "; ")
}

// WriteListing writes tasks as "crucible tasks" lists them, each with the
// issues that name it (a JSON Listing per line, or WriteText's blocks with
// a blank line between two), then the issues of rows that did not become
// tasks as warnings.
func WriteListing(w io.Writer, tasks []Task, issues []Issue, asJSON, detailed bool) error {
	enc := json.NewEncoder(w)
	for i, t := range tasks {
		var mine []string
		for _, is := range issues {
			if is.Task == t.Name {
				mine = append(mine, is.String())
			}
		}
		var err error
		if asJSON {
			err = enc.Encode(t.Listing(mine))
		} else {
			if i > 0 {
				fmt.Fprintln(w)
			}
			err = t.WriteText(w, mine, detailed)
		}
		if err != nil {
			return err
		}
	}
	for _, is := range issues {
		if slices.ContainsFunc(tasks, func(t Task) bool { return t.Name == is.Task }) {
			continue
		}
		var err error
		if asJSON {
			err = enc.Encode(map[string]string{"warning": is.String()})
		} else {
			_, err = fmt.Fprintln(w, "warning:", is)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// WriteErrors writes each error of a task file after its listing: an
// {"error": ...} object per line to w with asJSON, else "error: ..." to ew.
func WriteErrors(w, ew io.Writer, errs []error, asJSON bool) error {
	for _, e := range errs {
		var err error
		if asJSON {
			err = json.NewEncoder(w).Encode(map[string]string{"error": e.Error()})
		} else {
			_, err = fmt.Fprintln(ew, "error:", e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
