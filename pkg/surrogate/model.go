package surrogate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// The model file format.
const (
	// FormatName identifies a surrogate model file.
	FormatName = "crucible-surrogate"
	// FormatVersion is the version of the file layout this package
	// writes and reads; a file of another version is refused.
	FormatVersion = 1
	// DescriptorVersion numbers the descriptor code (features.go,
	// elements.go). It changes whenever a feature is computed differently,
	// so a model trained on other descriptors is refused rather than fed
	// features it was not trained on.
	DescriptorVersion = 2
	// ModelsDir is the folder of a data directory that holds the trained
	// surrogate models, one file per property (see Path).
	ModelsDir = "models/surrogate"
)

// Errors of model files and predictions.
var (
	// ErrModelFile: a model file that is malformed, of another format or
	// version, or made with other descriptors.
	ErrModelFile = errors.New("bad surrogate model file")
	// ErrOutsideDomain: the input is outside what the model is defined
	// for (a metal for the dielectric constant).
	ErrOutsideDomain = errors.New("input outside the surrogate's domain")
)

// Path is where the model of a property lives in the data directory dir.
func Path(dir, property string) string {
	return filepath.Join(dir, filepath.FromSlash(ModelsDir), property+".json")
}

// Training records how a model was trained, enough to reproduce it.
type Training struct {
	// File is the data file (in the data directory's TablesDir) and
	// SHA256 its checksum; Rows the data rows read, Samples the training
	// examples made of them.
	File    string `json:"file"`
	SHA256  string `json:"sha256"`
	Rows    int    `json:"rows"`
	Samples int    `json:"samples"`
	// Subset, when positive, is the number of samples drawn (by Seed) from
	// the data for a quick training; 0 means all.
	Subset int `json:"subset,omitempty"`
	// Seed of the folds, the subsample and the trees.
	Seed uint64 `json:"seed"`
	// Params of the boosting, defaults filled in; Trees the trees kept.
	Params TreeParams `json:"params"`
	Trees  int        `json:"trees"`
	// BandGap says which band gap the model was trained with, when it
	// takes one.
	BandGap string `json:"band_gap,omitempty"`
}

// Calibration is the model's uncertainty, measured by cross-validation.
type Calibration struct {
	// Basis says which cross-validated residuals these are.
	Basis string `json:"basis"`
	// MAELog10, Log10Q68 and Log10Q95: mean, 68 % and 95 % quantiles of
	// the absolute residual in log10 of the property (decades).
	MAELog10 float64 `json:"mae_log10"`
	Log10Q68 float64 `json:"abs_err_log10_68"`
	Log10Q95 float64 `json:"abs_err_log10_95"`
	// MAE, AbsQ68 and AbsQ95: the same in the property's unit.
	MAE    float64 `json:"mae"`
	AbsQ68 float64 `json:"abs_err_68"`
	AbsQ95 float64 `json:"abs_err_95"`
}

// Model is a trained surrogate as stored in its file: what it predicts,
// from which features, how it was trained and validated, and the trees.
// A Model is immutable once trained or loaded and safe for concurrent
// use.
type Model struct {
	Format            string `json:"format"`
	Version           int    `json:"version"`
	DescriptorVersion int    `json:"descriptor_version"`
	Property          string `json:"property"`
	Unit              string `json:"unit"`
	Description       string `json:"description"`
	// Target is the transform the trees predict: "log10" of the property.
	Target string `json:"target"`
	// Groups and Features are the descriptor groups and the names of the
	// features, in the trees' order.
	Groups   []string `json:"groups"`
	Features []string `json:"features"`
	// Inputs are the other properties the model needs ("band_gap").
	Inputs []string `json:"inputs,omitempty"`
	// MinBandGap, when positive: inputs with a smaller band gap (eV) are
	// outside the domain.
	MinBandGap float64 `json:"min_band_gap,omitempty"`
	// ZeroIfCentrosymmetric: a structure with an inversion centre (within
	// InversionTolerance Å) has the value 0 exactly, by symmetry.
	ZeroIfCentrosymmetric bool    `json:"zero_if_centrosymmetric,omitempty"`
	InversionTolerance    float64 `json:"inversion_tolerance,omitempty"`

	Training    Training    `json:"training"`
	CV          Report      `json:"cross_validation"`
	Uncertainty Calibration `json:"uncertainty"`
	Ensemble    Ensemble    `json:"ensemble"`
}

