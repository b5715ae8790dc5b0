package debate

import (
	"context"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// liPO is a small Li–P–O reference hull (formation energies, eV/atom):
// the binaries Li2O and P2O5 and the ternaries Li4P2O7 and LiPO3, between
// which the fixture Li5P3O10 lies (hull energy −2.6305 at its
// composition).
func liPO(t *testing.T) *hull.Cache {
	t.Helper()
	entry := func(id, f string, e float64) hull.Entry {
		c, err := crystal.ParseFormula(f)
		if err != nil {
			t.Fatal(err)
		}
		return hull.Entry{ID: id, Composition: c, EnergyPerAtom: e}
	}
	c, err := hull.NewCache([]hull.Entry{
		entry("li2o", "Li2O", -2.07), entry("p2o5", "P2O5", -1.95),
		entry("li4p2o7", "Li4P2O7", -2.65), entry("lipo3", "LiPO3", -2.58),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type history []Prior

func (h history) Discoveries(context.Context, string) ([]Prior, error) { return h, nil }

// fixture is a feasible, stable, new Li5P3O10 for the Solid-State
// Electrolytes task (formation energy ≤ −1 eV/atom, band gap ≥ 2 eV).
func fixture(t *testing.T) *Case {
	t.Helper()
	data, err := os.ReadFile("testdata/evaluation_accepted.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev messages.Evaluation
	if err := messages.Decode(data, &ev); err != nil {
		t.Fatal(err)
	}
	ev.Novelty = &messages.Novelty{Class: messages.NoveltyNew}
	tk, err := task.ByName("Solid-State Electrolytes")
	if err != nil {
		t.Fatal(err)
	}
	spec := &messages.CampaignSpec{ID: "sse-1", Task: tk, Budget: 40}
	spec.ApplyDefaults()
	return &Case{Spec: spec, Evaluation: &ev, Sources: Sources{Hulls: liPO(t), History: history{{ID: "sse-1-g1-c4", Formula: "Li3PO4", EnergyPerAtom: -2.6}}}}
}

func ptr(x float64) *float64 { return &x }

func setGap(ev *messages.Evaluation, pv messages.PropertyValue) {
	props := make(map[string]messages.PropertyValue, len(ev.Properties))
	for k, v := range ev.Properties {
		props[k] = v
	}
	pv.Unit = "eV"
	props["band_gap"] = pv
	ev.Properties = props
}

func finalOf(d *messages.Debate, role string) messages.RolePosition {
	for _, p := range d.Rounds[len(d.Rounds)-1].Positions {
		if p.Role == role {
			return p
		}
	}
	return messages.RolePosition{}
}

func TestRunCases(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *Case)
		verdict string
		// role and position the verdict rests on
		role, position string
		reason         string
	}{
		{name: "clean", edit: func(*Case) {}, verdict: messages.DebateDiscovery, role: messages.RoleNovelty, position: messages.PositionSupport},
		{name: "ordered mixture", edit: func(c *Case) {
			c.Evaluation.Novelty = &messages.Novelty{Class: messages.NoveltyOrderedMixture, EndMembers: map[string]float64{"Li4P2O7": 0.72, "LiPO3": 0.28}}
			c.Evaluation.Novel = false
		}, verdict: messages.DebateReject, role: messages.RoleNovelty, position: messages.PositionOppose, reason: "ordered mixture"},
		{name: "known structure", edit: func(c *Case) {
			c.Evaluation.Novelty = &messages.Novelty{Class: messages.NoveltyKnownStructure, Match: "mp:mp-1", RMS: 0.02}
			c.Evaluation.Novel = false
		}, verdict: messages.DebateReject, role: messages.RoleNovelty, position: messages.PositionOppose, reason: "known"},
		{name: "metal for a gap task", edit: func(c *Case) {
			setGap(c.Evaluation, messages.PropertyValue{Value: 0, Source: "cgcnn", Uncertainty: 0.388, Metallic: true, MetalProbability: ptr(0.91), Surrogate: ptr(2.4)})
		}, verdict: messages.DebateReject, role: messages.RoleConfidence, position: messages.PositionOppose, reason: "metal"},
		{name: "gap within k sigma", edit: func(c *Case) {
			setGap(c.Evaluation, messages.PropertyValue{Value: 2.2, Source: "cgcnn", Uncertainty: 0.388})
		}, verdict: messages.DebateNeedsCalculation, role: messages.RoleConfidence, position: messages.PositionUncertain, reason: "less than k"},
		{name: "screened beyond the calibrated margin", edit: func(c *Case) {
			c.Evaluation.EAboveHullCalibrated = &messages.Calibrated{Tier: "screen", Q68: 0.09}
		}, verdict: messages.DebateNeedsRelaxation, role: messages.RoleThermodynamics, position: messages.PositionUncertain, reason: "less than k"},
		{name: "relaxed beyond the calibrated margin", edit: func(c *Case) {
			c.Evaluation.Tier = messages.TierRelax
			c.Evaluation.Relaxation = &messages.Relaxation{Converged: true, FormationEnergy: -2.61}
			c.Evaluation.Screened = &messages.ScreenedValues{EAboveHull: ptr(0.05)}
			c.Evaluation.EAboveHullCalibrated = &messages.Calibrated{Tier: "relax", Q68: 0.09}
		}, verdict: messages.DebateNeedsCalculation, role: messages.RoleThermodynamics, position: messages.PositionUncertain, reason: "less than k"},
		{name: "far below the hull", edit: func(c *Case) {
			c.Evaluation.EAboveHull, c.Evaluation.HullOutlier, c.Evaluation.Stable = ptr(-0.4), true, false
		}, verdict: messages.DebateReject, role: messages.RoleThermodynamics, position: messages.PositionOppose, reason: "surrogate error"},
		{name: "above the threshold", edit: func(c *Case) {
			c.Evaluation.EAboveHull = ptr(0.2)
		}, verdict: messages.DebateReject, role: messages.RoleThermodynamics, position: messages.PositionOppose, reason: "above the stability threshold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixture(t)
			tt.edit(c)
			tr, err := Run(context.Background(), c, Options{TranscriptID: "sse-1/" + c.Evaluation.ID})
			if err != nil {
				t.Fatal(err)
			}
			d := &tr.Debate
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tt.verdict {
				t.Fatalf("verdict %s, want %s\n%s", d.Verdict, tt.verdict, Text(d, "Li5P3O10", c.Evaluation.ID))
			}
			if p := finalOf(d, tt.role); p.Position != tt.position {
				t.Errorf("%s ends %s, want %s: %v", tt.role, p.Position, tt.position, p.Evidence)
			}
			if tt.reason != "" && !slices.ContainsFunc(tr.Reasons(), func(r string) bool { return strings.Contains(r, tt.reason) }) {
				t.Errorf("reasons %q, want one with %q", tr.Reasons(), tt.reason)
			}
			if len(d.Roles) != 4 || len(d.Rounds) < 2 || len(d.Rounds) > DefaultMaxRounds {
				t.Errorf("%d roles, %d rounds", len(d.Roles), len(d.Rounds))
			}
			calls := 0
			for _, p := range d.Rounds[0].Positions {
				calls += len(p.ToolCalls)
			}
			if calls != len(Tools()) {
				t.Errorf("round 1 records %d tool calls, want %d", calls, len(Tools()))
			}
			if d.Report.Rationale == "" || d.Report.NextCalculation == "" || len(d.Report.Roles) != 4 {
				t.Errorf("incomplete report %+v", d.Report)
			}
		})
	}
}

// TestRunDiscoveryReport checks the numbers of the clean case's report
// against the hull by hand.
func TestRunDiscoveryReport(t *testing.T) {
	c := fixture(t)
	tr, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &tr.Debate
	if !d.Converged {
		t.Errorf("did not converge in %d rounds", len(d.Rounds))
	}
	// Li5P3O10 = 2.5 Li2O + 1.5 P2O5 (18 atoms): lower-order hull energy
	// (7.5·−2.07 + 10.5·−1.95)/18 = −2.0; E_f = 0.021 − 2.631 = −2.61.
	s := d.Report.Synthesis
	if s == nil || s.Reaction != "2.5 Li2O + 1.5 P2O5 → Li5P3O10" || math.Abs(s.ReactionEnergy-(-0.61)) > 1e-9 || !slices.Contains(s.Precursors, "P2O5") {
		t.Fatalf("synthesis %+v, want 2.5 Li2O + 1.5 P2O5 → Li5P3O10 at −0.61 eV/atom", s)
	}
	if !slices.Contains(s.Flags, "Li: volatile, air-sensitive") {
		t.Errorf("flags %v", s.Flags)
	}
	var sens SensitivityReport
	if !ResultOf(d, ToolPhaseSensitivity, &sens) {
		t.Fatal("no phase_sensitivity result")
	}
	// Li5P3O10 = Li4P2O7 + LiPO3 (13 + 5 atoms): against the reference
	// phases E_hull = −2.61 − (13·−2.65 + 5·−2.58)/18.
	want := -2.61 - (13*-2.65+5*-2.58)/18
	if math.Abs(sens.ReferenceEAboveHull-want) > 1e-9 || len(sens.Phases) != 2 || sens.Phases[0].Formula != "Li4P2O7" {
		t.Errorf("sensitivity %+v", sens)
	}
	if !strings.Contains(d.Report.NextCalculation, "phonons") {
		t.Errorf("next calculation %q", d.Report.NextCalculation)
	}
}

func TestAgreement(t *testing.T) {
	pos := func(p string, c float64) messages.RolePosition {
		return messages.RolePosition{Position: p, Confidence: c}
	}
	for _, tt := range []struct {
		ps   []messages.RolePosition
		want float64
	}{
		{[]messages.RolePosition{pos("support", 0.8), pos("support", 0.6)}, 1},
		{[]messages.RolePosition{pos("support", 0.6), pos("oppose", 0.2), pos("uncertain", 0.2)}, 0.6},
		{[]messages.RolePosition{pos("support", 0.5), pos("oppose", 0.5)}, 0.5},
		{nil, 0},
	} {
		if got := Agreement(tt.ps); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Agreement(%v) = %v, want %v", tt.ps, got, tt.want)
		}
	}
}

func TestToolErrors(t *testing.T) {
	c := fixture(t)
	box := NewToolbox(c)
	if tc := box.Call(context.Background(), ToolEnergyAboveHull, []byte(`{"x":1}`)); !strings.Contains(tc.Error, "unknown field") {
		t.Errorf("unknown argument: %+v", tc)
	}
	if tc := box.Call(context.Background(), "oracle_lie", nil); tc.Error == "" {
		t.Errorf("unknown tool: %+v", tc)
	}
	if tc := box.Call(context.Background(), ToolElementHazards, []byte(`{"elements":["Xx"]}`)); tc.Error == "" {
		t.Errorf("bad element: %+v", tc)
	}
	c.Sources = Sources{}
	tr, err := Run(context.Background(), c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Without hulls or history the synthesis role is uncertain for want
	// of data, which does not block a discovery.
	if s := finalOf(&tr.Debate, messages.RoleSynthesis); s.Position != messages.PositionUncertain || !strings.Contains(s.Evidence[0], "not available") {
		t.Errorf("synthesis without hulls: %+v", s)
	}
	if tr.Debate.Verdict != messages.DebateDiscovery {
		t.Errorf("verdict %s", tr.Debate.Verdict)
	}
}

type failingAgent struct{}

func (failingAgent) Argue(context.Context, Turn) (messages.RolePosition, Usage, error) {
	return messages.RolePosition{}, Usage{Calls: 1}, errors.New("endpoint refused")
}

// yesAgent supports everything, whatever the tools say.
type yesAgent struct{}

func (yesAgent) Argue(_ context.Context, t Turn) (messages.RolePosition, Usage, error) {
	return messages.RolePosition{Position: messages.PositionSupport, Confidence: 0.99, Evidence: []string{"looks fine"}, Agent: "llm:yes"}, Usage{Calls: 1, PromptTokens: 10, CompletionTokens: 5}, nil
}

func TestAgentsFallBackAndStayGrounded(t *testing.T) {
	c := fixture(t)
	tr, err := Run(context.Background(), c, Options{Agents: map[string]Agent{messages.RoleSynthesis: failingAgent{}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := finalOf(&tr.Debate, messages.RoleSynthesis); p.Fallback != "endpoint refused" || p.Agent != "rules" {
		t.Errorf("fallback not recorded: %+v", p)
	}
	if tr.Debate.Mode != ModeLLM || tr.Debate.Calls < 2 || tr.Debate.Verdict != messages.DebateDiscovery {
		t.Errorf("mode %s, %d calls, verdict %s", tr.Debate.Mode, tr.Debate.Calls, tr.Debate.Verdict)
	}

	c = fixture(t)
	c.Evaluation.Novelty = &messages.Novelty{Class: messages.NoveltyOrderedMixture, EndMembers: map[string]float64{"Li4P2O7": 0.72, "LiPO3": 0.28}}
	agents := map[string]Agent{}
	for _, r := range Roles() {
		agents[r.Name] = yesAgent{}
	}
	tr, err = Run(context.Background(), c, Options{Agents: agents, MaxRounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Debate.Verdict != messages.DebateReject {
		t.Errorf("a mixture every model supports is %s, want reject on the tools' evidence", tr.Debate.Verdict)
	}
}

func TestMaxRounds(t *testing.T) {
	c := fixture(t)
	tr, err := Run(context.Background(), c, Options{MaxRounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Debate.Rounds) != 1 || tr.Debate.Converged {
		t.Errorf("%d rounds, converged %v", len(tr.Debate.Rounds), tr.Debate.Converged)
	}
}

func TestTextShowsRounds(t *testing.T) {
	c := fixture(t)
	tr, err := Run(context.Background(), c, Options{TranscriptID: "sse-1/x"})
	if err != nil {
		t.Fatal(err)
	}
	txt := Text(&tr.Debate, "Li5P3O10", c.Evaluation.ID)
	for _, want := range []string{"Verdict: DISCOVERY", "Round 1", "Round 2", "> energy_above_hull({})", "Suggested synthesis: 2.5 Li2O + 1.5 P2O5 → Li5P3O10", "Next calculation:"} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	if testing.Verbose() {
		t.Log(txt)
	}
}
