package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

func init() { register(newValidateCmd) }

func newValidateCmd() *cobra.Command {
	var (
		asJSON       bool
		states       string
		mixedValence bool
		minDistance  float64
		maxAtoms     int
		formulaMode  bool
		formulasFile string
		sym          spacegroup.Options
	)
	cmd := &cobra.Command{
		Use:   "validate [--json] FILE... | --formula F... | --formulas FILE",
		Short: "Check crystal structures or formulas: interatomic distances, cell size, chemistry by bonding class",
		Long: `Read each FILE (CIF, pymatgen Structure JSON or a candidate answer
{formula, lattice, species, coords}; the format is recognised from the
content) and report its formula, reduced formula, number of atoms, density
(g/cm³), volume (Å³), minimum interatomic distance (Å, periodic images
included), chemical system, the bonding class of its composition, whether
some assignment of oxidation states is charge neutral (and the states
found), its space group (number and international symbol, found in pure Go
as spglib does, within --symprec Å and --angle-tolerance degrees), whether
it is valid, and every reason it is not.

A structure is valid when no two atoms are closer than --min-distance, it has
at most --max-atoms atoms, its volume per atom is within 5–150 Å³/atom, and
its composition is valid for its bonding class:

  element        one element
  intermetallic  metals only; at most 5 metals, none more than 30 times
                 as abundant as another
  ionic          charge balanced over the oxidation states observed in the
                 ICSD (pymatgen's table; fixed valence for the alkali and
                 alkaline-earth metals, Zn, Cd, Al, Sc, Y, La, Lu), every
                 cation less electronegative than every anion, mixed valence
                 allowed (Fe3O4); ranked by how often each ion occurs
  polyanionic    anions bonded to each other: peroxides, superoxides,
                 ozonides, polyhalides, Zintl polyanions (KO2, CsI3, LaB6)
  metal_rich     metal–metal bonding: borides, carbides, nitrides,
                 silicides, pnictides, chalcogenides of metals judged by
                 electron count (FeSi, Ca2N), suboxides and reduced halides
                 of the metals that form them (Ti3O, Sc7Cl10)
  covalent       non-metals only (SiC, B4C, XeF2)

Every class also bounds the element counts. Fluorides of the fixed-valence
metals, for instance, balance only in ionic ratios: NaF2 and Na2F are
rejected. The package documentation of pkg/crystal gives every rule and its
source. Each reason starts with a stable code: overlap, too_many_atoms,
volume_per_atom, formula_mismatch, charge_neutrality, electronegativity,
electron_count, implausible_composition, bad_cell, unreadable.

--states or --mixed-valence replace the bonding classes by charge neutrality
alone, one oxidation state per element from the chosen set (SMACT's test)
or several with --mixed-valence, for every composition.

With --json, one object per line with the keys file, formula,
reduced_formula, natoms, density, volume, min_distance, chemsys, class,
charge_neutral (an assignment sums to zero), oxidation_states,
space_group ({number, symbol}, null when none is found), valid and
reasons. An unreadable file still gets a line (valid false, the reason, the
other values null) and the other files are processed. The exit status is 1
when any file is unreadable or invalid.

With --formula the arguments are formulas ("NaCl", "Fe3O4", "Ca(OH)2")
and only the chemistry is judged; --formulas FILE reads one formula per line
(blank lines and lines starting with # are skipped). Output is one line per
formula: validity, class, and the oxidation states or the reason; with
--json one object per formula with the keys formula, valid, class,
oxidation_states (when an assignment was found), reasons ([{code, detail}])
and detail (how the verdict was reached). The exit status is 1 when any
formula is invalid or unparsable.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ionicOnly := cmd.Flags().Changed("states") || cmd.Flags().Changed("mixed-valence")
			if formulaMode || formulasFile != "" {
				if ionicOnly {
					return errors.New("--states and --mixed-valence apply to structure files, not to --formula or --formulas")
				}
				if !formulaMode && len(args) > 0 {
					return fmt.Errorf("%d arguments beside --formulas: give formulas with --formula", len(args))
				}
				formulas, err := crystal.FormulaInputs(args, formulasFile)
				if err != nil {
					return err
				}
				return runValidateFormulas(cmd.OutOrStdout(), formulas, asJSON)
			}
			if len(args) == 0 {
				return errors.New("no files to validate (give structure files, or formulas with --formula or --formulas)")
			}
			if sym.SymPrec <= 0 {
				return fmt.Errorf("--symprec %g: the position tolerance must be above 0 Å", sym.SymPrec)
			}
			if err := sym.Check(); err != nil {
				return fmt.Errorf("--symprec, --angle-tolerance: %w", err)
			}
			opt := crystal.ValidityOptions{MinDistance: minDistance, MaxAtoms: maxAtoms, IonicOnly: ionicOnly}
			var err error
			if opt.Oxidation.States, err = crystal.ParseOxidationStateSet(states); err != nil {
				return fmt.Errorf("--states %w", err)
			}
			opt.Oxidation.MixedValence = mixedValence
			results, bad := crystal.ValidateFiles(args, opt, sym)
			return someInvalid(crystal.WriteFileValidations(cmd.OutOrStdout(), results, asJSON), bad, len(args), "structures invalid or unreadable")
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().StringVar(&states, "states", "common", "judge by charge neutrality alone, over these oxidation states: common, icsd or all")
	cmd.Flags().BoolVar(&mixedValence, "mixed-valence", false, "judge by charge neutrality alone, letting one element take several oxidation states (Fe3O4)")
	cmd.Flags().Float64Var(&minDistance, "min-distance", crystal.DefaultMinDistance, "smallest allowed interatomic distance, Å (negative: no limit)")
	cmd.Flags().IntVar(&maxAtoms, "max-atoms", crystal.DefaultMaxAtoms, "largest allowed number of atoms in the cell (negative: no limit)")
	cmd.Flags().Float64Var(&sym.SymPrec, "symprec", spacegroup.DefaultSymPrec, "position tolerance of the space-group search, Å")
	cmd.Flags().Float64Var(&sym.AngleTolerance, "angle-tolerance", spacegroup.DefaultAngleTolerance, "angle tolerance of the space-group search, degrees (negative: --symprec's)")
	cmd.Flags().BoolVar(&formulaMode, "formula", false, "the arguments are formulas: judge their chemistry")
	cmd.Flags().StringVar(&formulasFile, "formulas", "", "judge the chemistry of the formulas in this file, one per line")
	return cmd
}

// runValidateFormulas judges every formula and writes one line each.
func runValidateFormulas(w io.Writer, formulas []string, asJSON bool) error {
	results, bad := crystal.JudgeFormulas(formulas)
	return someInvalid(crystal.WriteFormulaVerdicts(w, results, asJSON), bad, len(formulas), "formulas invalid or unparsable")
}

// someInvalid is err, or exit status 1 when bad of the n items judged
// are (what) invalid.
func someInvalid(err error, bad, n int, what string) error {
	if err == nil && bad > 0 {
		err = &exitError{code: 1, err: fmt.Errorf("%d of %d %s", bad, n, what)}
	}
	return err
}
