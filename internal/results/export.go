// Package results writes and reads a campaign's results as files: the
// CSV table and the structure files "crucible results" exports, and the
// prompts.jsonl audit trail of a local run.
package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// WriteCSV writes one row per evaluation: id, formula, generation, island,
// operator, the flags, score, e_above_hull, the space group's number and
// symbol (empty when the evaluation has none), reasons, then three
// columns per property any evaluation has, in name order (empty where it
// has none): its value and its uncertainty (the surrogate's test MAE;
// empty for an exact source), both headed with the unit ("band_gap [eV]",
// "band_gap uncertainty [eV]"), and its source ("band_gap source":
// cgcnn, reference, structure or hull).
func WriteCSV(w io.Writer, evs []*messages.Evaluation) error {
	units := map[string]string{}
	for _, ev := range evs {
		for name, p := range ev.Properties {
			if _, ok := units[name]; !ok || units[name] == "" {
				units[name] = p.Unit
			}
		}
	}
	names := make([]string, 0, len(units))
	for n := range units {
		names = append(names, n)
	}
	sort.Strings(names)
	withUnit := func(name, unit string) string {
		if unit == "" {
			return name
		}
		return name + " [" + unit + "]"
	}
	cw := csv.NewWriter(w)
	header := []string{"id", "formula", "generation", "island", "operator", "valid", "feasible", "stable", "novel", "known", "score", "e_above_hull [eV/atom]", "space_group", "space_group_symbol", "reasons"}
	for _, n := range names {
		header = append(header, withUnit(n, units[n]), withUnit(n+" uncertainty", units[n]), n+" source")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
	for _, ev := range evs {
		ehull := ""
		if ev.EAboveHull != nil {
			ehull = f(*ev.EAboveHull)
		}
		sgNumber, sgSymbol := "", ""
		if g := ev.SpaceGroup; g != nil {
			sgNumber, sgSymbol = strconv.Itoa(g.Number), g.Symbol
		}
		var reasons []string
		for _, r := range ev.Reasons {
			reasons = append(reasons, r.Code+": "+r.Detail)
		}
		row := []string{ev.ID, ev.Candidate.Formula, strconv.Itoa(ev.Candidate.Generation), strconv.Itoa(ev.Candidate.Island),
			ev.Candidate.Operator, strconv.FormatBool(ev.Valid), strconv.FormatBool(ev.Feasible), strconv.FormatBool(ev.Stable),
			strconv.FormatBool(ev.Novel), strconv.FormatBool(ev.Known), f(ev.Score), ehull, sgNumber, sgSymbol, strings.Join(reasons, "; ")}
		for _, n := range names {
			p, ok := ev.Properties[n]
			switch {
			case !ok:
				row = append(row, "", "", "")
			case p.Uncertainty > 0:
				row = append(row, f(p.Value), f(p.Uncertainty), p.Source)
			default: // an exact source, or none published
				row = append(row, f(p.Value), "", p.Source)
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// structureJSON is one element of the JSON array WriteStructures writes
// to a stream: the candidate, its reduced formula and its pymatgen
// Structure dict.
type structureJSON struct {
	ID        string          `json:"id"`
	Formula   string          `json:"formula"`
	Structure json.RawMessage `json:"structure"`
}

// WriteStructures writes the structures of evs in format f. With a
// directory, one file per structure named by the candidate id and the
// format's extension (ID.cif, ID.vasp, ID.json, ID.xyz), labelled
// "candidate ID" where the format has room (see crystal.WriteStructure).
// Without, to w: CIF data blocks one after another, each after a
// "# candidate ID" line; XYZ frames one after another (a trajectory ASE
// reads), each with title="candidate ID"; or a JSON array of {id, formula,
// structure} objects, structure being a pymatgen Structure dict. With
// symmetrize, a CIF is written in the standard setting of the structure's
// space group at the default tolerance, the one its evaluation records
// (crystal.WriteSymmetrizedCIF); other formats are refused. Nothing is
// written for a structure that cannot be built, and the error names it.
func WriteStructures(w io.Writer, dir string, f crystal.Format, evs []*messages.Evaluation, symmetrize bool) error {
	if symmetrize && f != crystal.FormatCIF {
		return fmt.Errorf("a symmetrised structure is written as CIF, not %s", f)
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	var elems [][]byte // with --format json to w
	for _, ev := range evs {
		s, err := ev.FinalStructure().Crystal()
		if err != nil {
			return fmt.Errorf("%s: %w", ev.ID, err)
		}
		if dir == "" && f == crystal.FormatPymatgenJSON {
			js, err := crystal.MarshalPymatgenJSON(s)
			if err != nil {
				return fmt.Errorf("%s: %w", ev.ID, err)
			}
			elem, err := json.Marshal(structureJSON{ID: ev.ID, Formula: s.Composition().ReducedFormula(), Structure: js})
			if err != nil {
				return fmt.Errorf("%s: %w", ev.ID, err)
			}
			elems = append(elems, elem)
			continue
		}
		var buf bytes.Buffer
		if symmetrize {
			buf.WriteString("# candidate " + ev.ID + "\n")
			err = crystal.WriteSymmetrizedCIF(&buf, s, spacegroup.Options{})
		} else {
			err = crystal.WriteStructure(&buf, s, f, "candidate "+ev.ID)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", ev.ID, err)
		}
		if dir != "" {
			if err := os.WriteFile(filepath.Join(dir, ev.ID+f.Extension()), buf.Bytes(), 0o644); err != nil {
				return err
			}
			continue
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	if dir == "" && f == crystal.FormatPymatgenJSON {
		// One element per line, so the array reads and greps well.
		out := []byte("[")
		for i, e := range elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(append(out, '\n'), e...)
		}
		_, err := w.Write(append(out, "\n]\n"...))
		return err
	}
	return nil
}

// StructureFormat reads the format of an export: jsonl and csv (the
// evaluations) give crystal.FormatUnknown, cif, poscar, json (pymatgen)
// and xyz their structure format. A POSCAR holds one structure, so poscar
// needs a directory.
func StructureFormat(name, dir string) (crystal.Format, error) {
	var f crystal.Format
	switch name {
	case "jsonl", "csv":
		return crystal.FormatUnknown, nil
	case "cif":
		f = crystal.FormatCIF
	case "poscar":
		f = crystal.FormatPOSCAR
	case "json":
		f = crystal.FormatPymatgenJSON
	case "xyz":
		f = crystal.FormatXYZ
	default:
		return 0, fmt.Errorf("--format %q: want jsonl, csv, cif, poscar, json or xyz", name)
	}
	if f == crystal.FormatPOSCAR && dir == "" {
		return 0, errors.New("--format poscar: a POSCAR holds one structure; give --out DIR for one file per structure")
	}
	return f, nil
}
