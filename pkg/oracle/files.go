package oracle

import (
	"context"
	"errors"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// FileResult is the oracle's verdict on one structure file, or why the file
// could not be read.
type FileResult struct {
	File   string
	Result Result
	// ReadErr is set for a file without a structure; Result then holds
	// only the reason (unreadable or formula_mismatch).
	ReadErr error
}

// EvaluateFiles reads every file and evaluates the structures in one batch
// (Evaluate). An unreadable file is a result with ReadErr set, not an
// error; unreadable counts them.
func (o *Oracle) EvaluateFiles(ctx context.Context, files []string, withHull bool) (results []FileResult, unreadable int, err error) {
	out := make([]FileResult, len(files))
	var reqs []Request
	var which []int
	for i, path := range files {
		out[i].File = path
		s, err := crystal.ReadFile(path)
		if err != nil {
			code := crystal.ReasonUnreadable
			if errors.Is(err, crystal.ErrFormulaMismatch) {
				code = crystal.ReasonFormulaMismatch
			}
			out[i].ReadErr = err
			out[i].Result.Reasons = []Reason{{Code: code, Detail: err.Error()}}
			unreadable++
			continue
		}
		reqs = append(reqs, Request{Structure: s, Hull: withHull})
		which = append(which, i)
	}
	evaluated, err := o.Evaluate(ctx, reqs)
	if err != nil {
		return nil, 0, err
	}
	for k, i := range which {
		out[i].Result = evaluated[k]
	}
	return out, unreadable, nil
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
	OxidationStates map[string]float64     `json:"oxidation_states,omitempty"`
	Reasons         []Reason               `json:"reasons"`
	Warnings        []Reason               `json:"warnings,omitempty"`
	Properties      map[string]RecordValue `json:"properties"`
}

// RecordValue is a property of a FileRecord: uncertainty is always present
// (0 for exact sources).
type RecordValue struct {
	Value       float64  `json:"value"`
	Unit        string   `json:"unit"`
	Source      string   `json:"source"`
	Uncertainty float64  `json:"uncertainty"`
	Surrogate   *float64 `json:"surrogate,omitempty"`
}

// FileHullRecord is a FileRecord with the stability keys, null when the
// stability could not be computed.
type FileHullRecord struct {
	FileRecord
	EAboveHull    *float64           `json:"e_above_hull"`
	HullEnergy    *float64           `json:"hull_energy_per_atom"`
	Decomposition map[string]float64 `json:"decomposition"`
}

// Record is the result as a FileRecord.
func (f FileResult) Record() FileRecord {
	r := f.Result
	rec := FileRecord{
		File: f.File, Formula: r.Formula, Valid: r.Valid, Predicted: r.Predicted, Known: r.Known,
		OxidationStates: r.OxidationStates, Reasons: r.Reasons, Warnings: r.Warnings, Properties: map[string]RecordValue{},
	}
	if r.Class != "" {
		class := string(r.Class)
		rec.Class = &class
	}
	if rec.Reasons == nil {
		rec.Reasons = []Reason{}
	}
	for name, v := range r.Properties {
		rec.Properties[name] = RecordValue{Value: v.Value, Unit: v.Unit, Source: string(v.Source), Uncertainty: v.Uncertainty, Surrogate: v.Surrogate}
	}
	return rec
}

// HullRecord is the result as a FileHullRecord.
func (f FileResult) HullRecord() FileHullRecord {
	rec := FileHullRecord{FileRecord: f.Record()}
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
