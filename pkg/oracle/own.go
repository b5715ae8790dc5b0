package oracle

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/surrogate"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Sources of Crucible's own surrogates (pkg/surrogate).
const (
	// SourceSurrogate: predicted by a surrogate trained in Crucible
	// (gradient-boosted trees, pkg/surrogate), its uncertainty calibrated
	// by cross-validation.
	SourceSurrogate Source = "surrogate"
	// SourceEstimate: piezo_max_dij, estimated from piezo_max_eij and the
	// bulk and shear moduli (surrogate.EstimateDij).
	SourceEstimate Source = "estimate"
	// SourceSymmetry: zero by symmetry (a piezoelectric coefficient of a
	// crystal with an inversion centre); exact.
	SourceSymmetry Source = "symmetry"
)

// Reason codes of Crucible's own surrogates (warnings).
const (
	// ReasonNoModel: a property's model file is missing (or trained on
	// other data) and was not trained on first use; the detail says how
	// to train it.
	ReasonNoModel crystal.ReasonCode = "no_model"
	// ReasonOutsideDomain: the model is not defined for the candidate (a
	// band gap below 0.1 eV for a dielectric constant: a metal).
	ReasonOutsideDomain crystal.ReasonCode = "outside_domain"
)

// DerivedDij is piezo_max_dij, estimated from piezo_max_eij, bulk_modulus
// and shear_modulus.
const DerivedDij = "piezo_max_dij"

// OwnProperties lists the properties of Crucible's own surrogates, in
// order: the trained models (surrogate.Properties) and piezo_max_dij.
func OwnProperties() []string {
	var out []string
	for _, p := range surrogate.Properties() {
		out = append(out, p.Name)
	}
	return append(out, DerivedDij)
}

// modelSlot is one own surrogate, loaded (or trained) on first need.
type modelSlot struct {
	once sync.Once
	m    *surrogate.Model
	err  error
}

// ownModels holds the own surrogates and their reference values.
type ownModels struct {
	dir   string // data directory, "" when built by New
	train bool
	log   func(string, ...any)
	slots map[string]*modelSlot

	refOnce sync.Once
	ref     map[string]map[string]refValue // property → reduced formula → value
	refErr  error
}

// refValue is a property's value for a known formula in a surrogate's
// training data: the median over its entries (polymorphs, or for
// conductivity the room-temperature measurements aggregated per
// composition), with their count and range.
type refValue struct {
	value, lo, hi float64
	count         int
}

func newOwnModels(dir string, opts Options) *ownModels {
	o := &ownModels{dir: dir, train: opts.TrainModels, log: opts.ModelLog, slots: map[string]*modelSlot{}}
	for _, p := range surrogate.Properties() {
		s := &modelSlot{}
		if m, ok := opts.Models[p.Name]; ok {
			s.once.Do(func() { s.m = m })
		} else if dir == "" {
			s.once.Do(func() {
				s.err = fmt.Errorf("%w for %s: the oracle was built without a data directory", surrogate.ErrNoModel, p.Name)
			})
		}
		o.slots[p.Name] = s
	}
	return o
}

// model returns the surrogate of a property, loading or training it on
// first call.
func (o *ownModels) model(property string) (*surrogate.Model, error) {
	s, ok := o.slots[property]
	if !ok {
		return nil, fmt.Errorf("%w: %q", surrogate.ErrUnknownProperty, property)
	}
	s.once.Do(func() {
		if o.train {
			s.m, _, s.err = surrogate.Ensure(property, o.dir, surrogate.EnsureOptions{Log: o.log})
		} else {
			s.m, _, s.err = surrogate.Find(property, o.dir)
		}
	})
	return s.m, s.err
}

// reference returns the training data's value of a property for a reduced
// formula. The data sets are read on first call (a few hundred ms).
func (o *ownModels) reference(property, formula string) (refValue, bool) {
	if o.dir == "" {
		return refValue{}, false
	}
	o.refOnce.Do(func() { o.ref, o.refErr = loadOwnReference(o.dir) })
	v, ok := o.ref[property][formula]
	return v, ok
}

