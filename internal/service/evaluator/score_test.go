package evaluator

import (
	"math"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

func spec(t *testing.T, tk task.Task) *messages.CampaignSpec {
	t.Helper()
	s := &messages.CampaignSpec{ID: "c", Task: tk, Budget: 10}
	s.ApplyDefaults()
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func f(x float64) *float64 { return &x }

func TestScore(t *testing.T) {
	tk := task.Task{Name: "t", Constraints: []task.Constraint{task.AtLeast("band_gap", 2.5), task.AtMost("formation_energy_per_atom", -1)},
		Elements: task.ElementRules{Exclude: []string{"Pb"}}}
	sp := spec(t, tk)
	props := func(gap, ef float64) map[string]messages.PropertyValue {
		return map[string]messages.PropertyValue{
			"band_gap":                  {Value: gap, Unit: "eV", Source: "cgcnn", Uncertainty: 0.388},
			"formation_energy_per_atom": {Value: ef, Unit: "eV/atom", Source: "cgcnn", Uncertainty: 0.039},
		}
	}
	cases := []struct {
		name                    string
		formula                 string
		out                     Outcome
		seed                    bool
		feasible, stable, novel bool
		score                   float64
		missing                 bool
	}{
		{"hit, stable, novel", "NaCl", Outcome{Valid: true, Properties: props(3.5, -2), EAboveHull: f(0.05),
			SpaceGroup: &spacegroup.Name{Number: 225, Symbol: "Fm-3m"}}, false, true, true, true, 0.7, false},
		{"below the hull counts as stable", "NaCl", Outcome{Valid: true, Properties: props(3.5, -2), EAboveHull: f(-0.1)}, false, true, true, true, 0.7, false},
		// Beyond the screen's error below the hull: a likely surrogate
		// error, not stable (a hull outlier, for the judge to report).
		{"far below the hull is no stable", "NaCl", Outcome{Valid: true, Properties: props(3.5, -2), EAboveHull: f(-0.2)}, false, true, false, true, 0.7, false},
		{"new polymorph of a known formula", "NaCl", Outcome{Valid: true, Known: true, Novelty: &messages.Novelty{Class: messages.NoveltyNewPolymorph},
			Properties: props(3.5, -2), EAboveHull: f(0.05)}, false, true, true, true, 0.7, false},
		{"known structure", "NaCl", Outcome{Valid: true, Known: true, Novelty: &messages.Novelty{Class: messages.NoveltyKnownStructure},
			Properties: props(3.5, -2), EAboveHull: f(0)}, false, true, true, false, 0.7, false},
		{"ordered mixture", "NaLiF2", Outcome{Valid: true, Novelty: &messages.Novelty{Class: messages.NoveltyOrderedMixture},
			Properties: props(3.5, -2), EAboveHull: f(0.05)}, false, true, true, false, 0.7, false},
		{"above the threshold", "NaCl", Outcome{Valid: true, Properties: props(3.5, -2), EAboveHull: f(0.11)}, false, true, false, true, 0.7, false},
		{"gap too small", "NaCl", Outcome{Valid: true, Properties: props(2.0, -2), EAboveHull: f(0)}, false, false, true, true, 0.4, false},
		{"known", "NaCl", Outcome{Valid: true, Known: true, Properties: props(3.5, -2)}, false, true, false, false, 0.7, false},
		{"seed is never novel", "NaCl", Outcome{Valid: true, Properties: props(3.5, -2)}, true, true, false, false, 0.7, false},
		{"excluded element", "PbF2", Outcome{Valid: true, Properties: props(3.5, -2), EAboveHull: f(0)}, false, false, true, true, 0.7, false},
		{"invalid", "NaCl", Outcome{Valid: false, Reasons: []messages.Reason{{Code: "overlap"}}}, false, false, false, false, -1, true},
		// The oracle predicts a structure invalid only by its chemistry:
		// meeting every constraint on the hull, it is still no hit.
		{"invalid chemistry, predicted", "MgF", Outcome{Valid: false, Reasons: []messages.Reason{{Code: "charge_neutrality"}},
			Properties: props(3.5, -2), EAboveHull: f(0)}, false, false, false, false, -1, false},
		{"missing property", "NaCl", Outcome{Valid: true, Properties: map[string]messages.PropertyValue{"band_gap": {Value: 3.5}}}, false, false, false, true, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: tc.formula, Seed: tc.seed}
			ev := Score(sp, c, &tc.out)
			if ev.Feasible != tc.feasible || ev.Stable != tc.stable || ev.Novel != tc.novel {
				t.Errorf("feasible %v stable %v novel %v, want %v %v %v", ev.Feasible, ev.Stable, ev.Novel, tc.feasible, tc.stable, tc.novel)
			}
			outlier := tc.out.Valid && tc.out.EAboveHull != nil && *tc.out.EAboveHull < -0.15
			if ev.HullOutlier != outlier || ev.ForJudge() != (tc.feasible && (tc.stable || outlier) && !tc.seed) {
				t.Errorf("hull outlier %v, for the judge %v", ev.HullOutlier, ev.ForJudge())
			}
			if ev.Novelty != tc.out.Novelty {
				t.Errorf("novelty %+v, want the oracle's %+v", ev.Novelty, tc.out.Novelty)
			}
			if ev.SpaceGroup != tc.out.SpaceGroup {
				t.Errorf("space group %v, want the oracle's %v", ev.SpaceGroup, tc.out.SpaceGroup)
			}
			if tc.name != "missing property" && (ev.Score < tc.score-1e-9 || ev.Score > tc.score+1e-9) {
				t.Errorf("score %v, want %v", ev.Score, tc.score)
			}
			missing := false
			for _, m := range ev.Margins {
				missing = missing || m.Missing
			}
			if missing != tc.missing {
				t.Errorf("missing margins %v, want %v (%+v)", missing, tc.missing, ev.Margins)
			}
			if len(ev.Margins) != 2 {
				t.Errorf("%d margins, want one per constraint", len(ev.Margins))
			}
		})
	}
}

