// Package calibrate measures the oracle's error on the structures it is
// actually given, and stores the measurement.
//
// The surrogates' published errors (CGCNN: 0.039 eV/atom for the
// formation energy) are test errors on relaxed Materials Project
// structures. A candidate is not relaxed: it is built from a prototype
// with ionic radii. Measure builds known compounds of the reference
// tables exactly as the evolve generator builds seeds and candidates
// (evolve.BuildKnown: the prototype builder, the same filters), predicts
// them with the surrogates alone (no reference lookup), and compares the
// predictions with the compounds' reference values. The errors per
// property — mean absolute error, bias, and the 68 % and 95 % quantiles
// of the absolute error — are a Calibration, stored as a versioned JSON
// file with the set it was measured on and the checksums of the models.
//
// The 68 % quantile is the calibrated standard error σ: the campaign's
// screen and judge require a constraint, and the stability threshold, to
// be met by k σ.
package calibrate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Schema is the version of the calibration file format.
const Schema = 1

// FileName is the calibration file's name in a directory.
const FileName = "calibration-v1.json"

// EnvFile names the environment variable that points at a calibration
// file, first in the lookup order (see Locate).
const EnvFile = "CRUCIBLE_CALIBRATION"

// TierScreen is the oracle tier of the surrogates on unrelaxed candidate
// structures.
const TierScreen = "screen"

// DefaultPerProperty is the default number of known compounds measured per
// property.
const DefaultPerProperty = 300

// ErrNoCalibration is returned by Find when no calibration file exists in
// the lookup order.
var ErrNoCalibration = errors.New("no calibration")

// ErrStale is returned by Check when a model changed since the calibration
// was measured.
var ErrStale = errors.New("calibration is stale")

// Stats are one property's errors, prediction − reference, in the
// property's unit.
type Stats struct {
	Unit string `json:"unit"`
	// N is the number of compounds.
	N int `json:"n"`
	// MAE is the mean absolute error, Bias the mean signed error.
	MAE  float64 `json:"mae"`
	Bias float64 `json:"bias"`
	// Q68 and Q95 are the 68 % and 95 % quantiles of the absolute error;
	// Q68 is the calibrated standard error.
	Q68 float64 `json:"q68"`
	Q95 float64 `json:"q95"`
	// Derived names the property these errors are taken from, where they
	// are not measured apart (the energy above hull inherits the formation
	// energy's: the hull energy at a composition does not depend on the
	// candidate).
	Derived string `json:"derived,omitempty"`
	// Log10 marks errors taken in log10 of the property (decades), as
	// Crucible's own surrogates predict it (MeasureOwn): an evaluation
	// scales them to its value to first order, ln 10 · value · error.
	Log10 bool `json:"log10,omitempty"`
	// Excluded counts the built compounds that gave no error, by reason
	// (ExcludedOutsideDomain, ExcludedZeroBySymmetry).
	Excluded map[string]int `json:"excluded,omitempty"`
}

// Tier is the calibration of one oracle tier.
type Tier struct {
	// Properties maps a canonical property name to its errors.
	Properties map[string]Stats `json:"properties"`
	// Uncalibrated maps the tier's other surrogate properties to why they
	// have no calibration (no reference values to compare with).
	Uncalibrated map[string]string `json:"uncalibrated,omitempty"`
}

// Set describes the compounds a calibration was measured on.
type Set struct {
	Description string `json:"description"`
	// PerProperty is the most compounds measured per property.
	PerProperty int `json:"per_property"`
	// Formulas are the compounds, sorted; Checksum is the SHA-256 of
	// their newline-joined list.
	Formulas []string `json:"formulas"`
	Checksum string   `json:"checksum"`
	// Prototypes counts the compounds per prototype they were built in.
	Prototypes map[string]int `json:"prototypes"`
	// Surrogates are the sets Crucible's own surrogates were measured
	// on (MeasureOwn), by property.
	Surrogates map[string]OwnSet `json:"surrogates,omitempty"`
	// Relaxed are the compounds the relax tier was measured on
	// (MeasureRelax), sorted.
	Relaxed []string `json:"relaxed,omitempty"`
}

// Calibration is a measurement of the oracle's error, per tier and
// property.
type Calibration struct {
	Schema     int       `json:"schema"`
	MeasuredAt time.Time `json:"measured_at"`
	Set        Set       `json:"set"`
	// Models maps a CGCNN checkpoint to the SHA-256 of its file, and an
	// own surrogate (OwnModelKey) to that of its model file's form.
	Models map[string]string `json:"models"`
	Tiers  map[string]Tier   `json:"tiers"`
}

