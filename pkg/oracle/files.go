package oracle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/energy"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/relax"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
	"github.com/crucible-sci/crucible/pkg/task"
)

// FileResult is the oracle's verdict on one structure file, or why the
// file could not be read or evaluated.
type FileResult struct {
	File string
	// Structure is the structure evaluated; nil when Err is set.
	Structure *crystal.Structure
	Result    Result
	// Err is set for a file without a structure to evaluate; Result then
	// holds only the reason (SetErr).
	Err error
	// Relaxed is the M3GNet relaxation Structure came from (PredictFiles
	// with a calculator); nil otherwise.
	Relaxed *energy.Relaxed
}

// SetErr records why the file has no structure to evaluate: Err, and the
// reason with its code in Result.
func (f *FileResult) SetErr(code crystal.ReasonCode, err error) {
	f.Structure, f.Err = nil, err
	f.Result.Reasons = []Reason{{Code: code, Detail: err.Error()}}
}

// ReadFiles reads every file. One that cannot be read is a result with Err
// set (unreadable, or formula_mismatch for a candidate whose formula
// disagrees with its species), not an error.
func ReadFiles(files []string) []FileResult {
	out := make([]FileResult, len(files))
	for i, path := range files {
		out[i].File = path
		s, err := crystal.ReadFile(path)
		if err != nil {
			code := crystal.ReasonUnreadable
			if errors.Is(err, crystal.ErrFormulaMismatch) {
				code = crystal.ReasonFormulaMismatch
			}
			out[i].SetErr(code, err)
			continue
		}
		out[i].Structure = s
	}
	return out
}

// PredictFiles reads every file, relaxes the structures on calc's
// potential first when calc is not nil (on up to workers goroutines; a
// structure that cannot be relaxed gets the reason relaxation_failed, and
// one of more atoms than the validity limit is not relaxed), and
// evaluates them in one batch (EvaluateFiles).
func (o *Oracle) PredictFiles(ctx context.Context, calc *energy.Calculator, paths []string, withHull bool, workers int) (files []FileResult, failed int, err error) {
	files = ReadFiles(paths)
	if calc != nil {
		var sts []*crystal.Structure
		var which []int
		for i, f := range files {
			// Cells the oracle will not predict (too many atoms) are not relaxed.
			if f.Err == nil && f.Structure.NumSites() <= crystal.DefaultMaxAtoms {
				sts, which = append(sts, f.Structure), append(which, i)
			}
		}
		res, errs := calc.RelaxAll(ctx, sts, relax.Options{}, workers)
		for k, i := range which {
			if errs[k] != nil {
				files[i].SetErr("relaxation_failed", errs[k])
				continue
			}
			files[i].Relaxed, files[i].Structure = res[k], res[k].Structure
		}
	}
	failed, err = o.EvaluateFiles(ctx, files, withHull)
	return files, failed, err
}

// EvaluateFiles evaluates the structures of the files without Err in one
// batch (Evaluate), with their stability when withHull is set and every
// property of the own surrogates and the plug-ins, and returns how many
// files have Err.
func (o *Oracle) EvaluateFiles(ctx context.Context, files []FileResult, withHull bool) (failed int, err error) {
	var reqs []Request
	var which []int
	props := OwnProperties()
	for _, ext := range o.opts.External {
		props = append(props, ext.Model().Property)
	}
	for i, f := range files {
		if f.Err != nil {
			failed++
			continue
		}
		reqs = append(reqs, Request{Structure: f.Structure, Hull: withHull, Properties: props})
		which = append(which, i)
	}
	results, err := o.Evaluate(ctx, reqs)
	if err != nil {
		return 0, err
	}
	for k, i := range which {
		files[i].Result = results[k]
	}
	return failed, nil
}

// FileRecord is a FileResult as "crucible predict --json" writes it: every
// key present, reasons an empty list rather than null.
type FileRecord struct {
	File            string                 `json:"file"`
	Formula         string                 `json:"formula"`
	Class           *string                `json:"class"`
	Valid           bool                   `json:"valid"`
	Predicted       bool                   `json:"predicted"`
	Known           bool                   `json:"known"`
	Novelty         *messages.Novelty      `json:"novelty"`
	OxidationStates map[string]float64     `json:"oxidation_states,omitempty"`
	Reasons         []Reason               `json:"reasons"`
	Warnings        []Reason               `json:"warnings,omitempty"`
	Properties      map[string]RecordValue `json:"properties"`
	// SpaceGroup is the structure's space group at the default tolerance
	// (spacegroup.DefaultSymPrec); absent when it cannot be detected.
	SpaceGroup *spacegroup.Name `json:"space_group,omitempty"`
	// Relaxation summarises the relaxation the structure came from.
	Relaxation *energy.Summary `json:"relaxation,omitempty"`
}

// RecordValue is a property of a FileRecord: uncertainty is always present
// (0 for exact sources).
type RecordValue struct {
	Value       float64 `json:"value"`
	Unit        string  `json:"unit"`
	Source      string  `json:"source"`
	Uncertainty float64 `json:"uncertainty"`
	// TieSpread is the value's tie spread (Value.TieSpread), always
	// present (0 without ties of different elements at CGCNN's cut).
	TieSpread float64  `json:"tie_spread"`
	Surrogate *float64 `json:"surrogate,omitempty"`
	// MetalProbability and Metallic: the metal rule, on a CGCNN band gap
	// (MetalRule).
	MetalProbability *float64 `json:"metal_probability,omitempty"`
	Metallic         bool     `json:"metallic,omitempty"`
	// Calibrated is the measured error, when a calibration is in use.
	Calibrated *Calibrated `json:"calibrated,omitempty"`
}

