// Package report gathers what a person looks at of a campaign — its
// discovery curve, hit and stability rates over time, Pareto front and
// discoveries — from a local run's folder or from an installation, and
// renders it: plots as SVG (the console and the HTML report) or PNG
// (gonum/plot), and the self-contained HTML report of "crucible report".
package report

import (
	"sort"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// ratePoints bounds the points of the rates-over-time series.
const ratePoints = 400

// Data is a campaign as the console and the report show it.
type Data struct {
	Campaign string `json:"campaign"`
	Task     string `json:"task"`
	State    string `json:"state"`
	Budget   int    `json:"budget"`
	// Evaluated counts the proposed candidates evaluated (seeds left out).
	Evaluated  int               `json:"evaluated"`
	Hits       int               `json:"hits"`
	StableHits int               `json:"stable_hits"`
	NStable    int               `json:"n_stable"`
	Discovered int               `json:"discovered"`
	AUDC       float64           `json:"audc"`
	Summary    *messages.Summary `json:"summary,omitempty"`
	// Curve are the 1-based evaluation indices of the novel stable
	// candidates (MADE's N_stable(t) steps); CurveSource says where it
	// came from: "store" (recorded by the reflector) or "evaluations"
	// (derived by discovery.CurveOf).
	Curve       []int  `json:"curve"`
	CurveSource string `json:"curve_source"`
	// Rates are the cumulative hit and stability rates over the
	// evaluations (at most ratePoints points).
	Rates []discovery.RatePoint `json:"rates"`
	// Objectives are the Pareto front's axes: the task's first two
	// constraints' properties (fewer when the task has fewer).
	Objectives []messages.ParetoObjective `json:"objectives"`
	// Points are the novel hits placed on the objectives; Front those
	// no other dominates (discovery.ParetoFront).
	Points []discovery.Point `json:"points"`
	Front  []discovery.Point `json:"front"`
	// Discoveries are in order of generation, then candidate id.
	Discoveries []Discovery `json:"discoveries"`
}

// Discovery is one row of the discoveries table: an accepted verdict's
// candidate, its key numbers and the judge's report.
type Discovery struct {
	ID         string `json:"id"`
	Formula    string `json:"formula"`
	Generation int    `json:"generation"`
	Operator   string `json:"operator,omitempty"`
	// EAboveHull (eV/atom) and its uncertainty: the calibrated error
	// (Q68) when a calibration is in use, else the formation energy's
	// published surrogate error; nil when unknown.
	EAboveHull      *float64 `json:"e_above_hull,omitempty"`
	EAboveHullError *float64 `json:"e_above_hull_error,omitempty"`
	Score           float64  `json:"score"`
	// Properties are the candidate's properties; Constrained names those
	// the task constrains, in the task's order.
	Properties  map[string]messages.PropertyValue `json:"properties"`
	Constrained []string                          `json:"constrained"`
	Novelty     string                            `json:"novelty,omitempty"`
	Tier        string                            `json:"tier,omitempty"`
	Report      string                            `json:"report"`
	Checks      []messages.Check                  `json:"checks"`
}

// Input is what Build needs of a campaign.
type Input struct {
	Campaign, Task, State string
	// Budget is the campaign's budget (0: the number of evaluations).
	Budget     int
	Objectives []messages.ParetoObjective
	// Evaluations are the campaign's evaluations (seeds are left out).
	Evaluations []*messages.Evaluation
	// Discoveries are the judge's accepted verdicts.
	Discoveries []*messages.Verdict
	// Curve is the stored discovery curve; nil derives it from the
	// evaluations.
	Curve   []int
	Summary *messages.Summary
}

// Build computes a campaign's plots' series and its discoveries table.
func Build(in Input) *Data {
	d := &Data{Campaign: in.Campaign, Task: in.Task, State: in.State, Budget: in.Budget, Summary: in.Summary,
		Curve: in.Curve, CurveSource: "store"}
	if d.Curve == nil {
		d.Curve, d.CurveSource = discovery.CurveOf(in.Evaluations), "evaluations"
	}
	if d.Curve == nil {
		d.Curve = []int{}
	}
	d.Rates = discovery.RatesOf(in.Evaluations, ratePoints)
	if d.Rates == nil {
		d.Rates = []discovery.RatePoint{}
	}
	for _, ev := range in.Evaluations {
		if ev.Candidate.Seed {
			continue
		}
		d.Evaluated++
		if ev.Feasible {
			d.Hits++
			if ev.Stable {
				d.StableHits++
			}
		}
	}
	if d.Budget <= 0 {
		d.Budget = d.Evaluated
	}
	d.NStable = len(d.Curve)
	d.AUDC = discovery.AUDC(d.Curve, d.Budget)
	d.Objectives = in.Objectives
	if len(d.Objectives) > 2 {
		d.Objectives = d.Objectives[:2]
	}
	d.Points = []discovery.Point{}
	for _, ev := range in.Evaluations {
		if ev.Candidate.Seed || !ev.Feasible || !ev.Novel {
			continue
		}
		p := discovery.Point{ID: ev.ID, Formula: ev.Candidate.Formula, Values: map[string]float64{}}
		for _, o := range d.Objectives {
			if v, ok := ev.Properties[o.Property]; ok {
				p.Values[o.Property] = v.Value
			}
		}
		d.Points = append(d.Points, p)
	}
	d.Front = discovery.ParetoFront(d.Points, d.Objectives)
	if d.Front == nil {
		d.Front = []discovery.Point{}
	}
	d.Discoveries = make([]Discovery, 0, len(in.Discoveries))
	for _, v := range in.Discoveries {
		d.Discoveries = append(d.Discoveries, discoveryOf(v))
	}
	sort.SliceStable(d.Discoveries, func(i, j int) bool {
		a, b := d.Discoveries[i], d.Discoveries[j]
		return a.Generation < b.Generation || a.Generation == b.Generation && a.ID < b.ID
	})
	d.Discovered = len(d.Discoveries)
	return d
}

// formationEnergy is the property whose error bounds E_hull's when no
// calibration is in use (E_hull is the formation energy less the hull's).
const formationEnergy = "formation_energy_per_atom"

func discoveryOf(v *messages.Verdict) Discovery {
	ev := &v.Evaluation
	r := Discovery{ID: v.ID, Formula: v.Formula, Generation: ev.Candidate.Generation, Operator: ev.Candidate.Operator,
		EAboveHull: ev.EAboveHull, Score: ev.Score, Properties: ev.Properties, Tier: ev.Tier, Report: v.Report, Checks: v.Checks,
		Constrained: []string{}}
	if r.Properties == nil {
		r.Properties = map[string]messages.PropertyValue{}
	}
	if r.Formula == "" {
		r.Formula = ev.Candidate.Formula
	}
	if ev.Novelty != nil {
		r.Novelty = ev.Novelty.Class
	}
	switch {
	case ev.EAboveHullCalibrated != nil:
		q := ev.EAboveHullCalibrated.Q68
		r.EAboveHullError = &q
	default:
		if p, ok := ev.Properties[formationEnergy]; ok && p.Uncertainty > 0 {
			u := p.Uncertainty
			r.EAboveHullError = &u
		}
	}
	for _, m := range ev.Margins {
		r.Constrained = append(r.Constrained, m.Property)
	}
	return r
}
