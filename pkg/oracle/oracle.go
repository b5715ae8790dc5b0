package oracle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/crucible-sci/crucible/pkg/cgcnn"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/novelty"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/surrogate"
)

// ErrMissingData is matched (errors.Is) by the error of Open when the data
// directory lacks files; the message says to run "crucible data pull" or
// set CRUCIBLE_DATA.
var ErrMissingData = datadir.ErrMissing

// DefaultMaxHullElements is the default of Options.MaxHullElements.
const DefaultMaxHullElements = 8

// Options configure an Oracle. The zero value loads every property
// checkpoint, applies crystal.Validate's defaults, and uses one worker per
// CPU.
type Options struct {
	// Checkpoints names the CGCNN checkpoints to load (Surrogate.
	// Checkpoint); nil means all of Surrogates(), an empty list none. A
	// property without its checkpoint gets only its reference value, for
	// known formulas.
	Checkpoints []string
	// Validity configures the validity checks (default: minimum distance
	// 0.5 Å, at most 200 atoms, 5–150 Å³/atom, the chemistry verdict).
	// ExpectedFormula is ignored: each Request's StatedFormula takes its
	// place.
	Validity crystal.ValidityOptions
	// Workers is the number of structures evaluated in parallel (default
	// GOMAXPROCS).
	Workers int
	// MaxHullElements is the largest number of elements a candidate may
	// have for a stability calculation (default DefaultMaxHullElements);
	// larger ones get a warning instead.
	MaxHullElements int
	// SurrogateOnly skips the reference values: every property comes from
	// CGCNN even for a known formula (Known is still reported). For
	// studies of the surrogates, and LLEMA's ablation of the oracle (§4.3).
	SurrogateOnly bool
	// Known classifies structures against known ones (pkg/novelty): a
	// structure of a known formula that matches none of the formula's
	// known structures is a new polymorph, and gets the surrogates'
	// values instead of the reference values of the known polymorph. Open
	// builds novelty.Standard over its data directory when Known is nil;
	// without an index (New) known compounds are recognised by formula
	// alone.
	Known *novelty.Index
	// Calibration maps a property (and "e_above_hull") to its measured
	// error in this oracle's tier (pkg/calibrate): surrogate values carry
	// it, and their Uncertainty is its Q68. Nil keeps the published MAEs.
	Calibration map[string]Calibrated
	// RelaxCalibration is Calibration for the relax tier (EvaluateRelaxed):
	// the errors of the M3GNet formation energy and of the surrogates on
	// relaxed structures. Nil leaves the relax tier's values with their
	// uncalibrated uncertainties.
	RelaxCalibration map[string]Calibrated
	// Models are Crucible's own surrogates (pkg/surrogate) by property,
	// used instead of model files. Open looks for the others in the data
	// directory and the model cache (surrogate.Find) when a request first
	// asks for their property (Request.Properties); New has none but
	// these.
	Models map[string]*surrogate.Model
	// TrainModels: a model that Open's data directory and the cache lack
	// (or hold only trained on other data) is trained on first need into
	// the cache (surrogate.Ensure, tens of seconds once). Without it the
	// property gets no value and a warning saying how to train it.
	TrainModels bool
	// ModelLog, when set, is told when a model is trained on first use.
	ModelLog func(format string, args ...any)
	// External are plug-in model servers, at most one per property; a
	// request naming their property (Request.Properties) gets their value.
	// Their properties take precedence over the own surrogates'.
	External []External
}

// Oracle evaluates candidate structures. It is safe for concurrent use.
type Oracle struct {
	ref        *reference.DB
	set        *cgcnn.Set          // nil without checkpoints
	surrogates []Surrogate         // aligned with set.Models()
	atoms      *cgcnn.AtomFeatures // nil when built by New without a set
	hulls      *hull.Cache
	own        *ownModels
	opts       Options
}

