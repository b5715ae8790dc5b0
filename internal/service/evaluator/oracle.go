package evaluator

import (
	"context"
	"sort"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

// HierarchicalOracle is the production oracle: validity checks, exact
// reference lookup, CGCNN surrogates and the convex hull (pkg/oracle).
type HierarchicalOracle struct {
	Oracle *oracle.Oracle
}

// Evaluate implements Oracle.
func (h HierarchicalOracle) Evaluate(ctx context.Context, items []Item) ([]Outcome, error) {
	reqs := make([]oracle.Request, len(items))
	for i, it := range items {
		reqs[i] = oracle.Request{Structure: it.Structure, StatedFormula: it.StatedFormula, Hull: true, Extra: it.Extra, Properties: it.Properties}
	}
	res, err := h.Oracle.Evaluate(ctx, reqs)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(res))
	for i := range res {
		out[i] = outcome(&res[i])
	}
	return out, nil
}

// FindEntries turns a campaign's finds into hull entries, as the
// evaluator gives them to the oracle (Item.Extra); a find whose formula
// does not parse (it always does: the proposer wrote it) is left out
// rather than failing the batch.
func FindEntries(finds []store.Find) []hull.Entry {
	if len(finds) == 0 {
		return nil
	}
	out := make([]hull.Entry, 0, len(finds))
	for _, f := range finds {
		c, err := crystal.ParseFormula(f.Formula)
		if err != nil {
			continue
		}
		out = append(out, hull.Entry{ID: "campaign-" + f.ID, Composition: c, EnergyPerAtom: f.EnergyPerAtom})
	}
	return out
}

func outcome(r *oracle.Result) Outcome {
	o := Outcome{Valid: r.Valid, Known: r.Known, Novelty: r.Novelty, SpaceGroup: r.SpaceGroup, Properties: make(map[string]messages.PropertyValue, len(r.Properties))}
	for _, x := range r.Reasons {
		o.Reasons = append(o.Reasons, messages.Reason{Code: string(x.Code), Detail: x.Detail})
	}
	for _, x := range r.Warnings {
		o.Warnings = append(o.Warnings, messages.Reason{Code: string(x.Code), Detail: x.Detail})
	}
	if len(r.OxidationStates) > 0 {
		o.OxidationStates = make(map[string]float64, len(r.OxidationStates))
		for k, v := range r.OxidationStates {
			o.OxidationStates[k] = v
		}
	}
	names := make([]string, 0, len(r.Properties))
	for name := range r.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := r.Properties[name]
		o.Properties[name] = messages.PropertyValue{Value: v.Value, Unit: v.Unit, Source: string(v.Source), Uncertainty: v.Uncertainty, TieSpread: v.TieSpread, Surrogate: v.Surrogate,
			MetalProbability: v.MetalProbability, Metallic: v.Metallic, Calibrated: calibrated(v.Calibrated)}
	}
	if s := r.Stability; s != nil {
		e, h := s.EAboveHull, s.HullEnergy
		o.EAboveHull, o.HullEnergy, o.Decomposition = &e, &h, s.Decomposition
		o.EAboveHullCalibrated = calibrated(s.Calibrated)
	}
	return o
}

func calibrated(c *oracle.Calibrated) *messages.Calibrated {
	if c == nil {
		return nil
	}
	return &messages.Calibrated{Tier: c.Tier, MAE: c.MAE, Bias: c.Bias, Q68: c.Q68, Q95: c.Q95, Log10Q68: c.Log10Q68}
}

// RelaxingOracle is the production oracle with its relax tier: the
// M3GNet potential, FIRE with a cell filter, MP-compatible formation
// energies (oracle.Relaxer).
type RelaxingOracle struct {
	HierarchicalOracle
	Relaxer *oracle.Relaxer
}

// Relax implements RelaxOracle.
func (r RelaxingOracle) Relax(ctx context.Context, it Item) (RelaxOutcome, error) {
	req := oracle.Request{Structure: it.Structure, StatedFormula: it.StatedFormula, Hull: true, Extra: it.Extra, Properties: it.Properties}
	res, rx, err := r.Oracle.EvaluateRelaxed(ctx, r.Relaxer, req)
	if err != nil {
		if ctx.Err() != nil {
			return RelaxOutcome{}, ctx.Err()
		}
		return RelaxOutcome{Failed: &messages.Reason{Code: ReasonRelax, Detail: err.Error()}}, nil
	}
	return RelaxOutcome{
		Outcome: outcome(&res),
		Relaxation: &messages.Relaxation{
			Structure: messages.StructureOf(rx.Structure), Converged: rx.Converged, Steps: rx.Steps, FMax: rx.FMax,
			InitialEnergy: rx.InitialEnergy, Energy: rx.Energy, EnergyPerAtom: rx.EnergyPerAtom(),
			FormationEnergy: rx.FormationEnergy, Scheme: rx.Scheme.String(),
		},
	}, nil
}
