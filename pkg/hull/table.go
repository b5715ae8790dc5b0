package hull

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Row is one line of a phase-diagram table: an entry of the diagram, or a
// query placed against it.
type Row struct {
	ID            string  `json:"id"`
	Formula       string  `json:"formula"`
	EAboveHull    float64 `json:"e_above_hull"`
	HullEnergy    float64 `json:"hull_energy_per_atom"`
	Stable        *bool   `json:"stable,omitempty"` // entries only
	Decomposition Phases  `json:"decomposition"`
}

// Phases is a decomposition. Its JSON form is an object from reduced
// formula to fraction, in decreasing fraction.
type Phases []Phase

// MarshalJSON writes {"<reduced formula>": fraction, …} in order.
func (d Phases) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Composition.ReducedFormula())
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.FormatFloat(p.Fraction, 'g', -1, 64))
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// String writes the decomposition for a table, fractions to 6 decimals.
func (d Phases) String() string {
	parts := make([]string, len(d))
	for i, p := range d {
		parts[i] = fmt.Sprintf("%q: %s", p.Composition.ReducedFormula(),
			strconv.FormatFloat(math.Round(p.Fraction*1e6)/1e6, 'f', -1, 64))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Table builds the diagram of the entries and returns a row for every
// entry, then for every query (named query-1, query-2, … in order). Every
// element of the entries and queries is in the diagram; one without an
// elemental entry at or below zero gets a reference at 0.
func Table(entries []CSVEntry, queries []Query) ([]Row, error) {
	var elements []crystal.Element
	seen := map[crystal.Element]bool{}
	addElements := func(c crystal.Composition) {
		for _, el := range c.Elements() {
			if !seen[el] {
				seen[el] = true
				elements = append(elements, el)
			}
		}
	}
	list := make([]Entry, len(entries))
	for i, e := range entries {
		list[i] = e.Entry
		addElements(e.Composition)
	}
	for _, q := range queries {
		addElements(q.Composition)
	}
	d, err := New(list, WithElements(elements...))
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(entries)+len(queries))
	for _, e := range entries {
		r, err := d.Result(e.ID)
		if err != nil {
			return nil, err
		}
		stable := r.Stable
		rows = append(rows, Row{
			ID: e.ID, Formula: e.Formula, EAboveHull: r.EAboveHull, HullEnergy: r.HullEnergy,
			Stable: &stable, Decomposition: r.Decomposition,
		})
	}
	for i, q := range queries {
		r, err := d.Query(q.Composition, q.EnergyPerAtom)
		if err != nil {
			return nil, fmt.Errorf("query-%d (%s): %w", i+1, q.Formula, err)
		}
		rows = append(rows, Row{
			ID: fmt.Sprintf("query-%d", i+1), Formula: q.Formula, EAboveHull: r.EAboveHull,
			HullEnergy: r.HullEnergy, Decomposition: r.Decomposition,
		})
	}
	return rows, nil
}

// WriteRows writes rows as "crucible hull" does: one JSON object per
// line, or an aligned table.
func WriteRows(w io.Writer, rows []Row, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tformula\te_above_hull\thull_energy_per_atom\tstable\tdecomposition")
	for _, r := range rows {
		stable := "-"
		if r.Stable != nil {
			stable = strconv.FormatBool(*r.Stable)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t%.6f\t%s\t%s\n", r.ID, r.Formula, r.EAboveHull, r.HullEnergy, stable, r.Decomposition)
	}
	return tw.Flush()
}
