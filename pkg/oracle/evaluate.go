package oracle

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crucible-sci/crucible/pkg/cgcnn"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/novelty"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

// Reason is why a candidate is invalid, or what could not be evaluated for
// a valid one: a stable code to count by and a detail to read.
type Reason struct {
	Code   crystal.ReasonCode `json:"code"`
	Detail string             `json:"detail"`
}

// Reason codes the oracle adds to crystal's (overlap, too_many_atoms, …).
const (
	// ReasonUnsupportedElement (invalid): an element without CGCNN atom
	// features (atom_init.json).
	ReasonUnsupportedElement crystal.ReasonCode = "unsupported_element"
	// ReasonSurrogateInput (invalid): CGCNN cannot featurise the structure
	// (an atom without neighbours within 8 Å).
	ReasonSurrogateInput crystal.ReasonCode = "surrogate_input"

	// ReasonTooManyElements (warning): more elements than
	// Options.MaxHullElements for a stability calculation.
	ReasonTooManyElements crystal.ReasonCode = "too_many_elements"
	// ReasonNoReferencePhases (warning): an element is in no reference
	// phase, so its hull would be its elemental reference alone.
	ReasonNoReferencePhases crystal.ReasonCode = "no_reference_phases"
	// ReasonNoFormationEnergy (warning): neither a reference nor a
	// surrogate formation energy (the checkpoint is not loaded).
	ReasonNoFormationEnergy crystal.ReasonCode = "no_formation_energy"
	// ReasonHull (warning): the hull calculation failed, e.g. an extra
	// entry reusing a reference id with other data.
	ReasonHull crystal.ReasonCode = "hull"
	// ReasonSurrogateOutput (warning): a checkpoint returned a non-finite
	// value, left out.
	ReasonSurrogateOutput crystal.ReasonCode = "surrogate_output"
	// ReasonKnownStructures (warning): the structure could not be compared
	// with the known structures (a source unreadable, a cell the matcher
	// cannot reduce); it is classified by formula alone.
	ReasonKnownStructures crystal.ReasonCode = "known_structures"
)

// Request is one structure to evaluate.
type Request struct {
	Structure *crystal.Structure
	// StatedFormula, when set, is the formula given with the structure
	// (an LLM's answer); it must agree with the sites (formula_mismatch).
	StatedFormula string
	// Hull asks for the stability calculation.
	Hull bool
	// Extra are phases added to the reference phases for this request's
	// hull (formation energies per atom), e.g. a campaign's stable finds.
	// Only those within the candidate's chemical system matter; their ids
	// must not reuse a reference id ("mpef-<row>", "ref-<element>") with
	// other data. When some lie within the system, the request's diagram
	// is built anew from the cached one's entries and these (milliseconds
	// even for five-element systems); the cached diagram is not changed.
	Extra []hull.Entry
	// Properties names the properties of Crucible's own surrogates
	// (OwnProperties: dielectric_constant, piezo_max_dielectric,
	// piezo_max_eij, conductivity, piezo_max_dij) to predict; the CGCNN
	// and structure properties are always predicted. Other names are
	// ignored, so a task's Required() list can be passed as it is.
	Properties []string

	// formationEnergy, set by the relax tier, replaces CGCNN's formation
	// energy (which it keeps as its Surrogate).
	formationEnergy *Value
	// relaxed, set by the relax tier: the values take the relax tier's
	// calibration (Options.RelaxCalibration) instead of the screen's.
	relaxed bool
}

