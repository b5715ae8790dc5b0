package cli

import (
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
			return hull.WriteRows(cmd.OutOrStdout(), rows, asJSON)
		},
	}
	cmd.Flags().StringVar(&entriesPath, "entries", "", "CSV of id,formula,e_form_per_atom (required)")
	cmd.Flags().StringVar(&queryPath, "query", "", "CSV of formula,e_form_per_atom: candidates to place relative to the hull")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	_ = cmd.MarkFlagRequired("entries")
	return cmd
}
