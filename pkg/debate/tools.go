package debate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// Case is what a debate is about: a campaign's evaluation of a candidate,
// and the data the tools read.
type Case struct {
	Spec       *messages.CampaignSpec
	Evaluation *messages.Evaluation
	Sources    Sources
}

// Sources are the data behind the tools. Each may be nil; a tool whose
// source is missing answers with an error the role reads as missing
// evidence.
type Sources struct {
	// Hulls holds the reference phases' hulls (formation energies).
	Hulls *hull.Cache
	// Reference is the reference data.
	Reference *reference.DB
	// History is the campaign's record of earlier discoveries.
	History History
}

// History is a campaign's earlier discoveries.
type History interface {
	Discoveries(ctx context.Context, campaign string) ([]Prior, error)
}

// Prior is an earlier discovery of a campaign.
type Prior struct {
	ID            string  `json:"id"`
	Formula       string  `json:"formula"`
	EnergyPerAtom float64 `json:"e_form_per_atom"`
}

// ErrNoSource: a tool's data is not available to this judge.
var ErrNoSource = errors.New("data not available")

// Tool is a function a role may call, with its description for models.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON schema of the arguments (an object).
	Parameters json.RawMessage
	call       func(ctx context.Context, c *Case, args json.RawMessage) (any, error)
}

// Definition is the tool as an OpenAI function-calling tool.
func (t Tool) Definition() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: false,
	}}
}

// noArgs is the schema of a tool without arguments.
var noArgs = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// decodeArgs reads a tool's arguments strictly: an unknown key is an error.
func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

// Toolbox calls tools for one debate and records each call. Results are
// kept by tool and arguments: a tool asked again in a later round answers
// from the record, so every round argues from the same numbers. It is
// safe for concurrent use.
type Toolbox struct {
	c     *Case
	tools map[string]Tool
	mu    sync.Mutex
	memo  map[string]messages.ToolCall
}

// NewToolbox returns the toolbox of a case over every tool.
func NewToolbox(c *Case) *Toolbox {
	b := &Toolbox{c: c, tools: map[string]Tool{}, memo: map[string]messages.ToolCall{}}
	for _, t := range Tools() {
		b.tools[t.Name] = t
	}
	return b
}

// Call runs a tool and returns the recorded call. An unknown tool or bad
// arguments are recorded as the call's error, never a panic.
func (b *Toolbox) Call(ctx context.Context, name string, args json.RawMessage) messages.ToolCall {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, args) == nil {
		args = compact.Bytes()
	}
	key := name + " " + string(args)
	b.mu.Lock()
	if tc, ok := b.memo[key]; ok {
		b.mu.Unlock()
		return tc
	}
	b.mu.Unlock()
	tc := messages.ToolCall{Tool: name, Arguments: append(json.RawMessage(nil), args...)}
	t, ok := b.tools[name]
	if !ok {
		tc.Error = fmt.Sprintf("no tool %q", name)
	} else if res, err := t.call(ctx, b.c, args); err != nil {
		tc.Error = err.Error()
	} else if data, err := json.Marshal(res); err != nil {
		tc.Error = "result: " + err.Error()
	} else {
		tc.Result = data
	}
	b.mu.Lock()
	b.memo[key] = tc
	b.mu.Unlock()
	return tc
}

// Tools lists every debate tool, in name order.
func Tools() []Tool {
	ts := []Tool{
		toolEnergyAboveHull, toolPhaseSensitivity,
		toolReferencePhases, toolPrecursorReaction, toolElementHazards,
		toolConstraintMargins, toolMetalClassifier,
		toolStructureMatch, toolCampaignHistory,
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	return ts
}

// ToolByName returns a tool.
func ToolByName(name string) (Tool, bool) {
	for _, t := range Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// composition is the candidate's composition (of its final structure).
func composition(ev *messages.Evaluation) (crystal.Composition, error) {
	f := ev.Candidate.Formula
	if f == "" {
		f = ev.FinalStructure().Formula
	}
	if f != "" {
		if c, err := crystal.ParseFormula(f); err == nil {
			return c, nil
		}
	}
	st, err := ev.FinalStructure().Crystal()
	if err != nil {
		return crystal.Composition{}, fmt.Errorf("candidate composition: %w", err)
	}
	return st.Composition(), nil
}

// formationEnergy is the formation energy per atom the oracle placed on
// the hull: E_hull + hull energy where both are known, else the relaxed
// or the surrogate value.
func formationEnergy(ev *messages.Evaluation) (float64, bool) {
	if ev.EAboveHull != nil && ev.HullEnergy != nil {
		return *ev.EAboveHull + *ev.HullEnergy, true
	}
	if ev.Relaxation != nil {
		return ev.Relaxation.FormationEnergy, true
	}
	if fe, ok := ev.Properties["formation_energy_per_atom"]; ok {
		return fe.Value, true
	}
	return 0, false
}

// threshold is the campaign's stability threshold and k.
func threshold(spec *messages.CampaignSpec) (float64, float64) {
	t, k := messages.DefaultStabilityThreshold, messages.DefaultConfidenceK
	if spec != nil {
		if spec.StabilityThreshold > 0 {
			t = spec.StabilityThreshold
		}
		if spec.ConfidenceK > 0 {
			k = spec.ConfidenceK
		}
	}
	return t, k
}

// phaseFormula is a hull phase's reduced formula.
func phaseFormula(e hull.Entry) string { return e.Composition.ReducedFormula() }
