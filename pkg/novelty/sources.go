package novelty

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Sources of known structures.
const (
	// SourceDielectric and SourcePiezo are the Materials Project CIF sets
	// of Petousis et al. (Sci. Data 4, 160134 (2017)) and de Jong et al.
	// (Sci. Data 2, 150053 (2015)), named by their file.
	SourceDielectric = "mp_dielectric_petousis2017"
	SourcePiezo      = "mp_piezo_dejong2015"
	// SourceGolden is the golden CIF set (COD and Materials Project
	// structures, hand-built prototypes).
	SourceGolden = "golden"
	// SourcePrototype is the prototype library's archetypes: compounds
	// known to crystallise in a library prototype, built by it.
	SourcePrototype = "prototype"
)

// ErrBadSource is returned for a source of known structures that cannot be
// read: a missing column, a malformed row, an unparsable formula or CIF.
// The error names the file and row.
var ErrBadSource = errors.New("novelty: bad source of known structures")

// Archetypes lists, per prototype of the crystal package's library, the
// compounds whose structure at ambient conditions is that prototype
// (R. W. G. Wyckoff, Crystal Structures, 2nd ed., vols. 1–3, Interscience
// (1963–1965); N. N. Greenwood & A. Earnshaw, Chemistry of the Elements,
// 2nd ed. (1997)). The prototype builder makes each from ionic radii, as
// it makes candidates; the matcher scales volumes and tolerates the
// difference between the ideal cell and the real one (wurtzite's ideal
// c/a of 1.633 against ZnO's 1.602, NiAs's 1.39).
var Archetypes = map[string][]string{
	"rocksalt":     {"NaCl", "LiF", "LiCl", "NaF", "NaBr", "KF", "KCl", "KBr", "RbCl", "MgO", "CaO", "SrO", "BaO", "NiO", "MnO", "PbS"},
	"cscl":         {"CsCl", "CsBr", "CsI", "NiAl"},
	"zincblende":   {"ZnS", "ZnSe", "ZnTe", "CdTe", "GaP", "GaAs", "InP", "InAs", "AlP", "AlAs", "CuCl", "CuBr", "CuI", "SiC"},
	"wurtzite":     {"ZnO", "ZnS", "GaN", "AlN", "InN", "BeO", "CdS", "CdSe"},
	"fluorite":     {"CaF2", "SrF2", "BaF2", "CdF2", "CeO2", "ThO2", "UO2"},
	"antifluorite": {"Li2O", "Na2O", "K2O", "Li2S", "Na2S", "K2S", "Mg2Si"},
	"rutile":       {"TiO2", "SnO2", "MnO2", "RuO2", "IrO2", "MgF2", "ZnF2", "FeF2", "CoF2", "NiF2", "MnF2"},
	"perovskite":   {"SrTiO3", "KMgF3", "KZnF3", "KNiF3", "BaZrO3", "KTaO3"},
	"spinel":       {"MgAl2O4", "ZnAl2O4", "MgCr2O4", "ZnCr2O4", "FeCr2O4"},
	"corundum":     {"Al2O3", "Cr2O3", "Fe2O3", "V2O3", "Ti2O3"},
	"nias":         {"NiAs", "CoS", "CrSb", "MnTe", "NiSb"},
	"cdi2":         {"CdI2", "CaI2", "MgI2", "PbI2", "TiS2", "ZrS2", "SnS2"},
	"nafeo2":       {"LiCoO2", "NaFeO2", "LiNiO2", "NaCrO2"},
}

// entry is one known structure, parsed and reduced on first use.
type entry struct {
	ref     Ref
	formula string
	// load returns the structure (parsing its CIF, building it).
	load func() (*crystal.Structure, error)
}

// readCIFTable reads a CSV file with columns material_id, formula and cif
// (the MP sets of the data folder): one entry per row, keyed by the
// formula column (the test checks it agrees with each CIF's), the CIF
// parsed on first use.
func readCIFTable(path, source string) ([]*entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("novelty: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: header: %v", ErrBadSource, path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range []string{"material_id", "formula", "cif"} {
		if _, ok := col[c]; !ok {
			return nil, fmt.Errorf("%w: %s: no %q column", ErrBadSource, path, c)
		}
	}
	var out []*entry
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadSource, path, err)
		}
		id, formula := rec[col["material_id"]], rec[col["formula"]]
		comp, err := crystal.ParseFormula(formula)
		if err != nil {
			return nil, fmt.Errorf("%w: %s row %d (%s): formula: %v", ErrBadSource, path, line, id, err)
		}
		cif := []byte(rec[col["cif"]])
		if len(bytes.TrimSpace(cif)) == 0 {
			return nil, fmt.Errorf("%w: %s row %d (%s): empty CIF", ErrBadSource, path, line, id)
		}
		out = append(out, &entry{
			ref:     Ref{ID: id, Source: source},
			formula: comp.ReducedFormula(),
			load:    func() (*crystal.Structure, error) { return crystal.ParseCIF(cif) },
		})
	}
	return out, nil
}

// readCIFDir reads every *.cif file of dir, but those whose name (without
// .cif) exclude rejects: one entry per file, its name the id. The files
// are parsed now (the formula comes from the structure); they are few.
func readCIFDir(dir, source string, exclude func(id string) bool) ([]*entry, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cif"))
	if err != nil {
		return nil, fmt.Errorf("novelty: %w", err)
	}
	if files == nil {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("novelty: %w", err)
		}
	}
	slices.Sort(files)
	var out []*entry
	for _, file := range files {
		id := strings.TrimSuffix(filepath.Base(file), ".cif")
		if exclude != nil && exclude(id) {
			continue
		}
		s, err := crystal.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBadSource, file, err)
		}
		out = append(out, &entry{
			ref:     Ref{ID: id, Source: source},
			formula: s.Composition().ReducedFormula(),
			load:    func() (*crystal.Structure, error) { return s, nil },
		})
	}
	return out, nil
}

// archetypeEntries lists the archetypes, built on first use; id
// "prototype/formula" ("rocksalt/LiF").
func archetypeEntries() ([]*entry, error) {
	var out []*entry
	names := make([]string, 0, len(Archetypes))
	for name := range Archetypes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, err := crystal.PrototypeByName(name)
		if err != nil {
			return nil, fmt.Errorf("novelty: archetypes: %w", err)
		}
		for _, f := range Archetypes[name] {
			comp, err := crystal.ParseFormula(f)
			if err != nil {
				return nil, fmt.Errorf("novelty: archetype %s/%s: %w", name, f, err)
			}
			out = append(out, &entry{
				ref:     Ref{ID: name + "/" + f, Source: SourcePrototype},
				formula: comp.ReducedFormula(),
				load: func() (*crystal.Structure, error) {
					b, err := crystal.Build(p, comp)
					if err != nil {
						return nil, err
					}
					return b.Structure, nil
				},
			})
		}
	}
	return out, nil
}