// Result is the oracle's verdict on one structure.
type Result struct {
	// Formula is the reduced formula of the sites; "" without a structure.
	Formula string `json:"formula"`
	// Valid: every validity check passed.
	Valid bool `json:"valid"`
	// Class is the bonding class of the composition (crystal.BondingClass:
	// ionic, metal_rich, intermetallic, …), "" without a chemistry verdict.
	Class crystal.BondingClass `json:"class,omitempty"`
	// Reasons say why the structure is invalid.
	Reasons []Reason `json:"reasons,omitempty"`
	// Predicted reports that the structure was evaluated (surrogates,
	// reference values, stability): every structure that can be
	// featurised, valid or not. Only an unreadable structure, a physically
	// impossible one (overlapping atoms, a cell too dense, exploded or too
	// thin to measure) or one the surrogates cannot take (an element
	// without atom features, more atoms than the validity limit) is not.
	Predicted bool `json:"predicted"`
	// Warnings say what could not be evaluated for a predicted structure
	// (stability, a surrogate output).
	Warnings []Reason `json:"warnings,omitempty"`
	// OxidationStates is the best charge-neutral assignment found, the
	// mean state per element symbol (fractional only with mixed valence).
	OxidationStates map[string]float64 `json:"oxidation_states,omitempty"`
	// Properties by canonical name. A structure that was not Predicted has
	// only the exact structure properties (density, volume_per_atom).
	Properties map[string]Value `json:"properties,omitempty"`
	// Known: the reduced formula is in the reference tables (also
	// reported for invalid structures, for memorisation rates).
	Known bool `json:"known"`
	// Novelty is what a predicted structure is with respect to the known
	// compounds: new, a new polymorph, known by formula or by structure
	// (Options.Known), or an ordered mixture of known phases (with Hull:
	// a new formula above the hull whose facet is its isovalent end
	// members, novelty.OrderedMixture).
	Novelty *messages.Novelty `json:"novelty,omitempty"`
	// Stability is set when asked for and computable.
	Stability *Stability `json:"stability,omitempty"`
	// SpaceGroup is the structure's space group at the default tolerances
	// (0.01 Å, 5°), found once per structure for every structure that could
	// be read; nil when none is found.
	SpaceGroup *spacegroup.Name `json:"space_group,omitempty"`
}

// Stability is the position of a candidate relative to the convex hull of
// its chemical system.
type Stability struct {
	// EAboveHull is FormationEnergy − HullEnergy (eV/atom); negative when
	// the candidate lies below the known hull.
	EAboveHull float64 `json:"e_above_hull"`
	// HullEnergy is the hull's formation energy at the candidate's
	// composition (eV/atom).
	HullEnergy float64 `json:"hull_energy_per_atom"`
	// Decomposition maps the reduced formulas of the stable phases the
	// composition decomposes into to their fractions of the atoms.
	Decomposition map[string]float64 `json:"decomposition"`
	// FormationEnergy is the candidate's formation energy per atom used,
	// and FormationEnergySource where it came from.
	FormationEnergy       float64 `json:"formation_energy_per_atom"`
	FormationEnergySource Source  `json:"formation_energy_source"`
	// TieSpread is the formation energy's (Value.TieSpread), which
	// EAboveHull inherits: the hull energy at the composition does not
	// depend on it.
	TieSpread float64 `json:"tie_spread,omitempty"`
	// Calibrated is the measured error of EAboveHull where it rests on a
	// surrogate formation energy (Options.Calibration["e_above_hull"]).
	Calibrated *Calibrated `json:"calibrated,omitempty"`
	// System is the chemical system, "Cl-Na".
	System string `json:"system"`
	// ReferenceEAboveHull is the Materials Project's own energy above hull
	// for a known formula (mp_e_hull, lowest polymorph), for comparison:
	// it comes from another snapshot of the database than the formation
	// energies, so the two may differ slightly; EAboveHull is the value
	// consistent with the reference phases.
	ReferenceEAboveHull *float64 `json:"reference_e_above_hull,omitempty"`
}

