package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/judge"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Tool names.
const (
	ToolEnergyAboveHull   = "energy_above_hull"
	ToolPhaseSensitivity  = "phase_sensitivity"
	ToolReferencePhases   = "reference_phases"
	ToolPrecursorReaction = "precursor_reaction"
	ToolElementHazards    = "element_hazards"
	ToolConstraintMargins = "constraint_margins"
	ToolMetalClassifier   = "metal_classifier"
	ToolStructureMatch    = "structure_match"
	ToolCampaignHistory   = "campaign_history"
)

// HullReport is the result of energy_above_hull.
type HullReport struct {
	// Tier is the oracle tier of the numbers (screen or relax).
	Tier       string   `json:"tier"`
	EAboveHull *float64 `json:"e_above_hull"`
	Threshold  float64  `json:"stability_threshold"`
	K          float64  `json:"k"`
	// Sigma is E_hull's standard error (eV/atom): the calibrated Q68 where
	// a calibration is in use, else the formation energy's MAE plus tie
	// spread; SigmaSource says which (empty and 0: unknown).
	Sigma       float64 `json:"sigma"`
	SigmaSource string  `json:"sigma_source,omitempty"`
	// MarginSigma is (threshold − E_hull)/σ.
	MarginSigma     *float64           `json:"margin_sigma,omitempty"`
	HullEnergy      *float64           `json:"hull_energy_per_atom,omitempty"`
	FormationEnergy *float64           `json:"formation_energy_per_atom,omitempty"`
	Decomposition   map[string]float64 `json:"decomposition,omitempty"`
	// HullOutlier: further below the hull than SuspiciousBelowHull, the
	// calibrated 95 % error of E_hull (judge.OutlierBound), allows.
	HullOutlier         bool    `json:"hull_outlier"`
	SuspiciousBelowHull float64 `json:"suspicious_below_hull"`
	// ScreenedEAboveHull is the screen's E_hull of a relaxed candidate.
	ScreenedEAboveHull *float64 `json:"screened_e_above_hull,omitempty"`
	RelaxConverged     *bool    `json:"relax_converged,omitempty"`
}

var toolEnergyAboveHull = Tool{
	Name: ToolEnergyAboveHull,
	Description: "Energy above the convex hull of the candidate under the best oracle tier that evaluated it (relaxed if relaxed), " +
		"with the campaign's stability threshold, the calibrated standard error σ, the margin in σ, the decomposition into competing phases, " +
		"and the screen's value of a relaxed candidate.",
	Parameters: noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		return energyAboveHull(c), nil
	},
}

func energyAboveHull(c *Case) HullReport {
	ev := c.Evaluation
	t, k := threshold(c.Spec)
	r := HullReport{Tier: ev.Tier, EAboveHull: ev.EAboveHull, Threshold: t, K: k, HullEnergy: ev.HullEnergy,
		Decomposition: ev.Decomposition, HullOutlier: ev.HullOutlier}
	// The evaluation's bound: the calibrated 95 % error of its E_hull, else
	// the judge's default.
	r.SuspiciousBelowHull, _ = judge.OutlierBound(ev.EAboveHullCalibrated, judge.DefaultSuspiciousBelowHull)
	if r.Tier == "" {
		r.Tier = messages.TierScreen
	}
	if fe, ok := formationEnergy(ev); ok {
		r.FormationEnergy = &fe
	}
	if cal := ev.EAboveHullCalibrated; cal != nil && cal.Q68 > 0 {
		r.Sigma, r.SigmaSource = cal.Q68, "calibrated Q68 of the "+cal.Tier+" tier"
	} else if fe, ok := ev.Properties["formation_energy_per_atom"]; ok && judge.Sigma("formation_energy_per_atom", fe, ev) > 0 {
		r.Sigma, r.SigmaSource = judge.Sigma("formation_energy_per_atom", fe, ev), "formation-energy error of the "+fe.Source+" value (MAE + tie spread)"
	}
	if r.Sigma > 0 && ev.EAboveHull != nil {
		m := (t - *ev.EAboveHull) / r.Sigma
		r.MarginSigma = &m
	}
	if s := ev.Screened; s != nil {
		r.ScreenedEAboveHull = s.EAboveHull
	}
	if ev.Relaxation != nil {
		conv := ev.Relaxation.Converged
		r.RelaxConverged = &conv
	}
	return r
}

