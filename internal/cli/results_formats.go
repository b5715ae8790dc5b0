package cli

import (
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/pkg/crystal"
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