// TestScoreHullOutlierBound: the hull-outlier bound is the calibrated 95 %
// error of the energy above hull; without a calibration it is the judge's
// default, and an evaluation below the hull says so.
func TestScoreHullOutlierBound(t *testing.T) {
	sp := spec(t, task.Task{Name: "t", Constraints: []task.Constraint{task.AtLeast("band_gap", 2.5)}})
	cal := &messages.Calibrated{Tier: "screen", MAE: 0.18, Q68: 0.18, Q95: 0.63}
	for _, tc := range []struct {
		name       string
		e          float64
		cal        *messages.Calibrated
		outlier    bool
		bound      float64
		uncalWarns bool
	}{
		{"calibrated, within the 95 % error", -0.4, cal, false, 0.63, false},
		{"calibrated, beyond it", -0.7, cal, true, 0.63, false},
		{"default bound", -0.4, nil, true, 0.15, true},
		{"default bound, within it", -0.1, nil, false, 0.15, true},
		{"default bound above the hull: no warning", 0.05, nil, false, 0.15, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Outcome{Valid: true, EAboveHull: f(tc.e), EAboveHullCalibrated: tc.cal,
				Properties: map[string]messages.PropertyValue{"band_gap": {Value: 4, Source: "cgcnn", Uncertainty: 0.388}}}
			ev := Score(sp, &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: "NaCl"}, &out)
			if ev.HullOutlier != tc.outlier || ev.HullOutlierBound != tc.bound {
				t.Errorf("outlier %v bound %v, want %v %v", ev.HullOutlier, ev.HullOutlierBound, tc.outlier, tc.bound)
			}
			if ev.HullOutlier && ev.Stable {
				t.Error("a hull outlier counted stable")
			}
			warned := false
			for _, w := range ev.Warnings {
				warned = warned || w.Code == ReasonUncalibratedHullBound
			}
			if warned != tc.uncalWarns {
				t.Errorf("uncalibrated-bound warning %v, want %v (%+v)", warned, tc.uncalWarns, ev.Warnings)
			}
		})
	}
}

