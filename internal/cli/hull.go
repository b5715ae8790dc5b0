package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
)

func init() { register(newHullCmd) }

func newHullCmd() *cobra.Command {
	var entriesPath, queryPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hull --entries ENTRIES.csv [--query QUERIES.csv] [--json]",
		Short: "Energy above the convex hull, decomposition and stable phases of a phase diagram",
		Long: `Build the phase diagram of the entries and report, for every entry and then
for every query, the energy above the hull (eV/atom), the hull energy at its
composition, whether the entry is stable (a vertex of the hull) and its
decomposition into stable phases by fraction of atoms.

ENTRIES.csv has the header id,formula,e_form_per_atom (formation energy per
atom, eV). QUERIES.csv has formula,e_form_per_atom: hypothetical candidates,
placed relative to the hull without being added to it; their energy above the
hull is negative below the hull. Elements without an elemental entry at or
below zero (in the entries or the queries) get a reference at 0.

Output: an aligned table, or with --json one object per line with the keys
id, formula, e_above_hull, hull_energy_per_atom, stable (entries only) and
decomposition ({"<reduced formula>": fraction}). Queries are named query-1,
query-2, … in file order.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			entries, err := hull.ReadEntriesCSV(entriesPath)
			if err != nil {
				return err
			}
			var queries []hull.Query
			if queryPath != "" {
				if queries, err = hull.ReadQueriesCSV(queryPath); err != nil {
					return err
				}
			}
			rows, err := hullRows(entries, queries)
			if err != nil {
				return err
			}
			if asJSON {
				return writeHullJSON(cmd.OutOrStdout(), rows)
			}
			return writeHullTable(cmd.OutOrStdout(), rows)
		},
	}
	cmd.Flags().StringVar(&entriesPath, "entries", "", "CSV of id,formula,e_form_per_atom (required)")
	cmd.Flags().StringVar(&queryPath, "query", "", "CSV of formula,e_form_per_atom: candidates to place relative to the hull")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	_ = cmd.MarkFlagRequired("entries")
	return cmd
}

// hullRow is one line of output.
type hullRow struct {
	ID            string            `json:"id"`
	Formula       string            `json:"formula"`
	EAboveHull    float64           `json:"e_above_hull"`
	HullEnergy    float64           `json:"hull_energy_per_atom"`
	Stable        *bool             `json:"stable,omitempty"`
	Decomposition hullDecomposition `json:"decomposition"`
}

// hullDecomposition writes a decomposition as a JSON object from reduced
// formula to fraction, by decreasing fraction.
type hullDecomposition []hull.Phase

func (d hullDecomposition) MarshalJSON() ([]byte, error) {
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

// text writes the decomposition for the table, fractions to 6 decimals.
func (d hullDecomposition) text() string {
	parts := make([]string, len(d))
	for i, p := range d {
		parts[i] = fmt.Sprintf("%q: %s", p.Composition.ReducedFormula(),
			strconv.FormatFloat(math.Round(p.Fraction*1e6)/1e6, 'f', -1, 64))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func hullRows(entries []hull.CSVEntry, queries []hull.Query) ([]hullRow, error) {
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
	list := make([]hull.Entry, len(entries))
	for i, e := range entries {
		list[i] = e.Entry
		addElements(e.Composition)
	}
	for _, q := range queries {
		addElements(q.Composition)
	}
	d, err := hull.New(list, hull.WithElements(elements...))
	if err != nil {
		return nil, err
	}
	rows := make([]hullRow, 0, len(entries)+len(queries))
	for _, e := range entries {
		r, err := d.Result(e.ID)
		if err != nil {
			return nil, err
		}
		stable := r.Stable
		rows = append(rows, hullRow{
			ID: e.ID, Formula: e.Formula, EAboveHull: r.EAboveHull, HullEnergy: r.HullEnergy,
			Stable: &stable, Decomposition: r.Decomposition,
		})
	}
	for i, q := range queries {
		r, err := d.Query(q.Composition, q.EnergyPerAtom)
		if err != nil {
			return nil, fmt.Errorf("query-%d (%s): %w", i+1, q.Formula, err)
		}
		rows = append(rows, hullRow{
			ID: fmt.Sprintf("query-%d", i+1), Formula: q.Formula, EAboveHull: r.EAboveHull,
			HullEnergy: r.HullEnergy, Decomposition: r.Decomposition,
		})
	}
	return rows, nil
}

func writeHullJSON(w io.Writer, rows []hullRow) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func writeHullTable(w io.Writer, rows []hullRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tformula\te_above_hull\thull_energy_per_atom\tstable\tdecomposition")
	for _, r := range rows {
		stable := "-"
		if r.Stable != nil {
			stable = strconv.FormatBool(*r.Stable)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t%.6f\t%s\t%s\n", r.ID, r.Formula, r.EAboveHull, r.HullEnergy, stable, r.Decomposition.text())
	}
	return tw.Flush()
}
