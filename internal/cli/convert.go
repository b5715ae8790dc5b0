package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

func init() { register(newConvertCmd) }

// structureFormatsHelp describes the structure formats, for the help of the
// commands that read or write them.
const structureFormatsHelp = `Formats:
  cif     CIF 1.1. Read: the first data block with atom sites, symmetry
          operations applied. Written: P1 (every site listed), laid out
          as pymatgen's CifWriter writes it; sites in pymatgen's order when
          read back.
  poscar  VASP POSCAR/CONTCAR. Read: VASP 5 (species line; "Fe_pv" and
          VASP 6.4's "Fe/hash" read as Fe); a scale factor, a negative one
          being the cell volume, or three per-axis factors; Direct or
          Cartesian; selective-dynamics flags and the velocity and
          predictor-corrector blocks of a CONTCAR are read past. A VASP 4
          file (no species line) needs its species: --species, the element
          symbols alone on its comment line, or a symbol after every
          position. Written: VASP 5, Direct, 16 decimals, sites in order.
  json    pymatgen Structure JSON (Structure.as_dict(), Structure.from_file
          reads it). Read also: Crucible's candidate JSON {formula,
          lattice, species, coords}.
  xyz     extended XYZ (ASE, QUIP): Lattice="ax ay az bx by bz cx cy cz",
          Properties=species:S:1:pos:R:3 (other columns and keys are read
          past), pbc="T T T". A plain XYZ file without Lattice is a
          molecule, and a frame with pbc="T T F" a slab: both are refused,
          as Crucible's structures are three-dimensional crystals.

A file's format is recognised from its name (.cif; POSCAR*, CONTCAR*,
.vasp, .poscar; .json; .xyz, .extxyz), else from its content.`

func newConvertCmd() *cobra.Command {
	var to, from, out, species string
	var symmetrize bool
	var symprec float64
	cmd := &cobra.Command{
		Use:   "convert IN --to FORMAT [--out FILE|-]",
		Short: "Convert a structure file between CIF, POSCAR, pymatgen JSON and extended XYZ",
		Long: `convert reads one structure (IN, or - for standard input) and writes it in
another format: cif, poscar, json (pymatgen) or xyz (extended XYZ), to
standard output or to --out FILE. Without --to, the format of --out's name
is used. Lattice, species and fractional coordinates survive every pair of
formats to 1e-8 (a CIF reorders, wraps and turns the cell to pymatgen's
orientation).

--symmetrize writes a CIF in the standard setting of the structure's space
group, found within --symprec Å (and 5°): the standard conventional cell
with the metric its crystal system requires, the group's Hermann–Mauguin
symbol, Hall symbol, number and operations, and one atom per orbit (the
asymmetric unit). Without it a CIF lists every site (P1).

` + structureFormatsHelp + ` --from names the input format
instead (standard input is recognised from its content).

Exit status: 0 written, 1 the input could not be read or written, 2 usage.`,
		Example: `  crucible convert POSCAR --to cif
  crucible convert rutile.cif --out rutile.vasp
  crucible convert CONTCAR --to cif --symmetrize --symprec 0.1
  crucible convert OLD_POSCAR --species Fe,O --to json --out Fe2O3.json
  cat frame.xyz | crucible convert - --to poscar`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, opt, err := crystal.ParseConversion(to, from, out, species)
			if err == nil && symmetrize && target != crystal.FormatCIF {
				err = fmt.Errorf("--symmetrize writes a CIF, not %s", target)
			}
			if err == nil && !(symprec > 0 && symprec <= spacegroup.MaxSymPrec) {
				err = fmt.Errorf("--symprec %g: want above 0 and at most %g Å", symprec, spacegroup.MaxSymPrec)
			}
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			var sym *spacegroup.Options
			if symmetrize {
				sym = &spacegroup.Options{SymPrec: symprec}
			}
			data, err := opt.Convert(args[0], cmd.InOrStdin(), target, sym)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err := cmd.OutOrStdout().Write(data)
				return err
			}
			return os.WriteFile(out, data, 0o644)
		},
	}
	f := cmd.Flags()
	f.StringVar(&to, "to", "", "output format: cif, poscar, json or xyz (default: from --out's name)")
	f.StringVar(&out, "out", "-", "output file, - for standard output")
	f.StringVar(&from, "from", "", "input format: cif, poscar, json, candidate or xyz (default: from IN's name, else its content)")
	f.BoolVar(&symmetrize, "symmetrize", false, "write a CIF in the standard setting of the detected space group (asymmetric unit and operations)")
	f.Float64Var(&symprec, "symprec", spacegroup.DefaultSymPrec, "position tolerance of the space-group search for --symmetrize, Å")
	f.StringVar(&species, "species", "", "elements of a VASP 4 POSCAR's count groups, in order (\"Fe,O\")")
	return cmd
}
