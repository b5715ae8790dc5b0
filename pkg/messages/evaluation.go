package messages

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// PropertyValue is one property of an evaluated candidate.
type PropertyValue struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Source is "cgcnn" (surrogate), "reference" (exact lookup of a known
	// compound), "structure" (computed from the structure) or "hull".
	Source string `json:"source"`
	// Uncertainty is the surrogate's published test MAE, in Unit; 0 for
	// exact sources.
	Uncertainty float64 `json:"uncertainty,omitempty"`
	// TieSpread is the uncertainty a surrogate value has on top of
	// Uncertainty because neighbours of different elements tie at CGCNN's
	// twelfth-neighbour cut (oracle.Value.TieSpread), in Unit.
	TieSpread float64 `json:"tie_spread,omitempty"`
	// Surrogate is the surrogate's value where a reference value won, or
	// the band-gap model's value where the metal rule set the gap to 0.
	Surrogate *float64 `json:"surrogate,omitempty"`
	// MetalProbability, on a surrogate band gap, is CGCNN's metal
	// classifier's probability that the structure is a metal.
	MetalProbability *float64 `json:"metal_probability,omitempty"`
	// Metallic, on a surrogate band gap, marks a structure the classifier
	// calls a metal (probability ≥ 0.5): the gap is reported as 0 and no
	// band-gap constraint is met.
	Metallic bool `json:"metallic,omitempty"`
	// Calibrated is the oracle tier's measured error for the property
	// (crucible calibrate), when a calibration is in use: Uncertainty is
	// then its Q68, the calibrated standard error.
	Calibrated *Calibrated `json:"calibrated,omitempty"`
}

// Calibrated is a property's error measured on known compounds built as
// candidates are (pkg/calibrate), in the property's unit.
type Calibrated struct {
	Tier string  `json:"tier"`
	MAE  float64 `json:"mae"`
	Bias float64 `json:"bias"`
	Q68  float64 `json:"q68"`
	Q95  float64 `json:"q95"`
	// Log10Q68, for a value whose error was measured in log10 of the
	// property (Crucible's own surrogates), is that 68 % quantile in
	// decades; the other figures are scaled to the value (ln 10 · value ·
	// error), and the screen and the judge measure its margins in decades
	// (judge.CalibratedMargin).
	Log10Q68 float64 `json:"log10_q68,omitempty"`
}

// Margin is one constraint's signed, clipped margin Φ (LLEMA App. B.2).
type Margin struct {
	Property string  `json:"property"`
	Kind     string  `json:"kind"`
	Value    float64 `json:"value"`
	Margin   float64 `json:"margin"`
	Weight   float64 `json:"weight"`
	// Missing: the property had no value, so the constraint is unmet.
	Missing bool `json:"missing,omitempty"`
}