// StabilityRecord is the stability of a FileResult as "crucible predict
// --hull --json" writes it: null values when it could not be computed.
type StabilityRecord struct {
	EAboveHull    *float64           `json:"e_above_hull"`
	HullEnergy    *float64           `json:"hull_energy_per_atom"`
	Decomposition map[string]float64 `json:"decomposition"`
}

// Record is the result as a FileRecord.
func (f FileResult) Record() FileRecord {
	r := f.Result
	rec := FileRecord{
		File: f.File, Formula: r.Formula, Valid: r.Valid, Predicted: r.Predicted, Known: r.Known, Novelty: r.Novelty,
		OxidationStates: r.OxidationStates, Reasons: r.Reasons, Warnings: r.Warnings, Properties: map[string]RecordValue{},
		SpaceGroup: r.SpaceGroup, Relaxation: f.Relaxed.Summary(),
	}
	if r.Class != "" {
		class := string(r.Class)
		rec.Class = &class
	}
	if rec.Reasons == nil {
		rec.Reasons = []Reason{}
	}
	for name, v := range r.Properties {
		rec.Properties[name] = RecordValue{Value: v.Value, Unit: v.Unit, Source: string(v.Source), Uncertainty: v.Uncertainty, TieSpread: v.TieSpread, Surrogate: v.Surrogate,
			MetalProbability: v.MetalProbability, Metallic: v.Metallic, Calibrated: v.Calibrated}
	}
	return rec
}

// StabilityRecord is the result's stability as a StabilityRecord.
func (f FileResult) StabilityRecord() StabilityRecord {
	var rec StabilityRecord
	if st := f.Result.Stability; st != nil {
		rec.EAboveHull, rec.HullEnergy, rec.Decomposition = &st.EAboveHull, &st.HullEnergy, st.Decomposition
	}
	return rec
}

// PropertyNames lists the properties of the result in the task registry's
// order.
func (r Result) PropertyNames() []string {
	var out []string
	for _, name := range task.PropertyNames() {
		if _, ok := r.Properties[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// stabilityLine is a line of "crucible predict --hull --json".
type stabilityLine struct {
	FileRecord
	StabilityRecord
}

// WriteJSON writes the result as one line of "crucible predict --json":
// the FileRecord, and the StabilityRecord with withHull.
func (f FileResult) WriteJSON(w io.Writer, withHull bool) error {
	var v any = f.Record()
	if withHull {
		v = stabilityLine{FileRecord: f.Record(), StabilityRecord: f.StabilityRecord()}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write %s: %w", f.File, err)
	}
	return nil
}

// Line is the result of a file with a structure as one line of "crucible
// predict": file, reduced formula, novelty, bonding class, validity (with
// the reasons), every property as Value.Text gives it, the space group,
// with withHull the energy above the hull and the decomposition, the
// relaxation, and the warnings.
func (f FileResult) Line(withHull bool) string {
	r := f.Result
	parts := []string{f.File, r.Formula}
	switch {
	case r.Novelty != nil:
		parts = append(parts, r.Novelty.String())
	case r.Known:
		parts = append(parts, "known")
	default:
		parts = append(parts, "novel")
	}
	if r.Class != "" {
		parts = append(parts, string(r.Class))
	}
	if r.Valid {
		parts = append(parts, "valid")
	} else {
		parts = append(parts, "invalid: "+ReasonsText(r.Reasons))
	}
	for _, name := range r.PropertyNames() {
		parts = append(parts, r.Properties[name].Text(name))
	}
	if sg := r.SpaceGroup; sg != nil {
		parts = append(parts, "space group "+sg.String())
	}
	if withHull && r.Stability != nil {
		st := r.Stability
		parts = append(parts, fmt.Sprintf("e_above_hull=%.4g eV/atom (%s energy)", st.EAboveHull, st.FormationEnergySource),
			"decomposition="+st.DecompositionText())
	}
	if rl := f.Relaxed.Summary(); rl != nil {
		parts = append(parts, fmt.Sprintf("relaxed: converged=%v steps=%d m3gnet_formation_energy=%s e_above_hull=%s",
			rl.Converged, rl.Steps, energy.PerAtomText(rl.FormationEnergyPerAtom), energy.PerAtomText(rl.EAboveHull)))
	}
	if len(r.Warnings) > 0 {
		parts = append(parts, "warning: "+ReasonsText(r.Warnings))
	}
	return strings.Join(parts, "  ")
}

// WritePredictions writes a line per file, the JSON object with asJSON,
// else the text line (an unreadable file's reason to ew instead).
func WritePredictions(w, ew io.Writer, files []FileResult, asJSON, withHull bool) error {
	for _, f := range files {
		var err error
		switch {
		case asJSON:
			err = f.WriteJSON(w, withHull)
		case f.Err != nil:
			_, err = fmt.Fprintf(ew, "%s: %s: %v\n", f.File, f.Result.Reasons[0].Code, f.Err)
		default:
			_, err = fmt.Fprintln(w, f.Line(withHull))
		}
		if err != nil {
			return err
		}
	}
	return nil
}
