package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func init() { register(newValidateCmd) }

func newValidateCmd() *cobra.Command {
	var (
		asJSON       bool
		states       string
		mixedValence bool
		minDistance  float64
		maxAtoms     int
	)
	cmd := &cobra.Command{
		Use:   "validate [--json] FILE...",
		Short: "Check crystal structures: interatomic distances, cell size, charge neutrality",
		Long: `Read each FILE (CIF, pymatgen Structure JSON or a candidate answer
{formula, lattice, species, coords}; the format is recognised from the
content) and report its formula, reduced formula, number of atoms, density
(g/cm³), volume (Å³), minimum interatomic distance (Å, periodic images
included), chemical system, whether some assignment of oxidation states is
charge neutral (and the states found), whether it is valid, and every reason
it is not.

A structure is valid when no two atoms are closer than --min-distance, it has
at most --max-atoms atoms, its volume per atom is within 5–150 Å³/atom, and
(SMACT's test) one oxidation state per element from the chosen set sums to
zero with every cation less electronegative than every anion; compositions of
metals only count as neutral intermetallics. Each reason starts with a stable
code: overlap, too_many_atoms, volume_per_atom, formula_mismatch,
charge_neutrality, electronegativity, bad_cell, unreadable.

With --json, one object per line with the keys file, formula,
reduced_formula, natoms, density, volume, min_distance, chemsys,
charge_neutral, oxidation_states, valid and reasons. An unreadable file still
gets a line (valid false, the reason, the other values null) and the other
files are processed. The exit status is 1 when any file is unreadable or
invalid.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := crystal.ValidityOptions{MinDistance: minDistance, MaxAtoms: maxAtoms}
			switch states {
			case "common":
				opt.Oxidation.States = crystal.CommonStates
			case "icsd":
				opt.Oxidation.States = crystal.ICSDStates
			case "all":
				opt.Oxidation.States = crystal.AllStates
			default:
				return fmt.Errorf("--states %q: want common, icsd or all", states)
			}
			opt.Oxidation.MixedValence = mixedValence
			results := make([]validateResult, len(args))
			bad := 0
			for i, path := range args {
				results[i] = validateFile(path, opt)
				if !results[i].Valid {
					bad++
				}
			}
			var err error
			if asJSON {
				err = writeValidateJSON(cmd.OutOrStdout(), results)
			} else {
				err = writeValidateText(cmd.OutOrStdout(), results)
			}
			if err != nil {
				return err
			}
			if bad > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d of %d structures invalid or unreadable", bad, len(args))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().StringVar(&states, "states", "common", "oxidation states for the neutrality test: common, icsd or all")
	cmd.Flags().BoolVar(&mixedValence, "mixed-valence", false, "let one element take several oxidation states (Fe3O4)")
	cmd.Flags().Float64Var(&minDistance, "min-distance", crystal.DefaultMinDistance, "smallest allowed interatomic distance, Å (negative: no limit)")
	cmd.Flags().IntVar(&maxAtoms, "max-atoms", crystal.DefaultMaxAtoms, "largest allowed number of atoms in the cell (negative: no limit)")
	return cmd
}

// validateResult is one file's line of output. Pointers are null for an
// unreadable file (and min_distance when it cannot be measured).
type validateResult struct {
	File            string             `json:"file"`
	Formula         *string            `json:"formula"`
	ReducedFormula  *string            `json:"reduced_formula"`
	NumAtoms        *int               `json:"natoms"`
	Density         *float64           `json:"density"`
	Volume          *float64           `json:"volume"`
	MinDistance     *float64           `json:"min_distance"`
	ChemicalSystem  *string            `json:"chemsys"`
	ChargeNeutral   *bool              `json:"charge_neutral"`
	OxidationStates map[string]float64 `json:"oxidation_states"`
	Valid           bool               `json:"valid"`
	Reasons         []string           `json:"reasons"`

	report *crystal.ValidityReport
}

// validateFile reads and validates one file. A candidate whose formula
// disagrees with its species is reported as formula_mismatch, any other
// read error as unreadable.
func validateFile(path string, opt crystal.ValidityOptions) validateResult {
	res := validateResult{File: path, Reasons: []string{}}
	s, err := crystal.ReadFile(path)
	if err != nil {
		code := crystal.ReasonUnreadable
		if errors.Is(err, crystal.ErrFormulaMismatch) {
			code = crystal.ReasonFormulaMismatch
		}
		res.Reasons = append(res.Reasons, string(code)+": "+err.Error())
		return res
	}
	r, err := crystal.Validate(s, opt)
	if err != nil {
		res.Reasons = append(res.Reasons, string(crystal.ReasonUnreadable)+": "+err.Error())
		return res
	}
	res.report = r
	res.Formula, res.ReducedFormula, res.ChemicalSystem = &r.Formula, &r.ReducedFormula, &r.ChemicalSystem
	res.NumAtoms, res.Density, res.Volume = &r.NumAtoms, &r.Density, &r.Volume
	if !math.IsNaN(r.MinDistance) {
		res.MinDistance = &r.MinDistance
	}
	if r.Oxidation != nil {
		res.ChargeNeutral = &r.Oxidation.Neutral
		res.OxidationStates = r.OxidationStates()
	}
	res.Valid = r.Valid()
	res.Reasons = append(res.Reasons, r.Reasons()...)
	return res
}

func writeValidateJSON(w io.Writer, results []validateResult) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write %s: %w", r.File, err)
		}
	}
	return nil
}

func writeValidateText(w io.Writer, results []validateResult) error {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, r.File)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		if rep := r.report; rep != nil {
			fmt.Fprintf(tw, "  formula\t%s\n", rep.Formula)
			fmt.Fprintf(tw, "  reduced formula\t%s\n", rep.ReducedFormula)
			fmt.Fprintf(tw, "  atoms\t%d\n", rep.NumAtoms)
			fmt.Fprintf(tw, "  density\t%.4f g/cm³\n", rep.Density)
			fmt.Fprintf(tw, "  volume\t%.4f Å³ (%.3f Å³/atom)\n", rep.Volume, rep.VolumePerAtom)
			if math.IsNaN(rep.MinDistance) {
				fmt.Fprintf(tw, "  min distance\tunknown\n")
			} else {
				p, e := rep.MinDistancePair, rep.MinDistanceElements
				fmt.Fprintf(tw, "  min distance\t%.4f Å (%s, site %d – %s, site %d)\n", rep.MinDistance, e[0], p[0], e[1], p[1])
			}
			fmt.Fprintf(tw, "  chemical system\t%s\n", rep.ChemicalSystem)
			fmt.Fprintf(tw, "  charge neutral\t%s\n", chargeNeutralText(rep.Oxidation))
		}
		fmt.Fprintf(tw, "  valid\t%s\n", yesNo(r.Valid))
		for _, reason := range r.Reasons {
			fmt.Fprintf(tw, "  reason\t%s\n", reason)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func chargeNeutralText(ox *crystal.OxidationAnalysis) string {
	switch {
	case ox == nil:
		return "not checked"
	case ox.Alloy:
		return "yes (only metals: an intermetallic, all oxidation states 0)"
	case ox.Elemental:
		return "yes (one element, oxidation state 0)"
	case ox.Neutral:
		best, _ := ox.Best()
		more := ""
		if n := len(ox.Assignments); n > 1 {
			more = fmt.Sprintf("; %d assignments found", n)
		}
		return "yes (" + best.String() + more + ")"
	}
	return "no (" + strings.TrimSpace(string(ox.Reason)) + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
