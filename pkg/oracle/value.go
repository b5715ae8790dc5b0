package oracle

import (
	"math"
	"slices"
)

// Source says where a value comes from.
type Source string

// The sources of values.
const (
	// SourceCGCNN: predicted by a CGCNN checkpoint.
	SourceCGCNN Source = "cgcnn"
	// SourceReference: looked up in the reference tables (a known
	// compound).
	SourceReference Source = "reference"
	// SourceStructure: computed exactly from the structure.
	SourceStructure Source = "structure"
)

// Value is one property of a candidate. Its JSON form is that of
// messages.PropertyValue, plus tie_spread.
type Value struct {
	Value float64 `json:"value"`
	// Unit is the property's canonical unit (task registry); "" when
	// dimensionless.
	Unit   string `json:"unit"`
	Source Source `json:"source"`
	// Uncertainty is the surrogate's published test MAE in Unit (see
	// Surrogate.Uncertainty); 0 for exact sources and for the metal
	// classifier.
	Uncertainty float64 `json:"uncertainty,omitempty"`
	// TieSpread, for a surrogate value, is the uncertainty the structure's
	// ties add (in Unit): where neighbours of different elements are tied
	// at CGCNN's twelfth-neighbour cut, Value is the average over them
	// (cgcnn.TieTolerance), and TieSpread the largest difference between
	// Value and the prediction under another filling of the tied slots
	// (cgcnn.Prediction.Low and High). It adds to Uncertainty; 0 where
	// the choice cannot change the prediction.
	TieSpread float64 `json:"tie_spread,omitempty"`
	// Surrogate is the CGCNN value where a reference value won, or the
	// band-gap model's value where the metal rule set the gap to 0.
	Surrogate *float64 `json:"surrogate,omitempty"`
	// MetalProbability, on a CGCNN band gap, is the metal classifier's
	// probability that the structure is a metal (see MetalRule).
	MetalProbability *float64 `json:"metal_probability,omitempty"`
	// Metallic, on a CGCNN band gap, marks a structure the classifier
	// calls a metal (MetalProbability ≥ MetalThreshold): Value is 0.
	Metallic bool `json:"metallic,omitempty"`
	// Calibrated is the measured error of this tier for the property
	// (Options.Calibration), on a surrogate value: Uncertainty is then
	// its Q68 instead of the published MAE.
	Calibrated *Calibrated `json:"calibrated,omitempty"`
}

// Calibrated is a property's error measured on known compounds built as
// candidates are (pkg/calibrate), in the property's unit: mean absolute
// error, bias (mean of prediction − reference), and the 68 % and 95 %
// quantiles of the absolute error. Q68 is the calibrated standard error.
type Calibrated struct {
	Tier string  `json:"tier"`
	MAE  float64 `json:"mae"`
	Bias float64 `json:"bias"`
	Q68  float64 `json:"q68"`
	Q95  float64 `json:"q95"`
	// Log10, in Options.Calibration, marks errors in log10 of the property
	// (decades), as Crucible's own surrogates predict it; a value carries
	// them scaled to it (see calibrate), without the mark.
	Log10 bool `json:"log10,omitempty"`
	// Log10Q68, on a value that took a Log10 calibration, is its Q68 in
	// decades (the other figures being scaled to the value).
	Log10Q68 float64 `json:"log10_q68,omitempty"`
}

// calibrate gives the surrogate values of props their calibrated errors:
// Uncertainty becomes Q68 (a metal's band gap of 0 keeps none). A CGCNN
// value, or the relax tier's M3GNet formation energy, takes the errors as
// measured; an own surrogate's value
// (SourceSurrogate), whose errors are measured in log10 of the property,
// takes them scaled to its value to first order, as the models' own
// uncertainty is (surrogate.Model.Predict): δv = ln 10 · v · δlog10 v.
func calibrate(props map[string]Value, cal map[string]Calibrated) {
	for name, v := range props {
		c, ok := cal[name]
		if !ok || v.Metallic || name == "metal_probability" {
			continue
		}
		switch {
		case (v.Source == SourceCGCNN || v.Source == SourceM3GNet) && !c.Log10:
		case v.Source == SourceSurrogate && c.Log10:
			f := math.Ln10 * math.Abs(v.Value)
			c = Calibrated{Tier: c.Tier, MAE: f * c.MAE, Bias: f * c.Bias, Q68: f * c.Q68, Q95: f * c.Q95, Log10Q68: c.Q68}
		default:
			continue
		}
		v.Calibrated = &c
		v.Uncertainty = c.Q68
		props[name] = v
	}
}

