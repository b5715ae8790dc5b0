package judge

import (
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

var judgedAt = time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC)

// accepted reads a feasible, stable, novel evaluation of Li5P3O10 for the
// Solid-State Electrolytes task (formation energy ≤ −1 eV/atom, band gap ≥
// 2 eV, must contain Li/Na/K/Mg/Ca/Al).
func accepted(t *testing.T) *messages.Evaluation {
	t.Helper()
	data, err := os.ReadFile("testdata/evaluation_accepted.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev messages.Evaluation
	if err := messages.Decode(data, &ev); err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return &ev
}

func electrolyteSpec(t *testing.T) *messages.CampaignSpec {
	t.Helper()
	tk, err := task.ByName("Solid-State Electrolytes")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "sse-1", Task: tk, Budget: 40}
	spec.ApplyDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return spec
}

func ptr(x float64) *float64 { return &x }

func setProperty(ev *messages.Evaluation, name string, pv messages.PropertyValue) {
	props := make(map[string]messages.PropertyValue, len(ev.Properties)+1)
	for k, v := range ev.Properties {
		props[k] = v
	}
	props[name] = pv
	ev.Properties = props
}

// setBandGap gives the candidate a band gap and the margin the oracle would
// compute for the task's band gap ≥ 2 eV.
func setBandGap(ev *messages.Evaluation, v float64, source string, sigma float64) {
	setProperty(ev, "band_gap", messages.PropertyValue{Value: v, Unit: "eV", Source: source, Uncertainty: sigma})
	margins := slices.Clone(ev.Margins)
	for i := range margins {
		if margins[i].Property == "band_gap" {
			margins[i].Value = v
			margins[i].Margin = task.AtLeast("band_gap", 2).Margin(v)
		}
	}
	ev.Margins = margins
	ev.Feasible = true
	for _, m := range margins {
		if m.Margin < 0 {
			ev.Feasible = false
		}
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*messages.Evaluation, *messages.CampaignSpec, *Options)
		failed []string // names of the checks that must fail; none: accepted
		// detail: a check name and a substring of its detail.
		detail [2]string
	}{
		{
			name:   "accepted",
			detail: [2]string{CheckThermodynamics, "competing phases Li4P2O7 (0.7222) + LiPO3 (0.2778)"},
		},
		{
			name: "invalid structure",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Valid, ev.Feasible, ev.Stable = false, false, false
				ev.Reasons = []messages.Reason{{Code: "charge_neutrality", Detail: "no balanced oxidation states"}}
			},
			failed: []string{CheckValidity, CheckConstraints},
			detail: [2]string{CheckValidity, "charge_neutrality: no balanced oxidation states"},
		},
		{
			name: "constraint missed",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 1.5, SourceCGCNN, 0.388)
			},
			failed: []string{CheckConstraints, CheckConfidence},
			detail: [2]string{CheckConstraints, "band_gap = 1.5 eV [cgcnn ± 0.388] against band_gap ≥ 2 eV: Φ = -0.25"},
		},
		{
			name: "marked feasible with a negative margin",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 1.5, SourceCGCNN, 0.388)
				ev.Feasible = true
			},
			failed: []string{CheckConstraints, CheckConfidence},
			detail: [2]string{CheckConstraints, "marked feasible, but, band_gap misses its bound"},
		},
		{
			name: "constraint without a margin",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Margins = ev.Margins[:1]
			},
			failed: []string{CheckConstraints},
			detail: [2]string{CheckConstraints, "no margin for band_gap ≥ 2 eV"},
		},
		{
			name: "unsupported property",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Unsupported = []string{"conductivity"}
			},
			failed: []string{CheckConstraints},
			detail: [2]string{CheckConstraints, "conductivity has no oracle"},
		},
		{
			name: "missing e_above_hull",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull, ev.Stable = nil, false
			},
			failed: []string{CheckThermodynamics},
			detail: [2]string{CheckThermodynamics, "no energy above hull"},
		},
		{
			name: "above the stability threshold",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(0.15)
			},
			failed: []string{CheckThermodynamics},
			detail: [2]string{CheckThermodynamics, "E_hull = 0.15 eV/atom (hull of a cgcnn formation energy ± 0.039 eV/atom) is above the stability threshold 0.1 eV/atom: it would decompose into Li4P2O7 (0.7222) + LiPO3 (0.2778)"},
		},
		{
			name: "exactly at the threshold",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(0.1)
			},
			detail: [2]string{CheckThermodynamics, "E_hull = 0.1 eV/atom"},
		},
		{
			name: "campaign threshold",
			edit: func(ev *messages.Evaluation, spec *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(0.15)
				spec.StabilityThreshold = 0.2
			},
			detail: [2]string{CheckThermodynamics, "≤ the stability threshold 0.2 eV/atom"},
		},
		{
			name: "below the hull",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(-0.05)
			},
			detail: [2]string{CheckThermodynamics, "0.05 eV/atom below the hull of the known phases Li4P2O7 (0.7222) + LiPO3 (0.2778): a candidate new ground state"},
		},
		{
			name: "suspiciously far below the hull",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(-0.2)
			},
			failed: []string{CheckThermodynamics},
			detail: [2]string{CheckThermodynamics, "more than 0.15 eV/atom (the default bound: no calibration of the energy above hull) below the known ground states, 5.128 × the formation energy's error of 0.039 eV/atom"},
		},
		{
			// The calibrated 95 % error replaces the default bound: 0.2
			// below the hull is within it (and clears the threshold by
			// k σ).
			name: "below the hull within the calibrated 95 % error",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(-0.2)
				ev.EAboveHullCalibrated = &messages.Calibrated{Tier: "screen", MAE: 0.18, Q68: 0.18, Q95: 0.63}
			},
			detail: [2]string{CheckThermodynamics, "0.2 eV/atom below the hull of the known phases"},
		},
		{
			name: "beyond the calibrated 95 % error",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(-0.7)
				ev.EAboveHullCalibrated = &messages.Calibrated{Tier: "screen", MAE: 0.18, Q68: 0.18, Q95: 0.63}
			},
			failed: []string{CheckThermodynamics},
			detail: [2]string{CheckThermodynamics, "more than 0.63 eV/atom (the calibrated 95 % error of the energy above hull) below the known ground states"},
		},
		{
			name: "suspicion disabled",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, o *Options) {
				ev.EAboveHull = ptr(-0.2)
				o.SuspiciousBelowHull = math.Inf(1)
			},
			detail: [2]string{CheckThermodynamics, "0.2 eV/atom below the hull"},
		},
		{
			name: "margin within the surrogate error",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.2, SourceCGCNN, 0.388)
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "band_gap = 2.2 eV [cgcnn] ± 0.388: 0.2 eV from its bound (band_gap ≥ 2 eV) = 0.5155σ < 1σ"},
		},
		{
			name: "margin exactly K·σ",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.5, SourceCGCNN, 0.5)
			},
			detail: [2]string{CheckConfidence, "0.5 eV from its bound (band_gap ≥ 2 eV) = 1σ ≥ 1σ"},
		},
		{
			name: "margin K·σ up to rounding",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.388, SourceCGCNN, 0.388) // 2.388 − 2 = 0.3879999999999999
			},
			detail: [2]string{CheckConfidence, "= 1σ ≥ 1σ"},
		},
		{
			name: "margin just under K·σ",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.387, SourceCGCNN, 0.388)
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "= 0.9974σ < 1σ"},
		},
		{
			name: "tie spread adds to σ",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.5, SourceCGCNN, 0.388)
				pv := ev.Properties["band_gap"]
				pv.TieSpread = 0.2
				ev.Properties["band_gap"] = pv
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "band_gap = 2.5 eV [cgcnn] ± 0.588: 0.5 eV from its bound (band_gap ≥ 2 eV) = 0.8503σ < 1σ"},
		},
		{
			name: "K = 2 exactly met",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, o *Options) {
				setBandGap(ev, 2.5, SourceCGCNN, 0.25)
				o.ConfidenceK = 2
			},
			detail: [2]string{CheckConfidence, "= 2σ ≥ 2σ"},
		},
		{
			name: "K = 2 missed",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, o *Options) {
				setBandGap(ev, 2.49, SourceCGCNN, 0.25)
				o.ConfidenceK = 2
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "= 1.96σ < 2σ"},
		},
		{
			name: "reference value is exact",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 2.1, SourceReference, 0)
			},
			detail: [2]string{CheckConfidence, "band_gap = 2.1 eV [reference], exact, 0.1 eV from its bound"},
		},
		{
			name: "surrogate value without uncertainty",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setBandGap(ev, 4, SourceCGCNN, 0)
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "a model value without a usable uncertainty"},
		},
		{
			name: "upper bound within the error",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				setProperty(ev, "formation_energy_per_atom", messages.PropertyValue{Value: -1.02, Unit: "eV/atom", Source: SourceCGCNN, Uncertainty: 0.039})
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "0.02 eV/atom from its bound (formation_energy_per_atom ≤ -1 eV/atom) = 0.5128σ < 1σ"},
		},
		{
			name: "interval: the nearer bound counts",
			edit: func(ev *messages.Evaluation, spec *messages.CampaignSpec, _ *Options) {
				spec.Task.Constraints = []task.Constraint{task.Between("band_gap", 2, 6)}
				setBandGap(ev, 5.8, SourceCGCNN, 0.388)
				ev.Margins = []messages.Margin{{Property: "band_gap", Kind: "interval", Value: 5.8, Margin: 0.05, Weight: 1}}
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "0.2 eV from its bound (band_gap 2–6 eV) = 0.5155σ < 1σ"},
		},
		{
			name: "hull value takes the formation energy's error",
			edit: func(ev *messages.Evaluation, spec *messages.CampaignSpec, _ *Options) {
				spec.Task.Constraints = []task.Constraint{task.AtMost("e_above_hull", 0.05)}
				ev.Margins = []messages.Margin{{Property: "e_above_hull", Kind: "upper", Value: 0.021, Margin: 0.029, Weight: 1}}
			},
			failed: []string{CheckConfidence},
			detail: [2]string{CheckConfidence, "e_above_hull = 0.021 eV/atom [hull] ± 0.039: 0.029 eV/atom from its bound (e_above_hull ≤ 0.05 eV/atom) = 0.7436σ < 1σ"},
		},
		{
			name: "structure value is exact",
			edit: func(ev *messages.Evaluation, spec *messages.CampaignSpec, _ *Options) {
				spec.Task.Constraints = []task.Constraint{task.AtMost("density", 2.5)}
				ev.Margins = []messages.Margin{{Property: "density", Kind: "upper", Value: 2.48, Margin: 0.008, Weight: 1}}
			},
			detail: [2]string{CheckConfidence, "density = 2.48 g/cm³ [structure], exact, 0.02 g/cm³ from its bound"},
		},
		{
			name: "known material",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Known, ev.Novel = true, false
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "Li5P3O10 is in the reference data"},
		},
		{
			name: "repeat of an earlier candidate",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Novel = false
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "an earlier candidate of the campaign had the same formula"},
		},
		{
			name: "seed",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Candidate.Seed = true
				ev.Candidate.ID = messages.SeedCandidateID("sse-1", 0)
				ev.Candidate.Index = 0
				ev.ID = ev.Candidate.ID
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "seed material"},
		},
		{
			name: "known structure",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Known, ev.Novel = true, false
				ev.Novelty = &messages.Novelty{Class: messages.NoveltyKnownStructure, Match: "mp_piezo_dejong2015:mp-9588", RMS: 0.01}
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "matches the known structure mp_piezo_dejong2015:mp-9588"},
		},
		{
			name: "known by formula alone",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Known, ev.Novel = true, false
				ev.Novelty = &messages.Novelty{Class: messages.NoveltyKnownFormula}
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "no structure of it is held"},
		},
		{
			name: "ordered mixture of known phases",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Novel = false
				ev.Novelty = &messages.Novelty{Class: messages.NoveltyOrderedMixture, EndMembers: map[string]float64{"Li3PO4": 0.6, "Li4P2O7": 0.4}}
			},
			failed: []string{CheckNovelty},
			detail: [2]string{CheckNovelty, "isovalent end members Li3PO4 (0.6) + Li4P2O7 (0.4)"},
		},
		{
			name: "new polymorph",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Known = true
				ev.Novelty = &messages.Novelty{Class: messages.NoveltyNewPolymorph, Polymorphs: []string{"golden:x"}}
			},
			detail: [2]string{CheckNovelty, "a new polymorph of Li5P3O10"},
		},
		{
			name: "new by structure",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.Novelty = &messages.Novelty{Class: messages.NoveltyNew}
			},
			detail: [2]string{CheckNovelty, "matches no known structure"},
		},
		{
			name: "hull outlier",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(-0.4)
				ev.Stable, ev.HullOutlier = false, true
			},
			failed: []string{CheckThermodynamics},
			detail: [2]string{CheckThermodynamics, "more likely a surrogate error"},
		},
		{
			name: "several failures",
			edit: func(ev *messages.Evaluation, _ *messages.CampaignSpec, _ *Options) {
				ev.EAboveHull = ptr(0.3)
				ev.Known = true
			},
			failed: []string{CheckThermodynamics, CheckNovelty},
			detail: [2]string{CheckThermodynamics, "E_hull = 0.3 eV/atom"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, spec := accepted(t), electrolyteSpec(t)
			var o Options
			if tc.edit != nil {
				tc.edit(ev, spec, &o)
			}
			if err := ev.Validate(); err != nil {
				t.Fatalf("the test's evaluation is invalid: %v", err)
			}
			v := Judge(spec, ev, o, judgedAt)
			if err := v.Validate(); err != nil {
				t.Fatalf("verdict invalid: %v", err)
			}
			var names, failed []string
			for _, c := range v.Checks {
				names = append(names, c.Name)
				if !c.Passed {
					failed = append(failed, c.Name)
				}
			}
			if want := []string{CheckValidity, CheckConstraints, CheckTaskRules, CheckThermodynamics, CheckConfidence, CheckNovelty}; !slices.Equal(names, want) {
				t.Errorf("checks %v, want %v", names, want)
			}
			if !slices.Equal(failed, tc.failed) {
				t.Errorf("failed checks %v, want %v\n%s", failed, tc.failed, v.Report)
			}
			if v.Accepted != (len(tc.failed) == 0) || len(v.Reasons) != len(tc.failed) {
				t.Errorf("accepted %v with reasons %q; want %d failures", v.Accepted, v.Reasons, len(tc.failed))
			}
			found := false
			for _, c := range v.Checks {
				if c.Name == tc.detail[0] && strings.Contains(c.Detail, tc.detail[1]) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s check with %q in:\n%s", tc.detail[0], tc.detail[1], v.Report)
			}
			if !strings.Contains(v.Report, tc.detail[1]) {
				t.Errorf("the report lacks the evidence %q", tc.detail[1])
			}
			want := "Verdict: REJECTED"
			if v.Accepted {
				want = "Verdict: ACCEPTED (6 of 6 checks passed)"
			}
			if !strings.Contains(v.Report, want) {
				t.Errorf("report lacks %q:\n%s", want, v.Report)
			}
			for _, r := range v.Reasons {
				if !strings.Contains(v.Report, r) {
					t.Errorf("the report's summary lacks the reason %q", r)
				}
			}
		})
	}
}