// Sigma returns the calibrated standard error (Q68) of a property in a
// tier, and whether there is one.
func (c *Calibration) Sigma(tier, property string) (float64, bool) {
	st, ok := c.Stats(tier, property)
	return st.Q68, ok
}

// Stats returns a property's errors in a tier.
func (c *Calibration) Stats(tier, property string) (Stats, bool) {
	if c == nil {
		return Stats{}, false
	}
	t, ok := c.Tiers[tier]
	if !ok {
		return Stats{}, false
	}
	st, ok := t.Properties[property]
	return st, ok && st.N > 0
}

// Options tune Measure.
type Options struct {
	// PerProperty is the most compounds measured per property (default
	// DefaultPerProperty).
	PerProperty int
	// Seed orders the reference formulas before taking the first
	// PerProperty with a value (a hash of seed and formula), so the set is
	// a deterministic sample across the table.
	Seed uint64
	// Now stamps the calibration (default time.Now).
	Now func() time.Time
}

// calibrated are the properties with reference values a surrogate
// predicts.
var calibrated = []string{"formation_energy_per_atom", "band_gap", "bulk_modulus", "shear_modulus"}

// Measure measures the screen tier: surrogates is an oracle with the
// surrogates alone (oracle.Options.SurrogateOnly), db the reference tables,
// modelDir the directory of the checkpoints (for their checksums).
func Measure(ctx context.Context, surrogates *oracle.Oracle, db *reference.DB, modelDir string, opts Options) (*Calibration, error) {
	if opts.PerProperty <= 0 {
		opts.PerProperty = DefaultPerProperty
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	formulas := uniqueSorted(db.Formulas())
	key := func(f string) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", opts.Seed, f)
		return h.Sum64()
	}
	slices.SortStableFunc(formulas, func(a, b string) int { return cmp.Compare(key(a), key(b)) })

	// Take, per property, the first PerProperty buildable compounds with
	// a reference value.
	type item struct {
		formula string
		seed    evolve.Seed
	}
	var items []item
	index := map[string]int{}
	count := map[string]int{}
	built := map[string]bool{}
	for _, f := range formulas {
		need := false
		for _, p := range calibrated {
			if _, ok := db.Property(p, f); ok && count[p] < opts.PerProperty {
				need = true
			}
		}
		if !need {
			continue
		}
		if _, tried := built[f]; tried {
			continue
		}
		s, ok := evolve.BuildKnown(f)
		built[f] = ok
		if !ok {
			continue
		}
		for _, p := range calibrated {
			if _, ok := db.Property(p, f); ok && count[p] < opts.PerProperty {
				count[p]++
			}
		}
		index[f] = len(items)
		items = append(items, item{f, s})
		if done := !slices.ContainsFunc(calibrated, func(p string) bool { return count[p] < opts.PerProperty }); done {
			break
		}
	}
	if len(items) == 0 {
		return nil, errors.New("calibrate: no known compound could be built")
	}
	reqs := make([]oracle.Request, len(items))
	for i, it := range items {
		reqs[i] = oracle.Request{Structure: it.seed.Structure}
	}
	results, err := surrogates.Evaluate(ctx, reqs)
	if err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	errs := map[string][]float64{}
	taken := map[string]int{}
	for i, it := range items {
		r := results[i]
		for _, p := range calibrated {
			ref, ok := db.Property(p, it.formula)
			if !ok || taken[p] >= opts.PerProperty {
				continue
			}
			v, ok := r.Properties[p]
			if !ok || v.Source != oracle.SourceCGCNN {
				continue
			}
			taken[p]++
			errs[p] = append(errs[p], v.Value-ref.Value)
		}
	}
	screen := Tier{Properties: map[string]Stats{}, Uncalibrated: map[string]string{}}
	for _, p := range calibrated {
		if len(errs[p]) > 0 {
			screen.Properties[p] = statsOf(task.UnitOf(p), errs[p])
		}
	}
	if ef, ok := screen.Properties["formation_energy_per_atom"]; ok {
		ef.Derived = "formation_energy_per_atom"
		ef.Unit = task.UnitOf("e_above_hull")
		screen.Properties["e_above_hull"] = ef
	}
	models := map[string]string{}
	for _, s := range surrogates.Surrogates() {
		if !slices.Contains(calibrated, s.Property) {
			screen.Uncalibrated[s.Property] = "no reference values in the shipped tables"
		}
		sum, err := fileSHA256(filepath.Join(modelDir, s.Checkpoint+".pth.tar"))
		if err != nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		models[s.Checkpoint] = sum
	}
	set := Set{
		Description: fmt.Sprintf("known compounds of the reference tables (formation-energy formulas ordered by an FNV-1a hash with seed %d), built as seeds and candidates are (evolve.BuildKnown: prototype library, best site fit, valid), the first %d with a reference value per property; predicted by the surrogates alone, compared with the reference values (formation energy: lowest polymorph; band gap and moduli: median)", opts.Seed, opts.PerProperty),
		PerProperty: opts.PerProperty, Prototypes: map[string]int{},
	}
	for _, it := range items {
		set.Formulas = append(set.Formulas, it.formula)
		set.Prototypes[it.seed.Prototype]++
	}
	sort.Strings(set.Formulas)
	h := sha256.Sum256([]byte(strings.Join(set.Formulas, "\n")))
	set.Checksum = hex.EncodeToString(h[:])
	return &Calibration{
		Schema: Schema, MeasuredAt: opts.Now().UTC(), Set: set, Models: models,
		Tiers: map[string]Tier{TierScreen: screen},
	}, nil
}

