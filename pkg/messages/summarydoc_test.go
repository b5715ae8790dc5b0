package messages

import (
	"reflect"
	"slices"
	"testing"
)

// summaryDoc is the reference of a campaign's summary.
const summaryDoc = "../../docs/summary.md"

// TestSummaryDocumented: docs/summary.md documents every field of a
// campaign's summary (summary.json, `crucible status CAMPAIGN --json`)
// with its type and meaning, and nothing that is no field.
func TestSummaryDocumented(t *testing.T) {
	rows := docTableIn(t, summaryDoc, "Fields")
	fields := walkFields(reflect.TypeFor[Summary](), "", nil, func(reflect.Type) bool { return false })
	for _, f := range fields {
		r, ok := rows[f.path]
		switch {
		case !ok:
			t.Errorf("%s: summary field %s (%s) is not documented", summaryDoc, f.path, f.typ)
		case len(r.cells) != 2:
			t.Errorf("%s: row %s has %d cells, want type, meaning", summaryDoc, f.path, len(r.cells)+1)
		case r.cells[0] != f.typ:
			t.Errorf("%s: %s is documented as %q, its type is %q", summaryDoc, f.path, r.cells[0], f.typ)
		case r.cells[1] == "":
			t.Errorf("%s: %s has no meaning", summaryDoc, f.path)
		}
	}
	for name := range rows {
		if !slices.ContainsFunc(fields, func(f docField) bool { return f.path == name }) {
			t.Errorf("%s: %s is documented but is no summary field", summaryDoc, name)
		}
	}
}
