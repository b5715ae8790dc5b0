package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/energy"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

func init() { register(newPredictCmd) }

func newPredictCmd() *cobra.Command {
	var (
		asJSON, withHull, relaxFirst bool
		dir                          string
		workers                      int
	)
	cmd := &cobra.Command{
		Use:   "predict [--json] [--hull] [--relax] FILE...",
		Short: "Properties of crystal structures from the oracle: reference lookup, CGCNN, exact hull",
		Long: `Evaluate each FILE (CIF, pymatgen Structure JSON or a candidate answer
{formula, lattice, species, coords}) with Crucible's oracle, as the evaluator
does: validity checks; CGCNN predictions of formation energy, band gap, bulk
and shear modulus, Poisson ratio, Fermi energy and metal probability, each
with its calibrated standard error as its uncertainty when a calibration is
found ("crucible calibrate --help"), else the model's published test MAE
(moduli: propagated from log10 GPa); Crucible's own surrogates
(docs/surrogates.md) for the static dielectric constant κ, the largest
dielectric tensor element, the piezoelectric stress coefficient e,
conductivity, and the strain coefficient d estimated from e and the moduli,
each with its cross-validated uncertainty (a missing model file is trained
once into the model cache, tens of seconds); the reference value instead
when the reduced formula is in the Materials Project tables or the
surrogates' data sets (the candidate is then "known", and the model value
is shown beside it); a CGCNN band gap carries
the metal classifier's probability (metal_probability) and is 0 for a
structure the classifier calls a metal (P(metal) ≥ 0.5; metallic: true, the
gap model's value as surrogate); the electronic dielectric constant ε∞ for
known compounds only; density and volume per atom exactly from the structure;
the space group (number and symbol; JSON space_group) detected at 0.01 Å. With --hull,
the energy above the convex hull of the reference phases (eV/atom, negative
below it) and the decomposition into stable phases.

Where neighbours of different elements tie at CGCNN's twelfth-neighbour
cut, a value also has its tie spread: how far the prediction moves with
the choice among them (added uncertainty; the value is the average over
the choices, the same however the structure is written down).

Novelty: the structure is compared with the known structures of its
formula (the Materials Project CIF sets of the data directory, the golden
CIFs, the prototype library's archetypes; pymatgen's StructureMatcher
defaults, volumes scaled): known_structure (with the match), new_polymorph
(known formula, no structure matches: its own CGCNN values instead of the
reference values, its energy placed against the known polymorph's),
known_formula (in the tables, no structure held), new, or with --hull
ordered_mixture (a new formula above the hull whose facet is its
isovalent end members, named).

Validity is a flag, not a gate: every structure that can be featurised is
predicted, and an invalid one gets its reasons beside its properties (a
composition no chemistry allows, a stated formula that disagrees). Only an
unreadable structure, a physically impossible one (overlapping atoms, a
cell too dense, exploded or too thin), one of more atoms than the validity
limit or one with an element the surrogates do not know gets nothing but its
structure properties. The bonding class of the composition (ionic,
polyanionic, metal_rich, intermetallic, covalent, element; see "crucible
validate --help") is reported with it.

One line per structure: file, reduced formula, novelty, class,
validity (with the reasons when invalid), then every property as
name=value±uncertainty unit (source; tie spread).

With --json, one object per line with the keys file (as given), formula,
class (null for an unreadable file), valid, predicted (false when only
structure properties were computed), known (the formula is in the
reference tables), novelty ({class[, match, rms, polymorphs, end_members]};
null when not predicted), oxidation_states (when an assignment was found),
reasons ([{code, detail}]), warnings, properties ({name: {value, unit,
source, uncertainty, tie_spread[, surrogate, metal_probability, metallic,
calibrated]}}), and with --hull
e_above_hull, hull_energy_per_atom and decomposition ({formula: fraction};
null when it cannot be computed, with a warning saying why).

With --relax, each structure is first relaxed on the M3GNet potential as
"crucible relax" does (fmax 0.05 eV/Å, at most 500 steps) and everything
above is predicted on the relaxed structure; the line also gives the
relaxation (with --json an object "relaxation" with converged, steps,
energy_per_atom, and M3GNet's formation_energy_per_atom and e_above_hull,
null when they cannot be computed). A structure that cannot be relaxed is
reported as an unreadable one is, with the code relaxation_failed; one of
more atoms than the validity limit is not relaxed (nor predicted).

Data comes from --data, else $CRUCIBLE_DATA, else a shared folder beside the repository, else ~/.cache/crucible ("crucible
data pull" fetches it). An unreadable file is reported (with --json as a line
with valid false and the reason) and the others are processed; the exit
status is then 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := dataDir(dir)
			if err != nil {
				return err
			}
			o, _, err := wire.Oracle(d, workers)
			if err != nil {
				return err
			}
			var calc *energy.Calculator
			if relaxFirst {
				if calc, err = energy.OpenWithReference(d, o.Reference()); err != nil {
					return err
				}
			}
			files, unreadable, err := o.PredictFiles(cmd.Context(), calc, args, withHull, workerCount(0))
			if err != nil {
				return err
			}
			if err := oracle.WritePredictions(cmd.OutOrStdout(), cmd.ErrOrStderr(), files, asJSON, withHull); err != nil {
				return err
			}
			if unreadable > 0 {
				return &exitError{code: 1, err: fmt.Errorf("predict: %d of %d files unreadable", unreadable, len(args))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().BoolVar(&withHull, "hull", false, "also the energy above the convex hull and the decomposition")
	cmd.Flags().BoolVar(&relaxFirst, "relax", false, "relax each structure on the M3GNet potential first and predict on the relaxed one")
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	cmd.Flags().IntVar(&workers, "workers", 0, "structures evaluated in parallel (default: one per CPU)")
	return cmd
}
