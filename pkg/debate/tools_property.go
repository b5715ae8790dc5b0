package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/judge"
)

// MarginReport is one constraint's margin against its uncertainty.
type MarginReport struct {
	Property   string  `json:"property"`
	Constraint string  `json:"constraint"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit,omitempty"`
	Source     string  `json:"source"`
	Missing    bool    `json:"missing,omitempty"`
	// Exact: the value is a lookup or computed from the structure.
	Exact bool `json:"exact"`
	// Sigma is the value's uncertainty (calibrated where a calibration is
	// in use) plus its tie spread; CalibratedTier names the calibration.
	Sigma          float64 `json:"sigma"`
	TieSpread      float64 `json:"tie_spread,omitempty"`
	CalibratedTier string  `json:"calibrated_tier,omitempty"`
	// Margin is the distance from the bound in the property's unit
	// (negative: missed); MarginSigma is Margin/Sigma.
	Margin      float64  `json:"margin"`
	MarginSigma *float64 `json:"margin_sigma,omitempty"`
	// ClearsK: exact and met, or Margin ≥ k σ.
	ClearsK          bool     `json:"clears_k"`
	Metallic         bool     `json:"metallic,omitempty"`
	MetalProbability *float64 `json:"metal_probability,omitempty"`
}

// MarginsReport is the result of constraint_margins.
type MarginsReport struct {
	K       float64        `json:"k"`
	Margins []MarginReport `json:"margins"`
}

