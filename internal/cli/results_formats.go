package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// resultsStructureFormat reads results' --format for structures: cif,
// poscar, json (pymatgen) or xyz; a POSCAR holds one structure, so it
// needs --out DIR.
func resultsStructureFormat(name, dir string) (crystal.Format, error) {
	var f crystal.Format
	switch name {
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

// resultsStructure is one element of the JSON array results writes with
// --format json: the candidate, its reduced formula and its pymatgen
// Structure dict.
type resultsStructure struct {
	ID        string          `json:"id"`
	Formula   string          `json:"formula"`
	Structure json.RawMessage `json:"structure"`
}

// writeResultsStructures writes the structures of evs in format f. With a
// directory, one file per structure named by the candidate id and the
// format's extension (ID.cif, ID.vasp, ID.json, ID.xyz), labelled
// "candidate ID" where the format has room (see crystal.WriteStructure).
// Without, to w: CIF data blocks one after another, each after a
// "# candidate ID" line; XYZ frames one after another (a trajectory ASE
// reads), each with title="candidate ID"; or a JSON array of {id, formula,
// structure} objects, structure being a pymatgen Structure dict. Nothing is
// written for a structure that cannot be built, and the error names it.
func writeResultsStructures(w io.Writer, dir string, f crystal.Format, evs []*messages.Evaluation) error {
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
			elem, err := json.Marshal(resultsStructure{ID: ev.ID, Formula: s.Composition().ReducedFormula(), Structure: js})
			if err != nil {
				return fmt.Errorf("%s: %w", ev.ID, err)
			}
			elems = append(elems, elem)
			continue
		}
		var buf bytes.Buffer
		if err := crystal.WriteStructure(&buf, s, f, "candidate "+ev.ID); err != nil {
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