// Evaluate evaluates a batch of structures. Validity checks, CGCNN
// inference (one featurisation per structure shared by every checkpoint)
// and stability run on up to Options.Workers goroutines. Every structure
// that can be featurised is predicted, valid or not (Result.Predicted).
// Failures of one structure are in its Result (reasons, warnings); the
// error is only the context's, when it is cancelled.
func (o *Oracle) Evaluate(ctx context.Context, reqs []Request) ([]Result, error) {
	results := make([]Result, len(reqs))
	reports := make([]*crystal.ValidityReport, len(reqs))
	if err := o.parallel(ctx, len(reqs), func(i int) {
		results[i], reports[i] = o.validate(reqs[i])
	}); err != nil {
		return nil, err
	}

	var structs []*crystal.Structure
	var which []int
	for i := range reqs {
		if results[i].Predicted {
			structs = append(structs, reqs[i].Structure)
			which = append(which, i)
		}
	}
	preds := make([]cgcnn.Prediction, len(reqs))
	if o.set != nil && len(structs) > 0 {
		out, err := o.set.PredictWithTieSpread(ctx, structs, o.opts.Workers)
		if err != nil {
			return nil, fmt.Errorf("oracle: %w", err)
		}
		for k, i := range which {
			preds[i] = out[k]
		}
	}

	if err := o.parallel(ctx, len(reqs), func(i int) {
		if results[i].Predicted {
			o.complete(&results[i], reports[i], reqs[i], preds[i])
		}
	}); err != nil {
		return nil, err
	}
	o.completeExternal(ctx, reqs, results)
	return results, nil
}

// parallel calls f(0) … f(n−1) on up to Options.Workers goroutines and
// returns the context's error if it is cancelled meanwhile.
func (o *Oracle) parallel(ctx context.Context, n int, f func(i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(o.opts.Workers, n)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				f(i)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("oracle: %w", err)
	}
	return nil
}

// blocking are the reasons a structure gets no prediction: it cannot be
// read, is physically impossible, or cannot be featurised within the
// validity limits. The others (the chemistry verdict, a stated formula
// that disagrees) leave the structure invalid but predicted.
var blocking = map[crystal.ReasonCode]bool{
	crystal.ReasonUnreadable:    true,
	crystal.ReasonOverlap:       true,
	crystal.ReasonBadCell:       true,
	crystal.ReasonVolumePerAtom: true,
	crystal.ReasonTooManyAtoms:  true,
	ReasonUnsupportedElement:    true,
	ReasonSurrogateInput:        true,
}

// validate runs the validity checks and fills what needs no model: the
// formula, Known, class, oxidation states and the structure properties.
func (o *Oracle) validate(req Request) (Result, *crystal.ValidityReport) {
	var res Result
	if req.Structure == nil {
		res.Reasons = []Reason{{Code: crystal.ReasonUnreadable, Detail: "no structure"}}
		return res, nil
	}
	opt := o.opts.Validity
	opt.ExpectedFormula = req.StatedFormula
	rep, err := crystal.Validate(req.Structure, opt)
	if err != nil {
		res.Reasons = []Reason{{Code: crystal.ReasonUnreadable, Detail: err.Error()}}
		return res, nil
	}
	res.Formula = rep.ReducedFormula
	res.Known = o.ref.Known(rep.ReducedFormula)
	res.SpaceGroup = req.Structure.SpaceGroupName(spacegroup.Options{})
	res.Class = rep.Class()
	res.OxidationStates = rep.OxidationStates()
	for _, c := range rep.Failed() {
		res.Reasons = append(res.Reasons, Reason{Code: c.Code, Detail: c.Detail})
	}
	var unsupported []string
	for _, el := range req.Structure.Composition().Elements() {
		if o.atoms != nil && !o.atoms.Has(el) {
			unsupported = append(unsupported, el.Symbol())
		}
	}
	if len(unsupported) > 0 {
		res.Reasons = append(res.Reasons, Reason{
			Code:   ReasonUnsupportedElement,
			Detail: "no CGCNN atom features for " + strings.Join(unsupported, ", "),
		})
	}
	res.Valid = len(res.Reasons) == 0
	res.Predicted = true
	for _, r := range res.Reasons {
		res.Predicted = res.Predicted && !blocking[r.Code]
	}
	res.Properties = map[string]Value{}
	if isFinite(rep.Density) {
		res.Properties["density"] = Value{Value: rep.Density, Unit: task.UnitOf("density"), Source: SourceStructure}
	}
	if isFinite(rep.VolumePerAtom) {
		res.Properties["volume_per_atom"] = Value{Value: rep.VolumePerAtom, Unit: task.UnitOf("volume_per_atom"), Source: SourceStructure}
	}
	return res, rep
}