// statsOf summarises signed errors.
func statsOf(unit string, e []float64) Stats {
	abs := make([]float64, len(e))
	sum, sumAbs := 0.0, 0.0
	for i, x := range e {
		abs[i] = math.Abs(x)
		sum += x
		sumAbs += abs[i]
	}
	sort.Float64s(abs)
	n := float64(len(e))
	return Stats{Unit: unit, N: len(e), MAE: sumAbs / n, Bias: sum / n, Q68: quantile(abs, 0.68), Q95: quantile(abs, 0.95)}
}

// quantile is the q-quantile of sorted x by linear interpolation between
// order statistics (numpy's default, "linear").
func quantile(x []float64, q float64) float64 {
	if len(x) == 1 {
		return x[0]
	}
	h := q * float64(len(x)-1)
	i := int(math.Floor(h))
	if i >= len(x)-1 {
		return x[len(x)-1]
	}
	return x[i] + (h-float64(i))*(x[i+1]-x[i])
}

func uniqueSorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Check returns ErrStale, naming the models, when a checkpoint in
// modelDir differs from the one the calibration was measured with, or is
// in use without having been measured.
func (c *Calibration) Check(modelDir string, checkpoints []string) error {
	var changed []string
	for _, name := range checkpoints {
		sum, err := fileSHA256(filepath.Join(modelDir, name+".pth.tar"))
		if err != nil {
			return fmt.Errorf("calibration: %w", err)
		}
		if c.Models[name] != sum {
			changed = append(changed, name)
		}
	}
	if len(changed) > 0 {
		return fmt.Errorf("%w: %s changed since it was measured (run crucible calibrate)", ErrStale, strings.Join(changed, ", "))
	}
	return nil
}

// ForOracle is the tier's calibration as oracle.Options.Calibration takes
// it; nil when the tier is not calibrated.
func (c *Calibration) ForOracle(tier string) map[string]oracle.Calibrated {
	if c == nil {
		return nil
	}
	t, ok := c.Tiers[tier]
	if !ok {
		return nil
	}
	out := map[string]oracle.Calibrated{}
	for name, s := range t.Properties {
		if s.N > 0 {
			out[name] = oracle.Calibrated{Tier: tier, MAE: s.MAE, Bias: s.Bias, Q68: s.Q68, Q95: s.Q95, Log10: s.Log10}
		}
	}
	return out
}

// ForData finds the calibration of a data directory (Find) and checks it
// against the checkpoints in use (Check). No calibration is not an error:
// the result is then nil, and the oracle keeps the published errors.
func ForData(dataDir, modelDir string, checkpoints []string) (*Calibration, string, error) {
	c, path, err := Find(dataDir)
	if errors.Is(err, ErrNoCalibration) {
		return nil, "", nil
	}
	if err != nil {
		return nil, path, err
	}
	if err := c.Check(modelDir, checkpoints); err != nil {
		return nil, path, fmt.Errorf("%s: %w", path, err)
	}
	return c, path, nil
}
