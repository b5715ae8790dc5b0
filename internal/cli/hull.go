package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
			rows, err := hull.Table(entries, queries)
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

func writeHullJSON(w io.Writer, rows []hull.Row) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

func writeHullTable(w io.Writer, rows []hull.Row) error {
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
