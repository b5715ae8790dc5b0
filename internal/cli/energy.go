package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/energy"
	"github.com/crucible-sci/crucible/pkg/relax"
)

func init() {
	register(newEnergyCmd)
	register(newRelaxCmd)
}

const energyDataHelp = `Data comes from --data, else $CRUCIBLE_DATA, else ~/.cache/crucible ("crucible
data pull" fetches it): the M3GNet-MP-2021.2.8-PES potential in
models/m3gnet/, read as matgl publishes it.`

const energyFilesHelp = `Each FILE is any structure format Crucible reads (CIF, POSCAR/CONTCAR,
pymatgen JSON, extended XYZ; see "crucible convert --help"). A file that
cannot be read or evaluated gets its error (on standard error, or with
--json a line with "error") and the others are processed; the exit status
is then 1.`

func newEnergyCmd() *cobra.Command {
	var (
		asJSON  bool
		dir     string
		workers int
	)
	cmd := &cobra.Command{
		Use:   "energy [--json] FILE...",
		Short: "Single-point energy, forces and stress of structures on the M3GNet universal potential",
		Long: `energy evaluates each FILE as it is (no relaxation) on the M3GNet universal
interatomic potential: the total energy (eV, on the Materials Project's
uncorrected GGA/GGA+U scale), the energy per atom, the forces (eV/Å, the
exact negative gradient) and the stress (GPa, ASE's sign convention:
positive is tensile).

One line per structure: file, reduced formula, energy, energy per atom,
the largest force and the stress in Voigt order (xx yy zz yz xz xy). With
--json, one object per line with the keys file, formula, energy,
energy_per_atom, forces ([[fx, fy, fz]] in the file's site order) and
stress (3×3).

` + energyFilesHelp + `

` + energyDataHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := openEnergy(dir, false)
			if err != nil {
				return err
			}
			sts, readErrs := readStructures(args)
			points, errs := c.PointAll(sts, workerCount(workers))
			failed := 0
			for i, file := range args {
				if err := firstErr(readErrs[i], errs[i]); err != nil {
					failed++
					if err := writeFileError(cmd, asJSON, file, err); err != nil {
						return err
					}
					continue
				}
				if err := writeEnergy(cmd.OutOrStdout(), asJSON, file, sts[i], points[i]); err != nil {
					return err
				}
			}
			return failedError("energy", failed, len(args))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default $CRUCIBLE_DATA, else ~/.cache/crucible)")
	cmd.Flags().IntVar(&workers, "workers", 0, "structures evaluated in parallel (default: one per CPU)")
	return cmd
}

