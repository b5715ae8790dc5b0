package energy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/relax"
)

// FileResult is one structure file's outcome: its single point or its
// relaxation, or the error that stopped it (reading, or the potential's).
type FileResult struct {
	File string
	// Input is the structure as read; nil when the file could not be.
	Input   *crystal.Structure
	Point   *Point
	Relaxed *Relaxed
	Err     error
}

// PointFiles reads every file (any format crystal.ReadFile reads) and
// evaluates the structures on up to workers goroutines, in order.
func (c *Calculator) PointFiles(files []string, workers int) []FileResult {
	out, sts := readFiles(files)
	points, errs := c.PointAll(sts, workers)
	for i := range out {
		if out[i].Err == nil {
			out[i].Point, out[i].Err = points[i], errs[i]
		}
	}
	return out
}

// RelaxFiles reads every file and relaxes the structures on up to workers
// goroutines, in order.
func (c *Calculator) RelaxFiles(ctx context.Context, files []string, opt relax.Options, workers int) []FileResult {
	out, sts := readFiles(files)
	res, errs := c.RelaxAll(ctx, sts, opt, workers)
	for i := range out {
		if out[i].Err == nil {
			out[i].Relaxed, out[i].Err = res[i], errs[i]
		}
	}
	return out
}

func readFiles(files []string) ([]FileResult, []*crystal.Structure) {
	out := make([]FileResult, len(files))
	sts := make([]*crystal.Structure, len(files))
	for i, f := range files {
		out[i].File = f
		sts[i], out[i].Err = crystal.ReadFile(f)
		out[i].Input = sts[i]
	}
	return out, sts
}

// PointRecord is a single point as "crucible energy --json" writes it.
type PointRecord struct {
	File          string         `json:"file"`
	Formula       string         `json:"formula"`
	Energy        float64        `json:"energy"`
	EnergyPerAtom float64        `json:"energy_per_atom"`
	Forces        []crystal.Vec3 `json:"forces"`
	Stress        [3][3]float64  `json:"stress"`
}

// RelaxedRecord is a relaxation as "crucible relax --json" writes it:
// formation_energy_per_atom and e_above_hull are null when they could not
// be computed, and warnings say why.
type RelaxedRecord struct {
	File                   string        `json:"file"`
	Formula                string        `json:"formula"`
	Converged              bool          `json:"converged"`
	Steps                  int           `json:"steps"`
	Energy                 float64       `json:"energy"`
	EnergyPerAtom          float64       `json:"energy_per_atom"`
	FormationEnergyPerAtom *float64      `json:"formation_energy_per_atom"`
	EAboveHull             *float64      `json:"e_above_hull"`
	Lattice                [3][3]float64 `json:"lattice"`
	Volume                 float64       `json:"volume"`
	Warnings               []string      `json:"warnings,omitempty"`
	Written                []string      `json:"written,omitempty"`
}

// ErrorRecord is a file that failed, as the --json output of both commands
// writes it.
type ErrorRecord struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

// PointRecord returns the JSON record of a single point: an ErrorRecord for a
// failed file.
func (r FileResult) PointRecord() any {
	if r.Err != nil || r.Point == nil {
		return r.errorRecord()
	}
	p := r.Point
	return PointRecord{File: r.File, Formula: r.Input.Composition().ReducedFormula(),
		Energy: p.Energy, EnergyPerAtom: p.EnergyPerAtom, Forces: p.Forces, Stress: p.Stress}
}

// RelaxedRecord returns the JSON record of a relaxation, with the files
// its structure was written to: an ErrorRecord for a failed file.
func (r FileResult) RelaxedRecord(written []string) any {
	if r.Err != nil || r.Relaxed == nil {
		return r.errorRecord()
	}
	x := r.Relaxed
	rec := RelaxedRecord{File: r.File, Formula: x.Structure.Composition().ReducedFormula(),
		Converged: x.Converged, Steps: x.Steps, Energy: x.Energy, EnergyPerAtom: x.EnergyPerAtom,
		Lattice: x.Structure.Lattice.Matrix(), Volume: x.Structure.Volume(), Warnings: x.Warnings, Written: written}
	if x.Formation != nil {
		rec.FormationEnergyPerAtom = &x.Formation.EnergyPerAtom
	}
	if x.Stability != nil {
		rec.EAboveHull = &x.Stability.EAboveHull
	}
	return rec
}

func (r FileResult) errorRecord() ErrorRecord {
	msg := "no result"
	if r.Err != nil {
		msg = r.Err.Error()
	}
	return ErrorRecord{File: r.File, Error: msg}
}