// Reason is why a candidate is invalid or was not accepted: a stable code
// to count by and a detail to read.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Evaluation is the oracle's verdict on one candidate.
type Evaluation struct {
	Schema int `json:"schema"`
	// ID is the candidate's id.
	ID        string    `json:"id"`
	Campaign  string    `json:"campaign"`
	Candidate Candidate `json:"candidate"`
	// Valid: the structure passed every validity check; when false the
	// reasons say why and the properties may be absent.
	Valid   bool     `json:"valid"`
	Reasons []Reason `json:"reasons,omitempty"`
	// Warnings say what could not be evaluated for a valid candidate
	// (stability of a system without reference phases, say).
	Warnings []Reason `json:"warnings,omitempty"`
	// OxidationStates found for charge neutrality (the mean state per
	// element; fractional only for mixed valence).
	OxidationStates map[string]float64       `json:"oxidation_states,omitempty"`
	Properties      map[string]PropertyValue `json:"properties,omitempty"`
	// EAboveHull is the energy above the convex hull of the reference
	// phases and the campaign's stable finds (eV/atom); negative below it.
	EAboveHull *float64 `json:"e_above_hull,omitempty"`
	HullEnergy *float64 `json:"hull_energy_per_atom,omitempty"`
	// EAboveHullCalibrated is the calibrated error of EAboveHull (that of
	// a surrogate formation energy), when a calibration is in use.
	EAboveHullCalibrated *Calibrated        `json:"e_above_hull_calibrated,omitempty"`
	Decomposition        map[string]float64 `json:"decomposition,omitempty"`
	Margins              []Margin           `json:"margins,omitempty"`
	// Score is S = Σ w_i Φ_i.
	Score float64 `json:"score"`
	// Feasible (a hit): valid and every margin ≥ 0.
	Feasible bool `json:"feasible"`
	// Stable: valid and EAboveHull ≤ the campaign's threshold.
	Stable bool `json:"stable"`
	// Known: the reduced formula is in the reference data (LLEMA's
	// memorisation test).
	Known bool `json:"known"`
	// Novelty says what the candidate is with respect to the known
	// compounds: matched by structure where structures of its formula are
	// known, an ordered mixture of known phases, new (see NoveltyClasses).
	Novelty *Novelty `json:"novelty,omitempty"`
	// Novel: valid, not a seed, and new or a new polymorph (Novelty; by
	// formula alone, not Known, when Novelty is absent). The proposer
	// keeps structural duplicates of earlier candidates out.
	Novel bool `json:"novel"`
	// HullOutlier: valid, and EAboveHull lies further below the hull of
	// the known phases than HullOutlierBound: a likely surrogate error,
	// not stable, never a reference phase of the campaign's hull. The
	// judge reports it in a verdict.
	HullOutlier bool `json:"hull_outlier,omitempty"`
	// HullOutlierBound (eV/atom, positive) is how far below the hull
	// EAboveHull may lie before it is a HullOutlier: the 95 % quantile of
	// EAboveHullCalibrated, else the default of pkg/judge
	// (DefaultSuspiciousBelowHull), with an uncalibrated_hull_bound
	// warning when EAboveHull is negative. Absent without EAboveHull.
	HullOutlierBound float64 `json:"hull_outlier_bound,omitempty"`
	// Tier is the oracle tier whose numbers the evaluation carries:
	// TierScreen or TierRelax ("" from evaluators that predate tiers).
	Tier string `json:"tier,omitempty"`
	// Screened, on a relaxed evaluation, are the screen's numbers that the
	// relaxed ones replaced.
	Screened *ScreenedValues `json:"screened,omitempty"`
	// Relaxation, on a relaxed evaluation, is the relaxation and the
	// relaxed structure.
	Relaxation *Relaxation `json:"relaxation,omitempty"`
	// SpaceGroup is the space group of FinalStructure (the relaxed
	// structure when relaxed) at the default tolerances, 0.01 Å and 5°,
	// found by the oracle; absent when none was found and in evaluations
	// written before it was recorded.
	SpaceGroup *spacegroup.Name `json:"space_group,omitempty"`
	// Unsupported lists constrained properties no oracle provides.
	Unsupported   []string  `json:"unsupported,omitempty"`
	Evaluator     string    `json:"evaluator"`
	OracleSeconds float64   `json:"oracle_seconds"`
	EvaluatedAt   time.Time `json:"evaluated_at"`
}

// Oracle tiers of an evaluation (Evaluation.Tier).
const (
	TierScreen = "screen"
	TierRelax  = "relax"
)

// ScreenedValues are the screen's numbers of a candidate that was then
// relaxed: the fields of the same names of its screened evaluation.
type ScreenedValues struct {
	Properties    map[string]PropertyValue `json:"properties,omitempty"`
	EAboveHull    *float64                 `json:"e_above_hull,omitempty"`
	HullEnergy    *float64                 `json:"hull_energy_per_atom,omitempty"`
	Decomposition map[string]float64       `json:"decomposition,omitempty"`
	Margins       []Margin                 `json:"margins,omitempty"`
	Score         float64                  `json:"score"`
	Feasible      bool                     `json:"feasible"`
	Stable        bool                     `json:"stable"`
	OracleSeconds float64                  `json:"oracle_seconds"`
}

// ScreenedOf returns the numbers of a screened evaluation.
func ScreenedOf(e *Evaluation) *ScreenedValues {
	return &ScreenedValues{
		Properties: e.Properties, EAboveHull: e.EAboveHull, HullEnergy: e.HullEnergy, Decomposition: e.Decomposition,
		Margins: e.Margins, Score: e.Score, Feasible: e.Feasible, Stable: e.Stable, OracleSeconds: e.OracleSeconds,
	}
}