// MetalThreshold is the metal classifier's probability at or above which
// a structure is a metal, as CGCNN's authors classify (Xie & Grossman,
// PRL 120, 145301 (2018): metal if the predicted probability > 0.5).
const MetalThreshold = 0.5

// MetalRule applies the metal classifier to a CGCNN band gap: the
// band-gap model is trained on every material, metals included, and gives
// metals gaps of eV (1.7 eV for copper), so a band gap is believed only
// for a structure the classifier calls non-metallic. With both a CGCNN
// band_gap and a metal_probability in props, the gap records the
// probability, and where it is at least MetalThreshold the gap becomes 0
// (Metallic, no uncertainty, the model's value in Surrogate). A reference
// band gap (a known compound's DFT value) is left as it is.
func MetalRule(props map[string]Value) {
	gap, ok := props["band_gap"]
	pm, ok2 := props["metal_probability"]
	if !ok || !ok2 || gap.Source != SourceCGCNN || pm.Source != SourceCGCNN {
		return
	}
	p := pm.Value
	gap.MetalProbability = &p
	if p >= MetalThreshold {
		model := gap.Value
		gap.Surrogate = &model
		gap.Value, gap.Uncertainty, gap.TieSpread, gap.Metallic = 0, 0, 0, true
	}
	props["band_gap"] = gap
}

// Surrogate is a CGCNN checkpoint as a property predictor.
type Surrogate struct {
	// Checkpoint is the checkpoint's file name without .pth.tar.
	Checkpoint string
	// Property is the canonical property name.
	Property string
	// MAE is the checkpoint's test mean absolute error as published, in
	// the model's output unit (log10 GPa for the moduli): Xie & Grossman,
	// PRL 120, 145301 (2018), Table 1. The metal/semiconductor classifier
	// has no regression error (the paper reports 80 % accuracy and an area
	// under the ROC curve of 0.95); its MAE is 0.
	MAE float64
	// Log10 marks a checkpoint that predicts log10 of the property: the
	// value is 10^y.
	Log10 bool
}

// Value converts a model output y into the property's unit.
func (s Surrogate) Value(y float64) float64 {
	if s.Log10 {
		return math.Pow(10, y)
	}
	return y
}

// TieSpread is the largest of |Value(lo) − v| and |Value(hi) − v|: the
// spread of model outputs lo … hi around the value v in the property's
// unit.
func (s Surrogate) TieSpread(v, lo, hi float64) float64 {
	return max(math.Abs(s.Value(lo)-v), math.Abs(s.Value(hi)-v))
}

// Uncertainty is the MAE expressed in the property's unit at value v. For
// a log10 model it is propagated to first order: with K = 10^y,
// δK = ln(10)·K·δy, so a bulk modulus of 100 GPa has 0.054·ln 10·100 ≈
// 12 GPa.
func (s Surrogate) Uncertainty(v float64) float64 {
	if s.Log10 {
		return math.Ln10 * v * s.MAE
	}
	return s.MAE
}

// surrogates are the property checkpoints, in registry order. The
// eighth published checkpoint, final-energy-per-atom (total DFT energy),
// is no property a task constrains.
var surrogates = []Surrogate{
	{Checkpoint: "formation-energy-per-atom", Property: "formation_energy_per_atom", MAE: 0.039},
	{Checkpoint: "band-gap", Property: "band_gap", MAE: 0.388},
	{Checkpoint: "bulk-moduli", Property: "bulk_modulus", MAE: 0.054, Log10: true},
	{Checkpoint: "shear-moduli", Property: "shear_modulus", MAE: 0.087, Log10: true},
	{Checkpoint: "poisson-ratio", Property: "poisson_ratio", MAE: 0.030},
	{Checkpoint: "efermi", Property: "efermi", MAE: 0.363},
	{Checkpoint: "semi-metal-classification", Property: "metal_probability"},
}

// Surrogates returns the CGCNN checkpoints the oracle can load.
func Surrogates() []Surrogate { return slices.Clone(surrogates) }

// surrogateByCheckpoint finds a surrogate by checkpoint name.
func surrogateByCheckpoint(name string) (Surrogate, bool) {
	for _, s := range surrogates {
		if s.Checkpoint == name {
			return s, true
		}
	}
	return Surrogate{}, false
}