// OutputNames gives each input file the base name of its outputs: its file
// name without extension, followed by -N (its position, from 1) when two
// inputs share it.
func OutputNames(files []string) []string {
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

// WriteRelaxedFiles writes the relaxed structure of every result that has
// one into dir (WriteStructureFiles, named by OutputNames) and returns the
// paths written per result; a failed write becomes the result's error.
// An empty dir writes nothing.
func WriteRelaxedFiles(dir string, res []FileResult) [][]string {
	written := make([][]string, len(res))
	if dir == "" {
		return written
	}
	files := make([]string, len(res))
	for i, r := range res {
		files[i] = r.File
	}
	for i, name := range OutputNames(files) {
		if res[i].Err == nil && res[i].Relaxed != nil {
			written[i], res[i].Err = WriteStructureFiles(dir, name, "relaxed with M3GNet from "+res[i].File, res[i].Relaxed.Structure)
		}
	}
	return written
}

// WriteStructureFiles writes st as DIR/NAME.cif (P1, titled) and
// DIR/NAME.json (pymatgen Structure JSON) and returns the paths.
func WriteStructureFiles(dir, name, title string, st *crystal.Structure) ([]string, error) {
	var paths []string
	for _, f := range []crystal.Format{crystal.FormatCIF, crystal.FormatPymatgenJSON} {
		path := filepath.Join(dir, name+f.Extension())
		fh, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		err = crystal.WriteStructure(fh, st, f, title)
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

// Summary is a relaxation in brief, as "crucible predict --relax --json"
// writes it beside the properties predicted on the relaxed structure.
type Summary struct {
	Converged              bool     `json:"converged"`
	Steps                  int      `json:"steps"`
	EnergyPerAtom          float64  `json:"energy_per_atom"`
	FormationEnergyPerAtom *float64 `json:"formation_energy_per_atom"`
	EAboveHull             *float64 `json:"e_above_hull"`
}

// Summary returns r in brief; nil for a nil relaxation.
func (r *Relaxed) Summary() *Summary {
	if r == nil {
		return nil
	}
	s := &Summary{Converged: r.Converged, Steps: r.Steps, EnergyPerAtom: r.EnergyPerAtom}
	if r.Formation != nil {
		s.FormationEnergyPerAtom = &r.Formation.EnergyPerAtom
	}
	if r.Stability != nil {
		s.EAboveHull = &r.Stability.EAboveHull
	}
	return s
}

// PointLine is a single point as "crucible energy" writes it: file,
// formula, energy, energy per atom, the largest force and the stress in
// Voigt order (xx yy zz yz xz xy).
func (r FileResult) PointLine() string {
	p, s := r.Point, r.Point.Stress
	return fmt.Sprintf("%s  %s  energy=%.6f eV  energy_per_atom=%.6f eV/atom  max_force=%.4g eV/Å  stress=[%.4g %.4g %.4g %.4g %.4g %.4g] GPa",
		r.File, r.Input.Composition().ReducedFormula(), p.Energy, p.EnergyPerAtom, p.MaxForce(), s[0][0], s[1][1], s[2][2], s[1][2], s[0][2], s[0][1])
}

// RelaxedLine is a relaxation as "crucible relax" writes it: file,
// formula, convergence and steps, energy per atom, formation energy,
// energy above the hull, lattice parameters and volume, warnings.
func (r FileResult) RelaxedLine() string {
	x := r.Relaxed
	s := x.Summary()
	a, b, c, al, be, ga := x.Structure.Lattice.Parameters()
	parts := []string{r.File, x.Structure.Composition().ReducedFormula(), fmt.Sprintf("converged=%v steps=%d", x.Converged, x.Steps),
		fmt.Sprintf("energy_per_atom=%.6f eV/atom", x.EnergyPerAtom),
		"formation_energy_per_atom=" + PerAtomText(s.FormationEnergyPerAtom), "e_above_hull=" + PerAtomText(s.EAboveHull),
		fmt.Sprintf("abc=%.4f %.4f %.4f Å angles=%.2f %.2f %.2f° volume=%.3f Å³", a, b, c, al, be, ga, x.Structure.Volume())}
	if len(x.Warnings) > 0 {
		parts = append(parts, "warning: "+strings.Join(x.Warnings, "; "))
	}
	return strings.Join(parts, "  ")
}

// PerAtomText writes an energy per atom (eV/atom) to four decimals, or
// n/a for none.
func PerAtomText(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f eV/atom", *v)
}

// WriteResults writes a line per file as "crucible energy" and "crucible
// relax" do: record(i) as JSON with asJSON, else text(r) on w and a
// failure on errw. It returns how many files failed.
func WriteResults(w, errw io.Writer, asJSON bool, res []FileResult, record func(i int) any, text func(FileResult) string) (failed int, err error) {
	enc := json.NewEncoder(w)
	for i, r := range res {
		switch {
		case asJSON:
			err = enc.Encode(record(i))
		case r.Err != nil:
			_, err = fmt.Fprintf(errw, "%s: %v\n", r.File, r.Err)
		default:
			_, err = fmt.Fprintln(w, text(r))
		}
		if err != nil {
			return failed, err
		}
		if r.Err != nil {
			failed++
		}
	}
	return failed, nil
}