// SensitivityReport is the result of phase_sensitivity.
type SensitivityReport struct {
	System string `json:"chemical_system"`
	// ReferenceEAboveHull is the candidate's E_hull against the reference
	// phases alone (the oracle's hull also holds the campaign's finds).
	ReferenceEAboveHull float64 `json:"reference_e_above_hull"`
	// Phases are the competing phases at the candidate's composition and
	// the E_hull the candidate would have without each.
	Phases []PhaseShift `json:"phases"`
	// MaxShift is the largest change of E_hull from leaving one phase out
	// (eV/atom): how much the verdict hangs on one known phase.
	MaxShift float64 `json:"max_shift"`
	// ReferencePhases counts the phases of the system.
	ReferencePhases int `json:"reference_phases"`
}

// PhaseShift is a competing phase and the E_hull without it.
type PhaseShift struct {
	Formula         string  `json:"formula"`
	Fraction        float64 `json:"fraction"`
	FormationEnergy float64 `json:"formation_energy_per_atom"`
	EAboveHullW     float64 `json:"e_above_hull_without"`
}

var toolPhaseSensitivity = Tool{
	Name: ToolPhaseSensitivity,
	Description: "Recomputes the candidate's energy above hull against the reference phases of its chemical system, then again with each competing phase " +
		"of its decomposition left out in turn: how much the stability verdict depends on single known phases.",
	Parameters: noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		return phaseSensitivity(c)
	},
}

// systemHull returns the reference hull of the candidate's system, its
// composition and formation energy.
func systemHull(c *Case) (*hull.Diagram, crystal.Composition, float64, error) {
	if c.Sources.Hulls == nil {
		return nil, crystal.Composition{}, 0, fmt.Errorf("reference hulls: %w", ErrNoSource)
	}
	comp, err := composition(c.Evaluation)
	if err != nil {
		return nil, comp, 0, err
	}
	fe, ok := formationEnergy(c.Evaluation)
	if !ok {
		return nil, comp, 0, fmt.Errorf("the candidate has no formation energy")
	}
	d, err := c.Sources.Hulls.Diagram(comp.Elements()...)
	if err != nil {
		return nil, comp, 0, fmt.Errorf("hull of %s: %w", comp.ChemicalSystem(), err)
	}
	return d, comp, fe, nil
}

func phaseSensitivity(c *Case) (*SensitivityReport, error) {
	d, comp, fe, err := systemHull(c)
	if err != nil {
		return nil, err
	}
	q, err := d.Query(comp, fe)
	if err != nil {
		return nil, err
	}
	entries := d.Entries()
	rep := &SensitivityReport{System: comp.ChemicalSystem(), ReferenceEAboveHull: q.EAboveHull, ReferencePhases: len(entries)}
	for _, p := range q.Decomposition {
		if p.Composition.Len() == 1 && p.EnergyPerAtom == 0 {
			// An elemental reference at zero cannot be left out.
			continue
		}
		var rest []hull.Entry
		for _, e := range entries {
			if e.ID != p.ID {
				rest = append(rest, e)
			}
		}
		dw, err := hull.New(rest, hull.WithElements(comp.Elements()...))
		if err != nil {
			return nil, err
		}
		qw, err := dw.Query(comp, fe)
		if err != nil {
			return nil, err
		}
		rep.Phases = append(rep.Phases, PhaseShift{Formula: phaseFormula(p.Entry), Fraction: p.Fraction, FormationEnergy: p.EnergyPerAtom, EAboveHullW: qw.EAboveHull})
		rep.MaxShift = math.Max(rep.MaxShift, math.Abs(qw.EAboveHull-q.EAboveHull))
	}
	sort.Slice(rep.Phases, func(i, j int) bool { return rep.Phases[i].Fraction > rep.Phases[j].Fraction })
	return rep, nil
}
