package surrogate

import (
	"fmt"
	"math"
	"slices"
)

// HeldOut are a model's fold models: the model refitted k times, each
// time without one fold of its data set's grouped folds (the folds that
// calibrate its uncertainty: polymorphs of a formula, or for conductivity
// compositions linked by a source, kept together). For a formula of the
// data set, For returns the fold model that never saw it, so that the
// formula's prediction is out of sample, as a candidate's is.
type HeldOut struct {
	models []*Model
	fold   map[string]int // reduced formula → its fold
	ref    map[string]float64
}

// NewHeldOut fits the fold models of m on its data set in the data
// directory dir: the same features (the data set's DFT band gap where the
// model takes one), boosting parameters and seed as m's training, k
// grouped folds (k < 2 means 5).
func NewHeldOut(m *Model, dir string, k int) (*HeldOut, error) {
	if k < 2 {
		k = 5
	}
	ds, err := LoadDataset(m.Property, dir)
	if err != nil {
		return nil, err
	}
	X, err := featurizeAll(ds.Samples, m.Groups)
	if err != nil {
		return nil, err
	}
	n := len(ds.Samples)
	y := make([]float64, n)
	keys := make([]string, n)
	by := map[string][]float64{}
	for i, s := range ds.Samples {
		y[i], keys[i] = math.Log10(s.Target), s.Group
		f := s.Composition.ReducedFormula()
		by[f] = append(by[f], s.Target)
	}
	fold, err := Folds(n, k, m.Training.Seed, keys)
	if err != nil {
		return nil, err
	}
	h := &HeldOut{fold: map[string]int{}, ref: map[string]float64{}}
	for i, s := range ds.Samples {
		f := s.Composition.ReducedFormula()
		if g, ok := h.fold[f]; ok && g != fold[i] {
			h.fold[f] = -1 // in two folds: no model is out of sample
		} else if !ok {
			h.fold[f] = fold[i]
		}
	}
	for f, v := range by {
		h.ref[f] = median(slices.Clone(v))
	}
	for f := range k {
		var tx [][]float64
		var ty []float64
		for i := range y {
			if fold[i] != f {
				tx = append(tx, X[i])
				ty = append(ty, y[i])
			}
		}
		p := m.Training.Params
		p.Seed = m.Training.Seed + uint64(f)
		ens, _, err := Fit(tx, ty, p)
		if err != nil {
			return nil, fmt.Errorf("%s fold %d: %w", m.Property, f, err)
		}
		fm := *m
		fm.Ensemble = *ens
		h.models = append(h.models, &fm)
	}
	return h, nil
}

// Formulas are the reduced formulas of the data set that a fold model
// predicts out of sample, sorted.
func (h *HeldOut) Formulas() []string {
	var out []string
	for f, g := range h.fold {
		if g >= 0 {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// For returns the fold model that was fitted without the formula and the
// formula's value in the data set (the median over its samples); false
// for a formula outside the data set or split across folds.
func (h *HeldOut) For(formula string) (*Model, float64, bool) {
	g, ok := h.fold[formula]
	if !ok || g < 0 {
		return nil, 0, false
	}
	return h.models[g], h.ref[formula], true
}