// complete adds the surrogate and reference values and the stability of a
// predicted structure.
func (o *Oracle) complete(res *Result, rep *crystal.ValidityReport, req Request, pred cgcnn.Prediction) {
	if o.set != nil {
		if pred.Err != nil {
			// Context errors end Evaluate before this; what is left is the
			// structure's (cgcnn.ErrInvalidStructure).
			res.Valid, res.Predicted = false, false
			res.Reasons = append(res.Reasons, Reason{Code: ReasonSurrogateInput, Detail: pred.Err.Error()})
			return
		}
		for k, s := range o.surrogates {
			v := s.Value(pred.Values[k])
			if !isFinite(v) {
				res.Warnings = append(res.Warnings, Reason{Code: ReasonSurrogateOutput,
					Detail: fmt.Sprintf("%s predicted %v for %s", s.Checkpoint, v, s.Property)})
				continue
			}
			res.Properties[s.Property] = Value{Value: v, Unit: task.UnitOf(s.Property), Source: SourceCGCNN, Uncertainty: s.Uncertainty(v),
				TieSpread: s.TieSpread(v, pred.Low[k], pred.High[k])}
		}
	}
	if fe := req.formationEnergy; fe != nil {
		v := *fe
		if sur, ok := res.Properties["formation_energy_per_atom"]; ok {
			v.Surrogate = &sur.Value
		}
		res.Properties["formation_energy_per_atom"] = v
	}
	res.Novelty = o.classify(res, req.Structure)
	// A new polymorph's values are its own: the reference values are the
	// known polymorph's.
	useReference := !o.opts.SurrogateOnly && res.Novelty.Class != messages.NoveltyNewPolymorph
	if useReference {
		for name, rv := range o.ref.Properties(res.Formula) {
			if name == "e_above_hull" { // a hull quantity: see Stability
				continue
			}
			v := Value{Value: rv.Value, Unit: rv.Unit, Source: SourceReference}
			if sur, ok := res.Properties[name]; ok {
				v.Surrogate = &sur.Value
			}
			res.Properties[name] = v
		}
	}
	// The metal rule first, so that a model taking the band gap sees a
	// metal's gap of 0 (outside a dielectric constant's domain); the
	// calibration before the estimate of piezo_max_dij, so that the
	// calibrated errors of its inputs propagate into it.
	MetalRule(res.Properties)
	o.completeOwn(res, req)
	cal := o.opts.Calibration
	if req.relaxed {
		cal = o.opts.RelaxCalibration
	}
	calibrate(res.Properties, cal)
	if wants(req)[DerivedDij] && !o.external(DerivedDij) {
		o.estimateDij(res)
	}
	if req.Hull {
		comp := req.Structure.Composition()
		st, hr, warn := o.stability(comp, res.Formula, res.Properties, req.Extra, useReference)
		if st != nil && (st.FormationEnergySource == SourceCGCNN || st.FormationEnergySource == SourceM3GNet) {
			if c, ok := cal["e_above_hull"]; ok {
				st.Calibrated = &c
			}
		}
		res.Stability = st
		if warn != nil {
			res.Warnings = append(res.Warnings, *warn)
		}
		if st != nil && res.Novelty.Novel() {
			if m := novelty.OrderedMixture(comp, hr, novelty.MixtureOptions{}); m.Mixture {
				res.Novelty.Class = messages.NoveltyOrderedMixture
				res.Novelty.EndMembers = st.Decomposition
			}
		}
	}
}

