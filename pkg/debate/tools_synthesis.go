package debate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
)

// PhasesReport is the result of reference_phases.
type PhasesReport struct {
	System string `json:"chemical_system"`
	// Known: the candidate's reduced formula is in the reference data.
	Known bool `json:"candidate_formula_known"`
	// Phases are the reference phases on the hull of the system (the
	// known competing and precursor phases), lowest formation energy first.
	Phases []KnownPhase `json:"stable_phases"`
	// Total counts every reference phase of the system, on the hull or not.
	Total int `json:"total_phases"`
}

// KnownPhase is a reference phase.
type KnownPhase struct {
	Formula         string  `json:"formula"`
	FormationEnergy float64 `json:"formation_energy_per_atom"`
	Elements        int     `json:"elements"`
}

var toolReferencePhases = Tool{
	Name:        ToolReferencePhases,
	Description: "Known phases of the candidate's chemical system in the reference data that lie on its convex hull, with their formation energies; and whether the candidate's formula itself is known.",
	Parameters:  noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		return referencePhases(c)
	},
}

func referencePhases(c *Case) (*PhasesReport, error) {
	d, comp, _, err := systemHull(c)
	if err != nil {
		return nil, err
	}
	rep := &PhasesReport{System: comp.ChemicalSystem(), Total: d.Len()}
	if c.Sources.Reference != nil {
		rep.Known = c.Sources.Reference.Known(comp.ReducedFormula())
	}
	for _, e := range d.Stable() {
		rep.Phases = append(rep.Phases, KnownPhase{Formula: phaseFormula(e), FormationEnergy: e.EnergyPerAtom, Elements: e.Composition.Len()})
	}
	sort.Slice(rep.Phases, func(i, j int) bool {
		if rep.Phases[i].FormationEnergy != rep.Phases[j].FormationEnergy {
			return rep.Phases[i].FormationEnergy < rep.Phases[j].FormationEnergy
		}
		return rep.Phases[i].Formula < rep.Phases[j].Formula
	})
	return rep, nil
}

// ReactionReport is the result of precursor_reaction.
type ReactionReport struct {
	// Precursors are the lower-order phases the candidate's composition
	// decomposes into on the hull of the phases with fewer elements than
	// it (its subsystems): a solid-state precursor set.
	Precursors []Precursor `json:"precursors"`
	// Reaction is balanced per formula unit of the candidate.
	Reaction string `json:"reaction"`
	// ReactionEnergy is E_f(candidate) − Σ x_i E_f(precursor_i), eV per
	// atom of product: negative when the candidate is favoured over its
	// precursors.
	ReactionEnergy float64 `json:"reaction_energy_per_atom"`
}

// Precursor is a precursor phase and its coefficient per formula unit of
// the candidate.
type Precursor struct {
	Formula         string  `json:"formula"`
	Coefficient     float64 `json:"coefficient"`
	FormationEnergy float64 `json:"formation_energy_per_atom"`
}

var toolPrecursorReaction = Tool{
	Name: ToolPrecursorReaction,
	Description: "A precursor set and reaction for the candidate from the hull data: the lower-order known phases (fewer elements than the candidate) " +
		"its composition decomposes into, the reaction balanced per formula unit, and its reaction energy in eV per atom (negative: favourable).",
	Parameters: noArgs,
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		if err := decodeArgs(args, &struct{}{}); err != nil {
			return nil, err
		}
		return precursorReaction(c)
	},
}

func precursorReaction(c *Case) (*ReactionReport, error) {
	d, comp, fe, err := systemHull(c)
	if err != nil {
		return nil, err
	}
	if comp.Len() < 2 {
		return nil, fmt.Errorf("%s is an element: no precursors", comp.ReducedFormula())
	}
	var lower []hull.Entry
	for _, e := range d.Entries() {
		if e.Composition.Len() < comp.Len() {
			lower = append(lower, e)
		}
	}
	dl, err := hull.New(lower, hull.WithElements(comp.Elements()...))
	if err != nil {
		return nil, err
	}
	q, err := dl.Query(comp, fe)
	if err != nil {
		return nil, err
	}
	reduced := comp.ReducedComposition()
	atoms := reduced.NumAtoms()
	rep := &ReactionReport{ReactionEnergy: q.EAboveHull}
	for _, p := range q.Decomposition {
		pc := p.Composition.ReducedComposition()
		coef := p.Fraction * atoms / pc.NumAtoms()
		rep.Precursors = append(rep.Precursors, Precursor{Formula: precursorName(pc), Coefficient: coef, FormationEnergy: p.EnergyPerAtom})
	}
	sort.Slice(rep.Precursors, func(i, j int) bool { return rep.Precursors[i].Formula < rep.Precursors[j].Formula })
	lhs := make([]string, len(rep.Precursors))
	for i, p := range rep.Precursors {
		lhs[i] = coefficient(p.Coefficient) + p.Formula
	}
	rep.Reaction = strings.Join(lhs, " + ") + " → " + reduced.ReducedFormula()
	return rep, nil
}

