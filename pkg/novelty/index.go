package novelty

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/match"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// Kind is what a candidate structure is with respect to what is known.
type Kind int

const (
	// New: the reduced formula is neither in the reference tables nor
	// among the known structures.
	New Kind = iota
	// KnownFormula: the formula is in the reference tables but no
	// structure of it is held, so only the formula can be compared; the
	// compound counts as known (LLEMA's memorisation test), as before
	// structures were compared.
	KnownFormula
	// NewPolymorph: structures of the formula are held and none matches.
	NewPolymorph
	// Known: the structure matches a known structure.
	Known
)

func (k Kind) String() string {
	switch k {
	case New:
		return "new"
	case KnownFormula:
		return "known formula"
	case NewPolymorph:
		return "new polymorph"
	case Known:
		return "known"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Ref names a known structure: its id in its source ("mp-441",
// "cod-1000041", "rocksalt/LiF") and the source.
type Ref struct {
	ID     string
	Source string
}

func (r Ref) String() string { return r.Source + ":" + r.ID }

// Verdict is the outcome of Classify.
type Verdict struct {
	Kind Kind
	// Formula is the candidate's reduced formula.
	Formula string
	// Match is the known structure matched (Kind Known): of those that
	// match, the one with the least RMS displacement.
	Match Ref
	// RMS is the matcher's normalised RMS displacement from Match.
	RMS float64
	// Polymorphs are the known structures of the formula (Kind
	// NewPolymorph: none matches; Kind Known: all of them).
	Polymorphs []Ref
	// TableEntries is the number of entries of the formula in the
	// reference tables (polymorphs as the Materials Project lists them),
	// 0 when it is not there. A new polymorph with more table entries than
	// Polymorphs may be one of the entries whose structure is not held.
	TableEntries int
}

// FormulaCount returns how many entries the reference tables hold for a
// reduced formula (0: unknown).
type FormulaCount func(reducedFormula string) int

// TableCounts counts a formula's entries in the formation-energy table
// (mp_e_form), or in the energy-above-hull table (mp_e_hull) for a
// formula only there.
func TableCounts(db *reference.DB) FormulaCount {
	return func(f string) int {
		if s, ok := db.Lookup(reference.FormationEnergy, f); ok {
			return s.Count
		}
		if s, ok := db.Lookup(reference.EnergyAboveHull, f); ok {
			return s.Count
		}
		return 0
	}
}

// Config says where the known structures are.
type Config struct {
	// CIFTables are CSV files with material_id, formula and cif columns.
	// Their CIFs are parsed when a candidate of their formula first needs
	// them.
	CIFTables []CIFTable
	// CIFDir is a folder of CIF files, each named by its id ("" for none);
	// ExcludeCIF rejects some of them by id.
	CIFDir     string
	ExcludeCIF func(id string) bool
	// Prototypes adds the prototype library's archetypes (Archetypes).
	Prototypes bool
	// Formulas counts a formula's entries in the reference tables (nil:
	// no formula is known beyond the structures).
	Formulas FormulaCount
	// Match are the matcher's tolerances (zero: pymatgen's defaults).
	Match match.Options
}

// CIFTable is a CSV file of CIFs and the source it stands for.
type CIFTable struct {
	Path, Source string
}

// Standard is the configuration for a data folder laid out as the
// project's (CRUCIBLE_DATA): the two MP CIF sets of data/, the golden CIFs
// of golden/cgcnn/cifs and the archetypes. Of the golden CIFs, the
// icsd-* files are skipped (the cod-* structures rewritten in P1) and so
// are two hand-made cells that are not known compounds:
// proto-Mg2AlO4-spinel-like (not charge-balanced) and
// proto-SrTiO3-distorted-triclinic (a deliberately distorted cell).
func Standard(root string, formulas FormulaCount) Config {
	return Config{
		CIFTables: []CIFTable{
			{filepath.Join(root, "data", SourceDielectric+".csv"), SourceDielectric},
			{filepath.Join(root, "data", SourcePiezo+".csv"), SourcePiezo},
		},
		CIFDir: filepath.Join(root, "golden", "cgcnn", "cifs"),
		ExcludeCIF: func(id string) bool {
			return strings.HasPrefix(id, "icsd-") || id == "proto-Mg2AlO4-spinel-like" || id == "proto-SrTiO3-distorted-triclinic"
		},
		Prototypes: true,
		Formulas:   formulas,
	}
}

// Index holds known structures by reduced formula and classifies
// candidates against them. The sources are read on first use (or by
// Load); each known structure is parsed and reduced the first time a
// candidate of its formula needs it. It is safe for concurrent use.
type Index struct {
	cfg     Config
	once    sync.Once
	loadErr error
	byF     map[string][]*slot
	n       int
}

// slot is an entry and its reduced structure, made once.
type slot struct {
	*entry
	once sync.Once
	red  *match.Reduced
	err  error
}

func (s *slot) reduced(opt match.Options) (*match.Reduced, error) {
	s.once.Do(func() {
		st, err := s.load()
		if err != nil {
			s.err = fmt.Errorf("%w: %s: %v", ErrBadSource, s.ref, err)
			return
		}
		s.red, s.err = match.Reduce(st, opt)
		if s.err != nil {
			s.err = fmt.Errorf("%w: %s: %v", ErrBadSource, s.ref, s.err)
		}
	})
	return s.red, s.err
}

// NewIndex returns an index over the configured sources; nothing is read
// until Load or Classify.
func NewIndex(cfg Config) *Index { return &Index{cfg: cfg} }

// Load reads the sources (once; later calls return the first result).
func (ix *Index) Load() error {
	ix.once.Do(func() { ix.loadErr = ix.load() })
	return ix.loadErr
}

func (ix *Index) load() error {
	var all []*entry
	for _, t := range ix.cfg.CIFTables {
		es, err := readCIFTable(t.Path, t.Source)
		if err != nil {
			return err
		}
		all = append(all, es...)
	}
	if ix.cfg.CIFDir != "" {
		es, err := readCIFDir(ix.cfg.CIFDir, SourceGolden, ix.cfg.ExcludeCIF)
		if err != nil {
			return err
		}
		all = append(all, es...)
	}
	if ix.cfg.Prototypes {
		es, err := archetypeEntries()
		if err != nil {
			return err
		}
		all = append(all, es...)
	}
	ix.byF = make(map[string][]*slot, len(all))
	for _, e := range all {
		ix.byF[e.formula] = append(ix.byF[e.formula], &slot{entry: e})
	}
	ix.n = len(all)
	return nil
}

// Len is the number of known structures (after Load).
func (ix *Index) Len() int { return ix.n }

// Formulas is the number of distinct reduced formulas among them.
func (ix *Index) Formulas() int { return len(ix.byF) }

// Structures returns the known structures of a reduced formula.
func (ix *Index) Structures(formula string) ([]Ref, error) {
	if err := ix.Load(); err != nil {
		return nil, err
	}
	var out []Ref
	for _, s := range ix.byF[formula] {
		out = append(out, s.ref)
	}
	return out, nil
}

// Classify says whether s is a known structure, a new polymorph of a known
// formula, a compound known by formula alone, or new (see Kind). s is
// compared, with the matcher, only with the known structures of its
// reduced formula whose primitive cells have as many sites (match.Key);
// a known structure that cannot be read is an error naming it.
func (ix *Index) Classify(s *crystal.Structure) (Verdict, error) {
	if err := ix.Load(); err != nil {
		return Verdict{}, err
	}
	r, err := match.Reduce(s, ix.cfg.Match)
	if err != nil {
		return Verdict{}, fmt.Errorf("novelty: candidate: %w", err)
	}
	v := Verdict{Formula: r.Formula()}
	if ix.cfg.Formulas != nil {
		v.TableEntries = ix.cfg.Formulas(v.Formula)
	}
	slots := ix.byF[v.Formula]
	found := false
	for _, sl := range slots {
		v.Polymorphs = append(v.Polymorphs, sl.ref)
		known, err := sl.reduced(ix.cfg.Match)
		if err != nil {
			return Verdict{}, err
		}
		if known.Key() != r.Key() {
			continue
		}
		res, err := match.MatchReduced(r, known, ix.cfg.Match)
		if err != nil {
			return Verdict{}, err
		}
		if res.Match && (!found || res.RMS < v.RMS) {
			found, v.Match, v.RMS = true, sl.ref, res.RMS
		}
	}
	switch {
	case found:
		v.Kind = Known
	case len(slots) > 0:
		v.Kind = NewPolymorph
	case v.TableEntries > 0:
		v.Kind = KnownFormula
	default:
		v.Kind = New
	}
	return v, nil
}