// classify says what the structure is with respect to the known
// compounds: by structure where Options.Known holds structures of its
// formula, else by formula (known or new).
func (o *Oracle) classify(res *Result, s *crystal.Structure) *messages.Novelty {
	byFormula := &messages.Novelty{Class: messages.NoveltyNew}
	if res.Known {
		byFormula.Class = messages.NoveltyKnownFormula
	}
	if o.opts.Known == nil {
		return byFormula
	}
	v, err := o.opts.Known.Classify(s)
	if err != nil {
		res.Warnings = append(res.Warnings, Reason{Code: ReasonKnownStructures, Detail: err.Error()})
		return byFormula
	}
	n := &messages.Novelty{}
	switch v.Kind {
	case novelty.Known:
		n.Class, n.Match, n.RMS = messages.NoveltyKnownStructure, v.Match.String(), v.RMS
	case novelty.NewPolymorph:
		n.Class = messages.NoveltyNewPolymorph
		for _, p := range v.Polymorphs {
			n.Polymorphs = append(n.Polymorphs, p.String())
		}
	case novelty.KnownFormula:
		n.Class = messages.NoveltyKnownFormula
	default:
		// The index's formula counts come from the formation-energy and
		// hull tables; Known covers every reference table.
		n.Class = byFormula.Class
	}
	return n
}

// stability places the candidate relative to the hull of its chemical
// system: the reference phases plus the extra entries within the system.
func (o *Oracle) stability(comp crystal.Composition, formula string, props map[string]Value, extra []hull.Entry, useReference bool) (*Stability, hull.Result, *Reason) {
	els := comp.Elements()
	if len(els) > o.opts.MaxHullElements {
		return nil, hull.Result{}, &Reason{Code: ReasonTooManyElements,
			Detail: fmt.Sprintf("%d elements, at most %d for a stability calculation", len(els), o.opts.MaxHullElements)}
	}
	var orphans []string
	for _, el := range els {
		if !o.ref.HasPhases(el) {
			orphans = append(orphans, el.Symbol())
		}
	}
	if len(orphans) > 0 {
		return nil, hull.Result{}, &Reason{Code: ReasonNoReferencePhases,
			Detail: "no reference phase contains " + strings.Join(orphans, ", ") + ": the hull would be meaningless"}
	}
	fe, ok := props["formation_energy_per_atom"]
	if !ok {
		return nil, hull.Result{}, &Reason{Code: ReasonNoFormationEnergy,
			Detail: "no formation energy: the formula is not in the reference tables and the formation-energy checkpoint is not loaded"}
	}
	d, err := o.hulls.Diagram(els...)
	if err == nil {
		d, err = withExtra(d, els, extra)
	}
	var r hull.Result
	if err == nil {
		r, err = d.Query(comp, fe.Value)
	}
	if err != nil {
		return nil, hull.Result{}, &Reason{Code: ReasonHull, Detail: err.Error()}
	}
	st := &Stability{
		EAboveHull: r.EAboveHull, HullEnergy: r.HullEnergy,
		Decomposition:   make(map[string]float64, len(r.Decomposition)),
		FormationEnergy: fe.Value, FormationEnergySource: fe.Source, TieSpread: fe.TieSpread,
		System: comp.ChemicalSystem(),
	}
	for _, ph := range r.Decomposition {
		st.Decomposition[ph.Composition.ReducedFormula()] += ph.Fraction
	}
	if useReference {
		if v, ok := o.ref.Property("e_above_hull", formula); ok {
			st.ReferenceEAboveHull = &v.Value
		}
	}
	return st, r, nil
}

// withExtra returns d, or, when some extra entries lie within its system, a
// new diagram of d's entries and those (the cached d is shared and stays
// unchanged).
func withExtra(d *hull.Diagram, els []crystal.Element, extra []hull.Entry) (*hull.Diagram, error) {
	in := func(el crystal.Element) bool { return slices.Contains(els, el) }
	var add []hull.Entry
	for _, e := range extra {
		// An empty composition is inside too: hull.New rejects it.
		if e.Composition.WithinElements(in) {
			add = append(add, e)
		}
	}
	if len(add) == 0 {
		return d, nil
	}
	nd, err := hull.New(append(d.Entries(), add...), hull.WithElements(els...))
	if err != nil {
		return nil, fmt.Errorf("extra entries: %w", err)
	}
	return nd, nil
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