// Relaxation is how a candidate's structure was relaxed (the relax tier:
// the M3GNet potential, FIRE on positions and cell).
type Relaxation struct {
	// Structure is the relaxed structure.
	Structure Structure `json:"structure"`
	// Converged: the largest force (and cell force) fell below FMax
	// within the step limit; Steps is the number of FIRE steps.
	Converged bool    `json:"converged"`
	Steps     int     `json:"steps"`
	FMax      float64 `json:"fmax"`
	// InitialEnergy and Energy are the total energies (eV) of the
	// structure as proposed and as relaxed; EnergyPerAtom is Energy per
	// atom.
	InitialEnergy float64 `json:"initial_energy"`
	Energy        float64 `json:"energy"`
	EnergyPerAtom float64 `json:"energy_per_atom"`
	// FormationEnergy is the relaxed formation energy per atom (eV/atom)
	// with MP's elemental references and the corrections of Scheme.
	FormationEnergy float64 `json:"formation_energy_per_atom"`
	Scheme          string  `json:"scheme"`
	// Seconds is the time the relaxation and the evaluation of the
	// relaxed structure took.
	Seconds float64 `json:"seconds"`
}

// FinalStructure is the structure the evaluation's numbers describe: the
// relaxed one when the candidate was relaxed, else the candidate's. It is
// the structure exported.
func (e *Evaluation) FinalStructure() Structure {
	if e.Relaxation != nil {
		return e.Relaxation.Structure
	}
	return e.Candidate.Structure
}

// MsgID is the evaluation's deterministic message id.
func (e *Evaluation) MsgID() string { return "evaluation/" + e.ID }

// ForJudge reports whether the judge weighs the evaluation: a feasible
// proposed candidate (seeds are known materials by construction) that is
// stable, or lies so far below the hull that the judge reports it as a
// likely surrogate error.
func (e *Evaluation) ForJudge() bool {
	return e.Feasible && (e.Stable || e.HullOutlier) && !e.Candidate.Seed
}

// Headers implements Headered: HeaderJudge.
func (e *Evaluation) Headers() map[string]string {
	v := "no"
	if e.ForJudge() {
		v = "yes"
	}
	return map[string]string{HeaderJudge: v}
}

// Validate names the bad field.
func (e *Evaluation) Validate() error {
	if err := checkSchema("evaluation", e.Schema); err != nil {
		return err
	}
	if err := e.Candidate.Validate(); err != nil {
		return err
	}
	if e.ID != e.Candidate.ID {
		return invalid("evaluation.id", "%q differs from the candidate's id %q", e.ID, e.Candidate.ID)
	}
	if e.Campaign != e.Candidate.Campaign {
		return invalid("evaluation.campaign", "%q differs from the candidate's campaign %q", e.Campaign, e.Candidate.Campaign)
	}
	if math.IsNaN(e.Score) || math.IsInf(e.Score, 0) {
		return invalid("evaluation.score", "%v", e.Score)
	}
	if e.Valid && len(e.Reasons) > 0 && e.Reasons[0].Code == "" {
		return invalid("evaluation.reasons[0].code", "empty")
	}
	if !e.Valid && (e.Feasible || e.Stable || e.HullOutlier) {
		return invalid("evaluation.valid", "an invalid candidate cannot be feasible, stable or a hull outlier")
	}
	if e.Stable && e.HullOutlier {
		return invalid("evaluation.hull_outlier", "a hull outlier is not stable")
	}
	if b := e.HullOutlierBound; b < 0 || math.IsNaN(b) {
		return invalid("evaluation.hull_outlier_bound", "%v: a distance below the hull is not negative", b)
	}
	if g := e.SpaceGroup; g != nil && (g.Number < 1 || g.Number > 230 || g.Symbol == "") {
		return invalid("evaluation.space_group", "number %d, symbol %q: want 1–230 and a symbol", g.Number, g.Symbol)
	}
	if n := e.Novelty; n != nil && !slices.Contains(NoveltyClasses, n.Class) {
		return invalid("evaluation.novelty.class", "%q is none of %v", n.Class, NoveltyClasses)
	}
	switch e.Tier {
	case "", TierScreen:
		if e.Relaxation != nil || e.Screened != nil {
			return invalid("evaluation.tier", "%q with a relaxation", e.Tier)
		}
	case TierRelax:
		if e.Relaxation == nil || e.Screened == nil {
			return invalid("evaluation.tier", "relax without the relaxation and the screened values")
		}
		if err := e.Relaxation.Structure.validate("evaluation.relaxation.structure"); err != nil {
			return err
		}
	default:
		return invalid("evaluation.tier", "%q, want %q or %q", e.Tier, TierScreen, TierRelax)
	}
	for name, p := range e.Properties {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return invalid("evaluation.properties."+name+".value", "%v", p.Value)
		}
	}
	return nil
}