// loadOwnReference reads the surrogates' data sets into reference values
// per reduced formula. A data set that cannot be read gives no reference
// values (its model then fails to load or train with the reason).
func loadOwnReference(dir string) (map[string]map[string]refValue, error) {
	out := map[string]map[string]refValue{}
	var errs []error
	for _, p := range surrogate.Properties() {
		ds, err := surrogate.LoadDataset(p.Name, dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		by := map[string][]float64{}
		for _, s := range ds.Samples {
			f := s.Composition.ReducedFormula()
			by[f] = append(by[f], s.Target)
		}
		m := make(map[string]refValue, len(by))
		for f, v := range by {
			sort.Float64s(v)
			med := v[len(v)/2]
			if len(v)%2 == 0 {
				med = (v[len(v)/2-1] + v[len(v)/2]) / 2
			}
			m[f] = refValue{value: med, lo: v[0], hi: v[len(v)-1], count: len(v)}
		}
		out[p.Name] = m
	}
	return out, errors.Join(errs...)
}

// wants reports which own properties a request asks for: those named in
// it, with piezo_max_dij bringing piezo_max_eij.
func wants(req Request) map[string]bool {
	w := map[string]bool{}
	for _, p := range req.Properties {
		w[p] = true
	}
	if w[DerivedDij] {
		w["piezo_max_eij"] = true
	}
	return w
}

// completeOwn adds the own surrogates' values a request asks for to a
// predicted result whose CGCNN and reference values are in (but not
// piezo_max_dij: see estimateDij).
func (o *Oracle) completeOwn(res *Result, req Request) {
	w := wants(req)
	for _, ext := range o.opts.External {
		delete(w, ext.Model().Property)
	}
	if len(w) == 0 {
		return
	}
	warn := func(code crystal.ReasonCode, format string, args ...any) {
		res.Warnings = append(res.Warnings, Reason{Code: code, Detail: fmt.Sprintf(format, args...)})
	}
	for _, p := range surrogate.Properties() {
		if !w[p.Name] {
			continue
		}
		unit := task.UnitOf(p.Name)
		var model *Value
		m, err := o.own.model(p.Name)
		if err != nil {
			warn(ReasonNoModel, "%v", err)
		} else {
			in := surrogate.Input{Structure: req.Structure, Composition: req.Structure.Composition(),
				Properties: map[string]float64{}}
			if gap, ok := res.Properties["band_gap"]; ok {
				in.Properties["band_gap"] = gap.Value
			}
			v, u, err := m.Predict(in)
			switch {
			case errors.Is(err, surrogate.ErrOutsideDomain):
				warn(ReasonOutsideDomain, "%v", err)
			case err != nil:
				warn(ReasonSurrogateOutput, "%v", err)
			case !isFinite(v) || !isFinite(u):
				warn(ReasonSurrogateOutput, "%s predicted %v ± %v", p.Name, v, u)
			default:
				src := SourceSurrogate
				if v == 0 && u == 0 && m.ZeroIfCentrosymmetric {
					src = SourceSymmetry
				}
				model = &Value{Value: v, Unit: unit, Source: src, Uncertainty: u}
			}
		}
		// Zero by symmetry is exact for this structure, where a formula's
		// reference value may be another polymorph's.
		exact := model != nil && model.Source == SourceSymmetry
		if rv, ok := o.own.reference(p.Name, res.Formula); ok && !o.opts.SurrogateOnly && !exact {
			v := Value{Value: rv.value, Unit: unit, Source: SourceReference}
			if model != nil {
				v.Surrogate = &model.Value
			}
			res.Properties[p.Name] = v
		} else if model != nil {
			res.Properties[p.Name] = *model
		}
	}
}

// external reports whether a plug-in model server provides the property.
func (o *Oracle) external(property string) bool {
	for _, ext := range o.opts.External {
		if ext.Model().Property == property {
			return true
		}
	}
	return false
}

// estimateDij adds piezo_max_dij from piezo_max_eij and the moduli.
func (o *Oracle) estimateDij(res *Result) {
	var in [3]surrogate.Estimate
	for i, name := range []string{"piezo_max_eij", "bulk_modulus", "shear_modulus"} {
		v, ok := res.Properties[name]
		if !ok {
			res.Warnings = append(res.Warnings, Reason{Code: ReasonNoModel,
				Detail: fmt.Sprintf("piezo_max_dij needs %s, which has no value", name)})
			return
		}
		in[i] = surrogate.Estimate{Value: v.Value, Uncertainty: v.Uncertainty}
	}
	d, err := surrogate.EstimateDij(in[0], in[1], in[2])
	if err != nil {
		res.Warnings = append(res.Warnings, Reason{Code: ReasonSurrogateOutput, Detail: err.Error()})
		return
	}
	src := SourceEstimate
	if e := res.Properties["piezo_max_eij"]; e.Source == SourceSymmetry {
		src = SourceSymmetry
	}
	res.Properties[DerivedDij] = Value{Value: d.Value, Unit: task.UnitOf(DerivedDij), Source: src, Uncertainty: d.Uncertainty}
}

// Prepare loads, or with Options.TrainModels trains, the own surrogates
// the properties need (piezo_max_dij needs piezo_max_eij), so that the
// first evaluation does not wait for them; properties of no own surrogate
// are skipped. The error names each property without a model and how to
// train it.
func (o *Oracle) Prepare(props []string) error {
	var errs []error
	seen := map[string]bool{}
	for _, p := range props {
		if p == DerivedDij {
			p = "piezo_max_eij"
		}
		if _, ok := o.own.slots[p]; !ok || seen[p] {
			continue
		}
		seen[p] = true
		if _, err := o.own.model(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
