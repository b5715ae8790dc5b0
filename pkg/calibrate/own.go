package calibrate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/surrogate"
)

// Reasons a built known compound gives no error for an own surrogate
// (Stats.Excluded).
const (
	// ExcludedOutsideDomain: the model is not defined for the built
	// structure (the oracle's band gap below the model's least, a metal).
	ExcludedOutsideDomain = "outside_domain"
	// ExcludedZeroBySymmetry: the built structure has an inversion centre,
	// so the model gives 0 exactly where the compound's known structure is
	// piezoelectric; no log10 error exists.
	ExcludedZeroBySymmetry = "zero_by_symmetry"
)

// OwnFolds is the number of grouped folds of the own surrogates' held-out
// models (surrogate.NewHeldOut), as their training calibrates them.
const OwnFolds = 5

// MeasureOwn adds Crucible's own surrogates (pkg/surrogate: the static
// dielectric constant, the piezoelectric coefficient, the conductivity) to
// the screen tier of c. They are measured as the CGCNN ones are, on known
// compounds built exactly as candidates are (evolve.BuildKnown), with one
// difference: each model was trained on the very compounds its data set
// holds, so each compound is predicted by the fold model fitted without
// it (surrogate.NewHeldOut, OwnFolds grouped folds), and its error is out
// of sample as a candidate's is. A model that takes the band gap gets the
// one the oracle gives the built structure (surrogates alone, metal rule
// applied). A composition-only model (conductivity) is measured on the
// data set's formulas whether or not they can be built: no structure
// enters its prediction. The errors are in log10 of the property, as the models
// predict it (Stats.Log10); the reference is the data set's value of the
// formula (the median over its entries). models are the surrogates in
// use, dataDir their data directory; opts.PerProperty and opts.Seed pick
// the compounds as Measure does.
func MeasureOwn(ctx context.Context, surrogates *oracle.Oracle, models []*surrogate.Model, dataDir string, c *Calibration, opts Options) error {
	if opts.PerProperty <= 0 {
		opts.PerProperty = DefaultPerProperty
	}
	screen, ok := c.Tiers[TierScreen]
	if !ok {
		return errors.New("calibrate: no screen tier to add the own surrogates to")
	}
	key := func(f string) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", opts.Seed, f)
		return h.Sum64()
	}
	type item struct {
		model   int
		formula string
		seed    evolve.Seed
		fold    *surrogate.Model
		ref     float64
	}
	var items []item
	held := make([]*surrogate.HeldOut, len(models))
	for i, m := range models {
		h, err := surrogate.NewHeldOut(m, dataDir, OwnFolds)
		if err != nil {
			return fmt.Errorf("calibrate %s: %w", m.Property, err)
		}
		held[i] = h
		formulas := h.Formulas()
		slices.SortStableFunc(formulas, func(a, b string) int { return cmp.Compare(key(a), key(b)) })
		n := 0
		for _, f := range formulas {
			if n == opts.PerProperty {
				break
			}
			fm, ref, _ := h.For(f)
			if compositionOnly(m) {
				// No structure enters the prediction: every formula of the
				// data set is a candidate-like input, buildable or not.
				items = append(items, item{model: i, formula: f, fold: fm, ref: ref})
				n++
				continue
			}
			s, ok := evolve.BuildKnown(f)
			if !ok {
				continue
			}
			items = append(items, item{model: i, formula: f, seed: s, fold: fm, ref: ref})
			n++
		}
	}
	// The oracle's band gap of each built structure, for the models that
	// take one.
	var reqs []oracle.Request
	for _, it := range items {
		if it.seed.Structure != nil {
			reqs = append(reqs, oracle.Request{Structure: it.seed.Structure})
		}
	}
	predicted, err := surrogates.Evaluate(ctx, reqs)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	errs := make([][]float64, len(models))
	excluded := make([]map[string]int, len(models))
	formulas := make([][]string, len(models))
	next := 0
	for _, it := range items {
		in := surrogate.Input{Properties: map[string]float64{}}
		if st := it.seed.Structure; st != nil {
			in.Structure, in.Composition = st, st.Composition()
			if gap, ok := predicted[next].Properties["band_gap"]; ok {
				in.Properties["band_gap"] = gap.Value
			}
			next++
		} else {
			comp, err := crystal.ParseFormula(it.formula)
			if err != nil {
				return fmt.Errorf("calibrate %s: %w", it.fold.Property, err)
			}
			in.Composition = comp
		}
		v, u, err := it.fold.Predict(in)
		switch {
		case errors.Is(err, surrogate.ErrOutsideDomain):
			addCount(&excluded[it.model], ExcludedOutsideDomain)
			continue
		case err != nil:
			return fmt.Errorf("calibrate %s on %s: %w", it.fold.Property, it.formula, err)
		case v == 0 && u == 0 && it.fold.ZeroIfCentrosymmetric:
			addCount(&excluded[it.model], ExcludedZeroBySymmetry)
			continue
		}
		errs[it.model] = append(errs[it.model], math.Log10(v)-math.Log10(it.ref))
		formulas[it.model] = append(formulas[it.model], it.formula)
	}
	if c.Set.Surrogates == nil {
		c.Set.Surrogates = map[string]OwnSet{}
	}
	for i, m := range models {
		delete(screen.Uncalibrated, m.Property)
		fp, err := fingerprint(m)
		if err != nil {
			return err
		}
		c.Models[OwnModelKey(m.Property)] = fp
		if len(errs[i]) == 0 {
			screen.Uncalibrated[m.Property] = "no known compound of its data set could be built and predicted"
			continue
		}
		st := statsOf(m.Unit, errs[i])
		st.Log10, st.Excluded = true, excluded[i]
		screen.Properties[m.Property] = st
		slices.Sort(formulas[i])
		h := sha256.Sum256([]byte(strings.Join(formulas[i], "\n")))
		c.Set.Surrogates[m.Property] = OwnSet{Data: m.Training.File, Folds: OwnFolds, Formulas: formulas[i], Checksum: hex.EncodeToString(h[:])}
	}
	c.Tiers[TierScreen] = screen
	return nil
}

// compositionOnly reports whether a model predicts from the composition
// alone (no structure, no band gap), so that how a structure is built
// cannot change its prediction.
func compositionOnly(m *surrogate.Model) bool {
	return !m.NeedsStructure() && len(m.Inputs) == 0
}

// OwnSet is the set an own surrogate was calibrated on.
type OwnSet struct {
	// Data is the model's data file; Folds the grouped folds of its
	// held-out models.
	Data  string `json:"data"`
	Folds int    `json:"folds"`
	// Formulas are the compounds with an error, sorted; Checksum the
	// SHA-256 of their newline-joined list.
	Formulas []string `json:"formulas"`
	Checksum string   `json:"checksum"`
}

// OwnModelKey is the key of an own surrogate in Calibration.Models.
func OwnModelKey(property string) string { return "surrogate/" + property }

// fingerprint is the SHA-256 of the model's file form.
func fingerprint(m *surrogate.Model) (string, error) {
	h := sha256.New()
	if err := m.Save(h); err != nil {
		return "", fmt.Errorf("calibrate: fingerprint of %s: %w", m.Property, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func addCount(m *map[string]int, k string) {
	if *m == nil {
		*m = map[string]int{}
	}
	(*m)[k]++
}