// RelaxJob asks the relax tier to relax a screened candidate
// (OracleRelax): its evaluation by the screen, which the relaxed one
// replaces.
type RelaxJob struct {
	Schema   int        `json:"schema"`
	Campaign string     `json:"campaign"`
	Screened Evaluation `json:"screened"`
	QueuedAt time.Time  `json:"queued_at"`
}

// MsgID is the job's deterministic message id: one job per candidate.
func (j *RelaxJob) MsgID() string { return "relax/" + j.Screened.ID }

// Validate names the bad field.
func (j *RelaxJob) Validate() error {
	if err := checkSchema("relax_job", j.Schema); err != nil {
		return err
	}
	if err := j.Screened.Validate(); err != nil {
		return err
	}
	if j.Campaign != j.Screened.Campaign {
		return invalid("relax_job.campaign", "%q differs from the evaluation's campaign %q", j.Campaign, j.Screened.Campaign)
	}
	if j.Screened.Tier == TierRelax {
		return invalid("relax_job.screened.tier", "already relaxed")
	}
	return nil
}

// Novelty classes (Novelty.Class): what a candidate is with respect to
// known compounds (pkg/novelty).
const (
	// NoveltyNew: the reduced formula is neither in the reference tables
	// nor among the known structures.
	NoveltyNew = "new"
	// NoveltyNewPolymorph: structures of the formula are known and none
	// matches: a new polymorph, whose values are the surrogates' (the
	// reference values are the known polymorph's) and whose energy above
	// the hull is measured against the known polymorph's energy.
	NoveltyNewPolymorph = "new_polymorph"
	// NoveltyKnownFormula: the formula is in the reference tables but no
	// structure of it is held: known by formula.
	NoveltyKnownFormula = "known_formula"
	// NoveltyKnownStructure: the structure matches a known structure
	// (pymatgen's StructureMatcher defaults, volumes scaled).
	NoveltyKnownStructure = "known_structure"
	// NoveltyOrderedMixture: a new formula above the hull whose hull facet
	// is made of its isovalent end members (NaLiF2 of NaF and LiF): an
	// ordered mixture of known phases, not a discovery.
	NoveltyOrderedMixture = "ordered_mixture"
)

// NoveltyClasses lists the novelty classes.
var NoveltyClasses = []string{NoveltyNew, NoveltyNewPolymorph, NoveltyKnownFormula, NoveltyKnownStructure, NoveltyOrderedMixture}

// Novelty says what a candidate is with respect to the known compounds.
type Novelty struct {
	// Class is one of NoveltyClasses.
	Class string `json:"class"`
	// Match is the known structure matched (class known_structure), as
	// "source:id" ("mp_dielectric_petousis2017:mp-1138"), and RMS the
	// matcher's normalised RMS displacement from it.
	Match string  `json:"match,omitempty"`
	RMS   float64 `json:"rms,omitempty"`
	// Polymorphs are the known structures of the formula (class
	// new_polymorph: none matches).
	Polymorphs []string `json:"polymorphs,omitempty"`
	// EndMembers are the isovalent end members of an ordered mixture and
	// their fractions of the atoms ({"NaF": 0.5, "LiF": 0.5}).
	EndMembers map[string]float64 `json:"end_members,omitempty"`
}

// Novel reports whether the class can be a discovery: a new compound or a
// new polymorph of a known one.
func (n *Novelty) Novel() bool {
	return n != nil && (n.Class == NoveltyNew || n.Class == NoveltyNewPolymorph)
}

// String writes the class and what it names: "new", "new_polymorph of
// prototype:rocksalt/LiF", "known_structure prototype:rocksalt/LiF",
// "ordered_mixture of LiF + NaF" (end members by fraction, then name).
func (n *Novelty) String() string {
	switch n.Class {
	case NoveltyKnownStructure:
		return n.Class + " " + n.Match
	case NoveltyNewPolymorph:
		return n.Class + " of " + strings.Join(n.Polymorphs, ", ")
	case NoveltyOrderedMixture:
		names := make([]string, 0, len(n.EndMembers))
		for f := range n.EndMembers {
			names = append(names, f)
		}
		slices.SortFunc(names, func(a, b string) int {
			if c := cmp.Compare(n.EndMembers[b], n.EndMembers[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		return n.Class + " of " + strings.Join(names, " + ")
	}
	return n.Class
}