// NeedsStructure reports whether Predict needs a structure.
func (m *Model) NeedsStructure() bool { return slices.Contains(m.Groups, GroupStructure) }

// Predict returns the property's value for the input and its uncertainty,
// both in the model's unit. The uncertainty is the cross-validated 68 %
// quantile q of the absolute error in log10, propagated to first order:
// ln 10 · value · q, as the oracle does for its log10 CGCNN moduli (the
// exact interval is asymmetric; see Interval).
//
// A structure is needed unless the model is composition-only
// (ErrNeedsStructure); missing input properties are ErrMissingInput; a
// band gap below MinBandGap is ErrOutsideDomain. A centrosymmetric
// structure gets 0 ± 0 from a model with ZeroIfCentrosymmetric.
func (m *Model) Predict(in Input) (value, uncertainty float64, err error) {
	if m.NeedsStructure() && in.Structure == nil {
		return 0, 0, fmt.Errorf("%s: %w", m.Property, ErrNeedsStructure)
	}
	if m.MinBandGap > 0 {
		gap, err := in.bandGap()
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", m.Property, err)
		}
		if gap < m.MinBandGap {
			return 0, 0, fmt.Errorf("%s: %w: band gap %.3g eV below %.3g eV (a metal has no static dielectric constant)",
				m.Property, ErrOutsideDomain, gap, m.MinBandGap)
		}
	}
	if m.ZeroIfCentrosymmetric && in.Structure != nil && Centrosymmetric(in.Structure, m.InversionTolerance) {
		return 0, 0, nil
	}
	x, err := Featurize(m.Groups, in)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", m.Property, err)
	}
	value = math.Pow(10, m.Ensemble.Predict(x))
	return value, math.Ln10 * value * m.Uncertainty.Log10Q68, nil
}

// Interval returns the interval around a predicted value that held the
// true value in the given fraction of cross-validation predictions: 0.68
// or 0.95 (the calibrated quantiles q of the log10 error), as
// [value·10^−q, value·10^q].
func (m *Model) Interval(value, level float64) (lo, hi float64, err error) {
	var q float64
	switch level {
	case 0.68:
		q = m.Uncertainty.Log10Q68
	case 0.95:
		q = m.Uncertainty.Log10Q95
	default:
		return 0, 0, fmt.Errorf("interval level %g: calibrated for 0.68 and 0.95 only", level)
	}
	f := math.Pow(10, q)
	return value / f, value * f, nil
}

// Save writes the model as JSON: everything but the trees indented for
// reading, the ensemble compact on the last line.
func (m *Model) Save(w io.Writer) error {
	head := *m
	head.Ensemble = Ensemble{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(head); err != nil {
		return err
	}
	hb := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	eb, err := json.Marshal(m.Ensemble)
	if err != nil {
		return err
	}
	// Replace the empty ensemble, the head's last field, by the real one.
	const empty = `"ensemble": {
  "features": 0,
  "base": 0,
  "trees": null
 }
}`
	if !bytes.HasSuffix(hb, []byte(empty)) {
		return errors.New("surrogate: unexpected layout of the model header")
	}
	hb = hb[:len(hb)-len(empty)]
	for _, part := range [][]byte{hb, []byte(`"ensemble": `), eb, []byte("\n}\n")} {
		if _, err := w.Write(part); err != nil {
			return err
		}
	}
	return nil
}

// SaveFile writes the model to path, creating its folder, through a
// temporary file renamed into place so a reader never sees half a model.
func (m *Model) SaveFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".surrogate-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Load reads a model written by Save and checks it: format, version and
// descriptor version, unknown keys (refused), the feature list against
// the descriptor code, and every tree.
func Load(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var m Model
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModelFile, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModelFile, m.Property, err)
	}
	return &m, nil
}