// Open loads the oracle's data from a data directory laid out as
// datadir describes (data/*.csv, models/cgcnn/): the reference tables and
// the CGCNN checkpoints, in parallel. Missing files are an error matching
// ErrMissingData that lists them.
func Open(dir string, opts Options) (*Oracle, error) {
	names, err := checkpointNames(opts.Checkpoints)
	if err != nil {
		return nil, err
	}
	var need []string
	for _, t := range reference.Tables() {
		need = append(need, datadir.TablesDir+"/"+t.File())
	}
	need = append(need, datadir.ModelsDir+"/"+cgcnn.AtomInitFile)
	for _, n := range names {
		need = append(need, datadir.ModelsDir+"/"+n+".pth.tar")
	}
	if opts.Known == nil {
		for _, src := range []string{novelty.SourceDielectric, novelty.SourcePiezo} {
			need = append(need, datadir.TablesDir+"/"+src+".csv")
		}
	}
	if err := datadir.Require(dir, need...); err != nil {
		return nil, fmt.Errorf("open oracle: %w", err)
	}
	var (
		ref          *reference.DB
		set          *cgcnn.Set
		atoms        *cgcnn.AtomFeatures
		refErr, cErr error
		wg           sync.WaitGroup
	)
	wg.Go(func() { ref, refErr = reference.Load(datadir.Tables(dir)) })
	wg.Go(func() {
		if len(names) > 0 {
			set, cErr = cgcnn.LoadSet(datadir.Models(dir), names...)
			if set != nil {
				atoms = set.AtomFeatures()
			}
			return
		}
		atoms, cErr = cgcnn.LoadAtomFeatures(filepath.Join(datadir.Models(dir), cgcnn.AtomInitFile))
	})
	wg.Wait()
	if err := errors.Join(refErr, cErr); err != nil {
		return nil, fmt.Errorf("open oracle: %w", err)
	}
	opts.Checkpoints = names
	if opts.Known == nil {
		cfg := novelty.Standard(dir, novelty.TableCounts(ref))
		if fi, err := os.Stat(cfg.CIFDir); err != nil || !fi.IsDir() {
			cfg.CIFDir = "" // the golden CIFs are not part of a data pull
		}
		opts.Known = novelty.NewIndex(cfg)
	}
	return newOracle(ref, set, atoms, dir, opts)
}

// New assembles an oracle from loaded parts: the reference tables and a
// CGCNN set whose models are named after checkpoints of Surrogates()
// (Options.Checkpoints is ignored). Without a set the oracle gives
// reference and structure values only, and does not check elements
// against atom features.
func New(ref *reference.DB, set *cgcnn.Set, opts Options) (*Oracle, error) {
	var atoms *cgcnn.AtomFeatures
	if set != nil {
		atoms = set.AtomFeatures()
	}
	return newOracle(ref, set, atoms, "", opts)
}

func newOracle(ref *reference.DB, set *cgcnn.Set, atoms *cgcnn.AtomFeatures, dir string, opts Options) (*Oracle, error) {
	if ref == nil {
		return nil, errors.New("oracle: no reference tables")
	}
	o := &Oracle{ref: ref, set: set, atoms: atoms, opts: opts, own: newOwnModels(dir, opts)}
	if set != nil {
		for _, m := range set.Models() {
			s, ok := surrogateByCheckpoint(m.Name)
			if !ok {
				return nil, fmt.Errorf("oracle: CGCNN model %q is not a property checkpoint (%s)", m.Name, checkpointList())
			}
			if (m.Task == cgcnn.Classification) != (s.Property == "metal_probability") {
				return nil, fmt.Errorf("oracle: CGCNN model %q is a %s model", m.Name, m.Task)
			}
			o.surrogates = append(o.surrogates, s)
		}
	}
	if o.opts.Workers <= 0 {
		o.opts.Workers = runtime.GOMAXPROCS(0)
	}
	if o.opts.MaxHullElements <= 0 {
		o.opts.MaxHullElements = DefaultMaxHullElements
	}
	hulls, err := referenceHulls(ref)
	if err != nil {
		return nil, err
	}
	o.hulls = hulls
	return o, nil
}

// referenceHulls is an empty hull cache over the reference phases.
func referenceHulls(ref *reference.DB) (*hull.Cache, error) {
	hulls, err := hull.NewCache(ref.HullEntries())
	if err != nil {
		return nil, fmt.Errorf("oracle: reference phases: %w", err)
	}
	return hulls, nil
}

// Cold returns an oracle sharing o's tables and checkpoints that has built
// no hull diagram yet: o's cost on a chemical system it has not seen, for
// timing the oracle as a campaign meets it.
func (o *Oracle) Cold() (*Oracle, error) {
	hulls, err := referenceHulls(o.ref)
	if err != nil {
		return nil, err
	}
	c := *o
	c.hulls = hulls
	return &c, nil
}

// checkpointNames validates Options.Checkpoints, defaulting to all.
func checkpointNames(names []string) ([]string, error) {
	if names == nil {
		for _, s := range surrogates {
			names = append(names, s.Checkpoint)
		}
		return names, nil
	}
	for _, n := range names {
		if _, ok := surrogateByCheckpoint(n); !ok {
			return nil, fmt.Errorf("oracle: unknown checkpoint %q (%s)", n, checkpointList())
		}
	}
	return names, nil
}

func checkpointList() string {
	s := "known: "
	for i, sg := range surrogates {
		if i > 0 {
			s += ", "
		}
		s += sg.Checkpoint
	}
	return s
}

// Reference returns the oracle's reference tables.
func (o *Oracle) Reference() *reference.DB { return o.ref }

// Surrogates returns the loaded CGCNN checkpoints.
func (o *Oracle) Surrogates() []Surrogate { return append([]Surrogate(nil), o.surrogates...) }