// diatomic are the elements whose standard state is a diatomic gas.
var diatomic = map[string]bool{"H": true, "N": true, "O": true, "F": true, "Cl": true}

// precursorName writes a phase's reduced formula, an elemental gas as
// its molecule ("O2").
func precursorName(c crystal.Composition) string {
	f := c.ReducedFormula()
	if c.Len() == 1 && diatomic[f] {
		return f + "2"
	}
	return f
}

// coefficient writes a stoichiometric coefficient: "" for 1, "2 ", "0.5 ".
func coefficient(x float64) string {
	if x > 0.9999 && x < 1.0001 {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 4, 64) + " "
}

// Hazard flags of elements (element_hazards).
const (
	FlagToxic       = "toxic"
	FlagVolatile    = "volatile"
	FlagAirSensitve = "air-sensitive"
	FlagRadioactive = "radioactive"
)

// hazards are common laboratory handling classes of the elements in
// solid-state synthesis — a short, conservative table, not a safety data
// sheet: toxic (the element or its common compounds are acutely toxic or
// carcinogenic), volatile (the element or its oxide evaporates at usual
// solid-state firing temperatures, so the stoichiometry drifts without a
// sealed tube or an excess), air-sensitive (the usual precursors react
// with air or moisture: handle in a glove box), radioactive.
var hazards = map[string][]string{
	"Be": {FlagToxic}, "Cd": {FlagToxic, FlagVolatile}, "Hg": {FlagToxic, FlagVolatile}, "Pb": {FlagToxic, FlagVolatile},
	"Tl": {FlagToxic, FlagVolatile}, "As": {FlagToxic, FlagVolatile}, "Se": {FlagToxic, FlagVolatile}, "Sb": {FlagToxic, FlagVolatile},
	"Os": {FlagToxic}, "Cr": {FlagToxic}, "Ba": {FlagToxic, FlagAirSensitve},
	"Li": {FlagVolatile, FlagAirSensitve}, "Na": {FlagVolatile, FlagAirSensitve}, "K": {FlagVolatile, FlagAirSensitve},
	"Rb": {FlagVolatile, FlagAirSensitve}, "Cs": {FlagVolatile, FlagAirSensitve}, "Sr": {FlagAirSensitve},
	"Zn": {FlagVolatile}, "P": {FlagVolatile, FlagAirSensitve}, "S": {FlagVolatile}, "Te": {FlagVolatile}, "B": {FlagVolatile},
	"N": {FlagAirSensitve}, "H": {FlagAirSensitve},
	"Tc": {FlagRadioactive}, "Pm": {FlagRadioactive}, "Po": {FlagRadioactive, FlagToxic}, "Ra": {FlagRadioactive},
	"Ac": {FlagRadioactive}, "Th": {FlagRadioactive}, "Pa": {FlagRadioactive}, "U": {FlagRadioactive, FlagToxic},
	"Np": {FlagRadioactive}, "Pu": {FlagRadioactive, FlagToxic},
}

// HazardReport is the result of element_hazards.
type HazardReport struct {
	// Flags are each flagged element's hazards.
	Flags map[string][]string `json:"flags"`
	// Clean lists the elements without a flag.
	Clean []string `json:"clean"`
}

var toolElementHazards = Tool{
	Name:        ToolElementHazards,
	Description: "Hazard flags of elements for solid-state synthesis: toxic, volatile at firing temperatures, air-sensitive precursors, radioactive. Defaults to the candidate's elements.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"elements":{"type":"array","items":{"type":"string"},"description":"element symbols; the candidate's by default"}},"additionalProperties":false}`),
	call: func(_ context.Context, c *Case, args json.RawMessage) (any, error) {
		var a struct {
			Elements []string `json:"elements"`
		}
		if err := decodeArgs(args, &a); err != nil {
			return nil, err
		}
		if len(a.Elements) == 0 {
			comp, err := composition(c.Evaluation)
			if err != nil {
				return nil, err
			}
			for _, el := range comp.Elements() {
				a.Elements = append(a.Elements, el.Symbol())
			}
		}
		rep := &HazardReport{Flags: map[string][]string{}}
		for _, s := range a.Elements {
			if _, err := crystal.ElementBySymbol(s); err != nil {
				return nil, fmt.Errorf("element %q: %w", s, err)
			}
			if f := hazards[s]; len(f) > 0 {
				rep.Flags[s] = f
			} else {
				rep.Clean = append(rep.Clean, s)
			}
		}
		sort.Strings(rep.Clean)
		return rep, nil
	},
}