func newRelaxCmd() *cobra.Command {
	var (
		asJSON, fixedCell bool
		dir, out          string
		workers           int
		opt               relax.Options
	)
	cmd := &cobra.Command{
		Use:   "relax [--json] [--fmax F] [--steps N] [--out DIR] FILE...",
		Short: "Relax structures on the M3GNet potential: relaxed cell, energy, formation energy, energy above the hull",
		Long: `relax relaxes each FILE's positions and cell together on the M3GNet universal
interatomic potential with FIRE and ASE's Fréchet cell filter, until the
largest force (atoms and cell) is below --fmax or --steps steps are taken
(Matbench Discovery's protocol: 0.05 eV/Å, 500 steps). Of the relaxed
structure it reports the total energy and energy per atom (eV, MP's
uncorrected scale), the formation energy per atom (MP's elemental
reference energies after MP's legacy correction scheme, the one that
agrees better with MP's formation energies: see pkg/mpcompat) and the
energy above the convex hull of the reference phases (eV/atom, negative
below it), as "crucible predict --hull" places a structure. A structure
that does not converge is reported with converged false, not as an error.

One line per structure: file, reduced formula, converged and steps, energy
per atom, formation energy, energy above the hull, the lattice parameters
and the volume. With --json, one object per line with the keys file,
formula, converged, steps, energy, energy_per_atom,
formation_energy_per_atom and e_above_hull (null when they cannot be
computed, with warnings saying why), lattice (3×3, Å), volume (Å³), and
the files written.

With --out DIR, each relaxed structure is written to DIR as NAME.cif (P1)
and NAME.json (pymatgen Structure JSON), NAME the input's file name
without its extension (followed by -N, its position among the arguments,
when two inputs share a name).

` + energyFilesHelp + `

` + energyDataHelp + ` The formation energies need data/MPCompatibility.yaml,
data/mp_elemental_reference_entries.json.gz and the reference tables.`,
		Example: `  crucible relax --json --out relaxed candidate.cif POSCAR
  crucible relax --fmax 0.01 --steps 1000 NaCl.cif`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.FMax <= 0 || opt.MaxSteps <= 0 {
				return &exitError{code: 2, err: fmt.Errorf("relax: --fmax and --steps must be positive")}
			}
			opt.FixedCell = fixedCell
			if out != "" {
				if err := os.MkdirAll(out, 0o755); err != nil {
					return err
				}
			}
			c, err := openEnergy(dir, true)
			if err != nil {
				return err
			}
			sts, readErrs := readStructures(args)
			res, errs := c.RelaxAll(cmd.Context(), sts, opt, workerCount(workers))
			names := outputNames(args)
			failed := 0
			for i, file := range args {
				var written []string
				err := firstErr(readErrs[i], errs[i])
				if err == nil && out != "" {
					written, err = writeRelaxed(out, names[i], file, res[i].Structure)
				}
				if err != nil {
					failed++
					if err := writeFileError(cmd, asJSON, file, err); err != nil {
						return err
					}
					continue
				}
				if err := writeRelaxedLine(cmd.OutOrStdout(), asJSON, file, res[i], written); err != nil {
					return err
				}
			}
			return failedError("relax", failed, len(args))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per line")
	cmd.Flags().Float64Var(&opt.FMax, "fmax", 0.05, "convergence threshold on the largest force, eV/Å")
	cmd.Flags().IntVar(&opt.MaxSteps, "steps", 500, "most FIRE steps")
	cmd.Flags().BoolVar(&fixedCell, "fixed-cell", false, "relax the positions only")
	cmd.Flags().StringVar(&out, "out", "", "write the relaxed structures to this directory (CIF and pymatgen JSON)")
	cmd.Flags().StringVar(&dir, "data", "", "data directory (default $CRUCIBLE_DATA, else ~/.cache/crucible)")
	cmd.Flags().IntVar(&workers, "workers", 0, "structures relaxed in parallel (default: one per CPU)")
	return cmd
}

// openEnergy loads the potential alone, or with the formation-energy and
// hull data.
func openEnergy(flag string, full bool) (*energy.Calculator, error) {
	d, err := dataDir(flag)
	if err != nil {
		return nil, err
	}
	if full {
		return energy.Open(d)
	}
	return energy.OpenPotential(d)
}

func workerCount(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// readStructures reads every file; a nil structure has its error.
func readStructures(files []string) ([]*crystal.Structure, []error) {
	sts := make([]*crystal.Structure, len(files))
	errs := make([]error, len(files))
	for i, f := range files {
		sts[i], errs[i] = crystal.ReadFile(f)
	}
	return sts, errs
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func failedError(name string, failed, total int) error {
	if failed == 0 {
		return nil
	}
	return &exitError{code: 1, err: fmt.Errorf("%s: %d of %d files failed", name, failed, total)}
}

func writeFileError(cmd *cobra.Command, asJSON bool, file string, err error) error {
	if asJSON {
		return writeJSONLine(cmd.OutOrStdout(), struct {
			File  string `json:"file"`
			Error string `json:"error"`
		}{file, err.Error()})
	}
	_, werr := fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", file, err)
	return werr
}

func writeEnergy(w io.Writer, asJSON bool, file string, st *crystal.Structure, p *energy.Point) error {
	formula := st.Composition().ReducedFormula()
	if asJSON {
		return writeJSONLine(w, struct {
			File          string         `json:"file"`
			Formula       string         `json:"formula"`
			Energy        float64        `json:"energy"`
			EnergyPerAtom float64        `json:"energy_per_atom"`
			Forces        []crystal.Vec3 `json:"forces"`
			Stress        [3][3]float64  `json:"stress"`
		}{file, formula, p.Energy, p.EnergyPerAtom, p.Forces, p.Stress})
	}
	s := p.Stress
	_, err := fmt.Fprintf(w, "%s  %s  energy=%.6f eV  energy_per_atom=%.6f eV/atom  max_force=%.4g eV/Å  stress=[%.4g %.4g %.4g %.4g %.4g %.4g] GPa\n",
		file, formula, p.Energy, p.EnergyPerAtom, p.MaxForce(), s[0][0], s[1][1], s[2][2], s[1][2], s[0][2], s[0][1])
	return err
}

func writeRelaxedLine(w io.Writer, asJSON bool, file string, r *energy.Relaxed, written []string) error {
	formula := r.Structure.Composition().ReducedFormula()
	var ef, eh *float64
	if r.Formation != nil {
		ef = &r.Formation.EnergyPerAtom
	}
	if r.Stability != nil {
		eh = &r.Stability.EAboveHull
	}
	if asJSON {
		return writeJSONLine(w, struct {
			File          string        `json:"file"`
			Formula       string        `json:"formula"`
			Converged     bool          `json:"converged"`
			Steps         int           `json:"steps"`
			Energy        float64       `json:"energy"`
			EnergyPerAtom float64       `json:"energy_per_atom"`
			EForm         *float64      `json:"formation_energy_per_atom"`
			EHull         *float64      `json:"e_above_hull"`
			Lattice       [3][3]float64 `json:"lattice"`
			Volume        float64       `json:"volume"`
			Warnings      []string      `json:"warnings,omitempty"`
			Written       []string      `json:"written,omitempty"`
		}{file, formula, r.Converged, r.Steps, r.Energy, r.EnergyPerAtom, ef, eh,
			r.Structure.Lattice.Matrix(), r.Structure.Volume(), r.Warnings, written})
	}
	a, b, c, al, be, ga := r.Structure.Lattice.Parameters()
	parts := []string{file, formula, fmt.Sprintf("converged=%v steps=%d", r.Converged, r.Steps),
		fmt.Sprintf("energy_per_atom=%.6f eV/atom", r.EnergyPerAtom),
		"formation_energy_per_atom=" + optText(ef, "eV/atom"), "e_above_hull=" + optText(eh, "eV/atom"),
		fmt.Sprintf("abc=%.4f %.4f %.4f Å angles=%.2f %.2f %.2f° volume=%.3f Å³", a, b, c, al, be, ga, r.Structure.Volume())}
	if len(r.Warnings) > 0 {
		parts = append(parts, "warning: "+strings.Join(r.Warnings, "; "))
	}
	_, err := fmt.Fprintln(w, strings.Join(parts, "  "))
	return err
}

func optText(v *float64, unit string) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f %s", *v, unit)
}

// outputNames gives each input the name of its output files: its base name
// without extension, made unique with its position when shared.
func outputNames(files []string) []string {
	names := make([]string, len(files))
	count := map[string]int{}
	for i, f := range files {
		base := filepath.Base(f)
		names[i] = strings.TrimSuffix(base, filepath.Ext(base))
		count[names[i]]++
	}
	for i := range names {
		if count[names[i]] > 1 {
			names[i] = fmt.Sprintf("%s-%d", names[i], i+1)
		}
	}
	return names
}

// writeRelaxed writes a relaxed structure as DIR/NAME.cif and
// DIR/NAME.json and returns the paths.
func writeRelaxed(dir, name, source string, st *crystal.Structure) ([]string, error) {
	var paths []string
	for _, f := range []crystal.Format{crystal.FormatCIF, crystal.FormatPymatgenJSON} {
		path := filepath.Join(dir, name+f.Extension())
		fh, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		err = crystal.WriteStructure(fh, st, f, "relaxed with M3GNet from "+source)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