func TestJudgeVerdictFields(t *testing.T) {
	ev, spec := accepted(t), electrolyteSpec(t)
	v := Judge(spec, ev, Options{}, judgedAt)
	if v.Schema != messages.SchemaVersion || v.ID != ev.ID || v.Campaign != ev.Campaign ||
		v.Formula != "Li5P3O10" || !v.JudgedAt.Equal(judgedAt) || !reflect.DeepEqual(v.Evaluation, *ev) {
		t.Errorf("verdict fields: %+v", v)
	}
	if !v.Accepted || v.Subject() != "crucible.discoveries.sse-1" {
		t.Errorf("accepted %v, subject %s", v.Accepted, v.Subject())
	}
	if again := Judge(spec, ev, Options{}, judgedAt); !reflect.DeepEqual(again, v) {
		t.Error("two verdicts on the same input differ")
	}
	// The verdict survives the wire.
	data, err := messages.Encode(&v)
	if err != nil {
		t.Fatal(err)
	}
	var back messages.Verdict
	if err := messages.Decode(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Report != v.Report || len(back.Checks) != 6 {
		t.Errorf("round trip lost the report or checks")
	}
}

// TestJudgeValidatesForAnyValidEvaluation runs the judge over every
// combination of the evaluation's flags and hull energy: whenever the
// evaluation validates, the verdict does too, and it is accepted only
// when every check passed.
func TestJudgeValidatesForAnyValidEvaluation(t *testing.T) {
	hulls := []*float64{nil, ptr(-1), ptr(-0.1), ptr(0), ptr(0.1), ptr(0.5), ptr(math.NaN())}
	n := 0
	for mask := 0; mask < 1<<6; mask++ {
		for _, h := range hulls {
			ev, spec := accepted(t), electrolyteSpec(t)
			bit := func(i int) bool { return mask&(1<<i) != 0 }
			ev.Valid, ev.Feasible, ev.Stable, ev.Known, ev.Novel = bit(0), bit(1), bit(2), bit(3), bit(4)
			if bit(5) {
				ev.Properties, ev.Margins, ev.Decomposition = nil, nil, nil
			}
			ev.EAboveHull = h
			if ev.Validate() != nil {
				continue
			}
			n++
			for _, sp := range []*messages.CampaignSpec{spec, nil} {
				v := Judge(sp, ev, Options{}, judgedAt)
				if err := v.Validate(); err != nil {
					t.Fatalf("mask %b, hull %v: %v", mask, h, err)
				}
				all := true
				for _, c := range v.Checks {
					all = all && c.Passed
				}
				if v.Accepted != all {
					t.Fatalf("mask %b: accepted %v but checks %+v", mask, v.Accepted, v.Checks)
				}
				if sp == nil && v.Accepted {
					t.Fatal("accepted without a campaign spec")
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d valid combinations exercised", n)
	}
}

func TestJudgeNilEvaluation(t *testing.T) {
	v := Judge(electrolyteSpec(t), nil, Options{}, judgedAt)
	if v.Accepted || len(v.Checks) != 1 || v.Checks[0].Name != CheckInput || len(v.Reasons) != 1 {
		t.Errorf("nil evaluation: %+v", v)
	}
}

func TestConfidenceMargin(t *testing.T) {
	tests := []struct {
		c    task.Constraint
		v    float64
		want float64
	}{
		{task.AtLeast("band_gap", 2.5), 3, 0.5},
		{task.AtLeast("band_gap", 2.5), 2, -0.5},
		{task.AtMost("formation_energy_per_atom", -1), -1.5, 0.5},
		{task.AtMost("formation_energy_per_atom", -1), -0.75, -0.25},
		{task.Between("bulk_modulus", 100, 300), 150, 50},
		{task.Between("bulk_modulus", 100, 300), 280, 20},
		{task.Between("bulk_modulus", 100, 300), 320, -20},
	}
	for _, tc := range tests {
		if got := ConfidenceMargin(tc.c, tc.v); got != tc.want {
			t.Errorf("ConfidenceMargin(%s, %v) = %v, want %v", tc.c, tc.v, got, tc.want)
		}
	}
	if got := ConfidenceMargin(task.Constraint{Property: "band_gap", Kind: "sideways"}, 1); !math.IsNaN(got) {
		t.Errorf("unknown kind: %v, want NaN", got)
	}
}

// TestJudgeTaskRules: the judge checks the structure it is given against
// the task's formula, anion and structure-family rules, whatever the
// evaluation says.
func TestJudgeTaskRules(t *testing.T) {
	tk, err := task.ByName("Toxic-Free Perovskite Oxides")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "sse-1", Task: tk, Budget: 40}
	spec.ApplyDefaults()
	for _, tc := range []struct {
		formula string
		pass    bool
		reason  string
	}{
		{"SrTiO3", true, ""},
		{"KMgF3", false, "the anion F"},
	} {
		p, err := crystal.PrototypeByName("perovskite")
		if err != nil {
			t.Fatal(err)
		}
		b, err := crystal.Build(p, crystal.MustParseFormula(tc.formula))
		if err != nil {
			t.Fatal(err)
		}
		ev := accepted(t)
		ev.Candidate.Structure = messages.StructureOf(b.Structure)
		ev.Candidate.Formula = tc.formula
		out := checkTaskRules(&spec.Task, ev)
		if out.check.Passed != tc.pass || !strings.Contains(out.check.Detail, tc.reason) {
			t.Errorf("%s: %+v", tc.formula, out.check)
		}
		v := Judge(spec, ev, Options{}, judgedAt)
		if !tc.pass && (v.Accepted || !slices.ContainsFunc(v.Reasons, func(r string) bool { return strings.HasPrefix(r, "outside the task") })) {
			t.Errorf("%s: accepted %v, reasons %q", tc.formula, v.Accepted, v.Reasons)
		}
	}
}

// TestJudgeMetal: a band gap the metal classifier voids fails the
// constraints check, whatever the margin says.
func TestJudgeMetal(t *testing.T) {
	ev, spec := accepted(t), electrolyteSpec(t)
	gap := ev.Properties["band_gap"]
	gap.Metallic, gap.MetalProbability = true, ptr(0.8)
	setProperty(ev, "band_gap", gap)
	v := Judge(spec, ev, Options{}, judgedAt)
	if v.Accepted || !slices.ContainsFunc(v.Reasons, func(r string) bool { return strings.Contains(r, "a metal by CGCNN's classifier (P(metal) = 0.8)") }) {
		t.Errorf("accepted %v, reasons %q", v.Accepted, v.Reasons)
	}
}

// TestJudgeCalibratedStability: a calibrated energy above hull must clear
// the threshold by k σ.
func TestJudgeCalibratedStability(t *testing.T) {
	ev, spec := accepted(t), electrolyteSpec(t)
	ev.EAboveHullCalibrated = &messages.Calibrated{Tier: "screen", MAE: 0.18, Q68: 0.18, Q95: 0.63}
	v := Judge(spec, ev, Options{}, judgedAt)
	if v.Accepted || !slices.ContainsFunc(v.Reasons, func(r string) bool { return strings.HasPrefix(r, "not stable by 1σ") }) {
		t.Errorf("accepted %v, reasons %q", v.Accepted, v.Reasons)
	}
	ev.EAboveHullCalibrated.Q68 = 0.05 // 0.021 ≤ 0.1 − 0.05
	if v := Judge(spec, ev, Options{}, judgedAt); !v.Accepted {
		t.Errorf("rejected: %q", v.Reasons)
	}
}

// TestCalibratedMargin: a value calibrated in log10 of the property is
// measured against its bounds in decades, so a factor-8 error still lets
// a value well inside a wide band clear it; other values keep the linear
// margin.
func TestCalibratedMargin(t *testing.T) {
	logCal := &messages.Calibrated{Tier: "screen", Q68: 2.1 * 500, Log10Q68: 0.919}
	band := task.Between("conductivity", 50, 5000)
	for _, tc := range []struct {
		name    string
		c       task.Constraint
		v       float64
		cal     *messages.Calibrated
		d, s    float64
		decades bool
	}{
		{"log, inside the band", band, 500, logCal, 1, 0.919, true},
		{"log, near the lower bound", band, 100, logCal, math.Log10(2), 0.919, true},
		{"log, lower bound", task.AtLeast("conductivity", 10), 1000, logCal, 2, 0.919, true},
		{"log, upper bound", task.AtMost("conductivity", 10), 1, logCal, 1, 0.919, true},
		{"log, non-positive lower bound", task.AtLeast("conductivity", 0), 1, logCal, math.Inf(1), 0.919, true},
		{"linear without a log calibration", band, 500, &messages.Calibrated{Q68: 30}, 450, 7, false},
		{"linear for a non-positive value", band, 0, logCal, -50, 7, false},
	} {
		d, s, decades := CalibratedMargin(tc.c, tc.v, tc.cal, 7)
		if math.Abs(d-tc.d) > 1e-12 && !(math.IsInf(d, 1) && math.IsInf(tc.d, 1)) || s != tc.s || decades != tc.decades {
			t.Errorf("%s: margin %v σ %v decades %v, want %v %v %v", tc.name, d, s, decades, tc.d, tc.s, tc.decades)
		}
	}
}