var toolConstraintMargins = Tool{
	Name: ToolConstraintMargins,
	Description: "Each constraint of the task: the candidate's value, its source, its uncertainty σ (calibrated where available, tie spread included), " +
		"its margin from the bound in the property's unit and in σ, and whether it clears k σ (k from the campaign unless given).",
	Parameters: json.RawMessage(`{"type":"object","properties":{"k":{"type":"number","description":"standard errors a surrogate margin must clear; the campaign's confidence_k by default"}},"additionalProperties":false}`),
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		var a struct {
			K *float64 `json:"k"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return nil, err
		}
		_, k := threshold(c.Spec)
		if a.K != nil {
			if !(*a.K >= 0) || math.IsInf(*a.K, 0) {
				return nil, fmt.Errorf("k %v is not a non-negative number", *a.K)
			}
			k = *a.K
		}
		return constraintMargins(c, k)
	},
}

func constraintMargins(c *Case, k float64) (*MarginsReport, error) {
	if c.Spec == nil {
		return nil, fmt.Errorf("campaign spec: %w", ErrNoSource)
	}
	ev := c.Evaluation
	rep := &MarginsReport{K: k}
	for _, con := range c.Spec.Task.Constraints {
		m := MarginReport{Property: con.Property, Constraint: con.String()}
		pv, ok := ev.Properties[con.Property]
		if !ok {
			m.Missing = true
			rep.Margins = append(rep.Margins, m)
			continue
		}
		m.Value, m.Unit, m.Source = pv.Value, pv.Unit, pv.Source
		m.Sigma, m.TieSpread = judge.Sigma(con.Property, pv, ev), pv.TieSpread
		if pv.Calibrated != nil {
			m.CalibratedTier = pv.Calibrated.Tier
		}
		m.Exact = m.Sigma == 0 && judge.ExactSource(pv.Source)
		m.Margin = judge.ConfidenceMargin(con, pv.Value)
		m.Metallic, m.MetalProbability = pv.Metallic, pv.MetalProbability
		switch {
		case m.Exact:
			m.ClearsK = m.Margin >= 0
		case m.Sigma > 0 && !math.IsInf(m.Sigma, 0):
			r := m.Margin / m.Sigma
			m.MarginSigma = &r
			m.ClearsK = m.Margin >= k*m.Sigma-1e-9*math.Max(1, k*m.Sigma)
		}
		if m.Metallic {
			m.ClearsK = false
		}
		rep.Margins = append(rep.Margins, m)
	}
	return rep, nil
}

// MetalReport is the result of metal_classifier.
type MetalReport struct {
	// GapTask: the task constrains a band gap.
	GapTask bool `json:"gap_task"`
	// Gaps are the band-gap values and their classifier verdicts.
	Gaps []MetalGap `json:"band_gaps"`
}

// MetalGap is a band-gap value and the metal classifier's verdict.
type MetalGap struct {
	Property         string   `json:"property"`
	Value            float64  `json:"value"`
	Source           string   `json:"source"`
	MetalProbability *float64 `json:"metal_probability,omitempty"`
	Metallic         bool     `json:"metallic"`
	// Surrogate is the regression's gap where the classifier set it to 0.
	Surrogate *float64 `json:"surrogate,omitempty"`
}

var toolMetalClassifier = Tool{
	Name:        ToolMetalClassifier,
	Description: "CGCNN's metal classifier on the candidate: for each band-gap value, the probability that the structure is a metal and whether the gap was set to 0 for it; and whether the task constrains a band gap.",
	Parameters:  noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		rep := &MetalReport{}
		if c.Spec != nil {
			for _, con := range c.Spec.Task.Constraints {
				rep.GapTask = rep.GapTask || isGap(con.Property)
			}
		}
		for name, pv := range c.Evaluation.Properties {
			if isGap(name) {
				rep.Gaps = append(rep.Gaps, MetalGap{Property: name, Value: pv.Value, Source: pv.Source, MetalProbability: pv.MetalProbability, Metallic: pv.Metallic, Surrogate: pv.Surrogate})
			}
		}
		return rep, nil
	},
}

func isGap(property string) bool { return strings.Contains(property, "band_gap") }

// MatchReport is the result of structure_match.
type MatchReport struct {
	Formula string `json:"formula"`
	// Class is the oracle's structure-aware novelty class (new,
	// new_polymorph, known_formula, known_structure, ordered_mixture);
	// empty when the evaluator classified none.
	Class      string             `json:"class,omitempty"`
	Match      string             `json:"match,omitempty"`
	RMS        float64            `json:"rms,omitempty"`
	Polymorphs []string           `json:"polymorphs,omitempty"`
	EndMembers map[string]float64 `json:"end_members,omitempty"`
	// KnownFormula: the formula is in the reference data.
	KnownFormula bool `json:"known_formula"`
	Seed         bool `json:"seed"`
	Novel        bool `json:"novel"`
}

var toolStructureMatch = Tool{
	Name: ToolStructureMatch,
	Description: "Structure-aware match of the candidate against the known compounds (pymatgen StructureMatcher defaults): its novelty class, the matched known structure and RMS, " +
		"the known polymorphs of its formula, and for an ordered mixture of known phases its isovalent end members.",
	Parameters: noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		ev := c.Evaluation
		comp, err := composition(ev)
		if err != nil {
			return nil, err
		}
		rep := &MatchReport{Formula: comp.ReducedFormula(), Seed: ev.Candidate.Seed, Novel: ev.Novel, KnownFormula: ev.Known}
		if c.Sources.Reference != nil {
			rep.KnownFormula = c.Sources.Reference.Known(rep.Formula)
		}
		if n := ev.Novelty; n != nil {
			rep.Class, rep.Match, rep.RMS, rep.Polymorphs, rep.EndMembers = n.Class, n.Match, n.RMS, n.Polymorphs, n.EndMembers
		}
		return rep, nil
	},
}

// HistoryReport is the result of campaign_history.
type HistoryReport struct {
	Discoveries int `json:"discoveries"`
	// SameFormula are earlier discoveries of the candidate's formula
	// (other structures: the proposer keeps repeats out).
	SameFormula []Prior `json:"same_formula"`
	// SameSystem counts earlier discoveries in its chemical system.
	SameSystem int `json:"same_system"`
}

var toolCampaignHistory = Tool{
	Name:        ToolCampaignHistory,
	Description: "The campaign's earlier discoveries: how many, those of the candidate's formula, and how many in its chemical system.",
	Parameters:  noArgs,
	call: func(ctx context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		if c.Sources.History == nil {
			return nil, fmt.Errorf("campaign history: %w", ErrNoSource)
		}
		priors, err := c.Sources.History.Discoveries(ctx, c.Evaluation.Campaign)
		if err != nil {
			return nil, err
		}
		comp, err := composition(c.Evaluation)
		if err != nil {
			return nil, err
		}
		rep := &HistoryReport{SameFormula: []Prior{}}
		for _, p := range priors {
			if p.ID == c.Evaluation.ID {
				continue
			}
			rep.Discoveries++
			pc, err := crystal.ParseFormula(p.Formula)
			if err != nil {
				continue
			}
			if pc.ReducedFormula() == comp.ReducedFormula() {
				rep.SameFormula = append(rep.SameFormula, p)
			}
			if pc.ChemicalSystem() == comp.ChemicalSystem() {
				rep.SameSystem++
			}
		}
		return rep, nil
	},
}