// LoadFile reads the model at path.
func LoadFile(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// check validates a decoded model.
// ErrDescriptorVersion is matched (errors.Is) by a model file trained on
// descriptors this build no longer computes.
var ErrDescriptorVersion = errors.New("model trained on other descriptors")

func (m *Model) check() error {
	if m.Format != FormatName {
		return fmt.Errorf("format %q, want %q", m.Format, FormatName)
	}
	if m.Version != FormatVersion {
		return fmt.Errorf("format version %d, this build reads %d", m.Version, FormatVersion)
	}
	if m.DescriptorVersion != DescriptorVersion {
		return fmt.Errorf("%w: descriptor version %d, this build computes %d: retrain the model", ErrDescriptorVersion, m.DescriptorVersion, DescriptorVersion)
	}
	if m.Property == "" {
		return errors.New("no property")
	}
	if m.Target != "log10" {
		return fmt.Errorf("target transform %q, want log10", m.Target)
	}
	names, err := FeatureNames(m.Groups)
	if err != nil {
		return err
	}
	if !slices.Equal(names, m.Features) {
		return fmt.Errorf("the file's %d features differ from the %d the descriptor code makes for groups %v: retrain the model",
			len(m.Features), len(names), m.Groups)
	}
	for _, in := range m.Inputs {
		if in != "band_gap" {
			return fmt.Errorf("unknown input property %q", in)
		}
	}
	if slices.Contains(m.Groups, GroupBandGap) != slices.Contains(m.Inputs, "band_gap") {
		return errors.New("band_gap group and inputs disagree")
	}
	if m.ZeroIfCentrosymmetric && !(m.InversionTolerance > 0) {
		return fmt.Errorf("inversion tolerance %v must be positive", m.InversionTolerance)
	}
	u := m.Uncertainty
	for _, v := range []float64{u.MAELog10, u.Log10Q68, u.Log10Q95, u.MAE, u.AbsQ68, u.AbsQ95, m.MinBandGap} {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("uncertainty %v must be finite and non-negative", v)
		}
	}
	return m.Ensemble.check(len(m.Features))
}

// check validates an ensemble for nf features: finite numbers, feature
// indices in range, children after their parent (so every walk ends).
func (e *Ensemble) check(nf int) error {
	if e.Features != nf {
		return fmt.Errorf("ensemble takes %d features, the model lists %d", e.Features, nf)
	}
	if math.IsNaN(e.Base) || math.IsInf(e.Base, 0) {
		return fmt.Errorf("base %v", e.Base)
	}
	if len(e.Trees) == 0 {
		return errors.New("no trees")
	}
	for ti, t := range e.Trees {
		if len(t) == 0 {
			return fmt.Errorf("tree %d is empty", ti)
		}
		for i, n := range t {
			if n.Feature < 0 {
				if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
					return fmt.Errorf("tree %d node %d: leaf value %v", ti, i, n.Value)
				}
				continue
			}
			if n.Feature >= nf {
				return fmt.Errorf("tree %d node %d: feature %d of %d", ti, i, n.Feature, nf)
			}
			if math.IsNaN(n.Threshold) || math.IsInf(n.Threshold, 0) {
				return fmt.Errorf("tree %d node %d: threshold %v", ti, i, n.Threshold)
			}
			if n.Left <= i || n.Right <= i || n.Left >= len(t) || n.Right >= len(t) {
				return fmt.Errorf("tree %d node %d: children %d, %d", ti, i, n.Left, n.Right)
			}
		}
	}
	return nil
}