// TestScoreLogCalibrated: a value calibrated in log10 (an own surrogate's)
// meets a constraint by k calibrated errors in decades: a conductivity of
// 500 S/cm known to a factor of 8.3 (0.919 decades) is 1 decade inside
// 50–5,000 S/cm, and 100 S/cm only 0.3.
func TestScoreLogCalibrated(t *testing.T) {
	sp := spec(t, task.Task{Name: "t", Constraints: []task.Constraint{task.Between("conductivity", 50, 5000)}})
	for _, tc := range []struct {
		v        float64
		feasible bool
	}{{500, true}, {100, false}, {3000, false}} {
		scale := math.Ln10 * tc.v
		pv := messages.PropertyValue{Value: tc.v, Source: "surrogate", Uncertainty: scale * 0.919,
			Calibrated: &messages.Calibrated{Tier: "screen", Q68: scale * 0.919, Q95: scale * 2.35, Log10Q68: 0.919}}
		out := Outcome{Valid: true, Properties: map[string]messages.PropertyValue{"conductivity": pv}, EAboveHull: f(0)}
		ev := Score(sp, &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: "ZnO"}, &out)
		if ev.Feasible != tc.feasible {
			t.Errorf("conductivity %v: feasible %v, want %v (%+v)", tc.v, ev.Feasible, tc.feasible, ev.Reasons)
		}
	}
}

// TestScoreMetalRule: a band-gap constraint is met only by a structure the
// metal classifier calls non-metallic, even one a metal's gap of 0 would
// satisfy.
func TestScoreMetalRule(t *testing.T) {
	sp := spec(t, task.Task{Name: "t", Constraints: []task.Constraint{task.AtMost("band_gap", 1)}})
	for _, tc := range []struct {
		name     string
		gap      messages.PropertyValue
		feasible bool
	}{
		{"non-metal", messages.PropertyValue{Value: 0.5, Source: "cgcnn", MetalProbability: f(0.2)}, true},
		{"metal", messages.PropertyValue{Value: 0, Source: "cgcnn", MetalProbability: f(0.9), Metallic: true, Surrogate: f(1.7)}, false},
	} {
		out := Outcome{Valid: true, Properties: map[string]messages.PropertyValue{"band_gap": tc.gap}, EAboveHull: f(0)}
		ev := Score(sp, &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: "NaCl"}, &out)
		if ev.Feasible != tc.feasible {
			t.Errorf("%s: feasible %v, want %v (%v)", tc.name, ev.Feasible, tc.feasible, ev.Reasons)
		}
		if !tc.feasible && (len(ev.Reasons) != 1 || ev.Reasons[0].Code != "metallic") {
			t.Errorf("%s: reasons %v", tc.name, ev.Reasons)
		}
	}
}

// TestScoreCalibrated: with calibrated errors a constraint is met, and the
// stability threshold, only by k calibrated standard errors.
func TestScoreCalibrated(t *testing.T) {
	tk := task.Task{Name: "t", Constraints: []task.Constraint{task.AtLeast("band_gap", 2.5)}}
	sp := spec(t, tk)
	cal := &messages.Calibrated{Tier: "screen", MAE: 0.5, Q68: 0.5, Q95: 2}
	ehull := &messages.Calibrated{Tier: "screen", MAE: 0.18, Q68: 0.18, Q95: 0.63}
	for _, tc := range []struct {
		name             string
		gap, e           float64
		k                float64
		feasible, stable bool
	}{
		{"clear by 1σ", 3.1, -0.1, 1, true, true},
		{"gap within 1σ", 2.9, -0.1, 1, false, true},
		{"E_hull within 1σ of the threshold", 3.1, 0.0, 1, true, false},
		{"k = 0.5", 2.9, -0.05, 0.5, true, true},
	} {
		sp.ConfidenceK = tc.k
		out := Outcome{Valid: true, EAboveHull: f(tc.e), EAboveHullCalibrated: ehull, Properties: map[string]messages.PropertyValue{
			"band_gap": {Value: tc.gap, Source: "cgcnn", Uncertainty: 0.5, Calibrated: cal}}}
		ev := Score(sp, &messages.Candidate{ID: "c-g0-c0", Campaign: "c", Formula: "NaCl"}, &out)
		if ev.Feasible != tc.feasible || ev.Stable != tc.stable {
			t.Errorf("%s: feasible %v stable %v, want %v %v (%v)", tc.name, ev.Feasible, ev.Stable, tc.feasible, tc.stable, ev.Reasons)
		}
	}
}
