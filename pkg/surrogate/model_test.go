package surrogate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// toyModel is a composition-only model of log10 y = mean electronegativity,
// fitted on a few hundred random binary compositions.
func toyModel(t *testing.T) *Model {
	t.Helper()
	groups := []string{GroupMagpie}
	names, err := FeatureNames(groups)
	if err != nil {
		t.Fatal(err)
	}
	els := []string{"Li", "Na", "Mg", "Al", "Si", "Ti", "Fe", "Cu", "Zn", "O", "S", "Cl", "Se", "Te", "Bi"}
	var X [][]float64
	var y []float64
	for i, a := range els {
		for j, b := range els {
			if i == j {
				continue
			}
			for _, k := range []float64{1, 2, 3} {
				c, _ := crystal.NewComposition(crystal.ElementAmount{Element: crystal.MustElement(a), Amount: 1},
					crystal.ElementAmount{Element: crystal.MustElement(b), Amount: k})
				x, err := Featurize(groups, Input{Composition: c})
				if err != nil {
					t.Fatal(err)
				}
				X = append(X, x)
				y = append(y, feature(t, groups, x, "electronegativity_mean"))
			}
		}
	}
	e, info, err := Fit(X, y, TreeParams{Seed: 1, LearningRate: 0.1, Trees: 300})
	if err != nil {
		t.Fatal(err)
	}
	return &Model{
		Format: FormatName, Version: FormatVersion, DescriptorVersion: DescriptorVersion,
		Property: "toy", Unit: "S/cm", Target: "log10", Groups: groups, Features: names,
		Training:    Training{Samples: len(y), Trees: info.Trees, Params: TreeParams{}.withDefaults()},
		Uncertainty: Calibration{MAELog10: 0.05, Log10Q68: 0.1, Log10Q95: 0.3, MAE: 1, AbsQ68: 1, AbsQ95: 3},
		Ensemble:    *e,
	}
}

func TestModelRoundTrip(t *testing.T) {
	m := toyModel(t)
	path := filepath.Join(t.TempDir(), "models", "toy.json")
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"NaCl", "Bi2Te3", "FeO", "CuSe2"} {
		in := Input{Composition: crystal.MustParseFormula(f)}
		v1, u1, err1 := m.Predict(in)
		v2, u2, err2 := back.Predict(in)
		if err1 != nil || err2 != nil || v1 != v2 || u1 != u2 {
			t.Errorf("%s: %v ± %v (%v) before, %v ± %v (%v) after", f, v1, u1, err1, v2, u2, err2)
		}
		x, _ := Featurize(m.Groups, in)
		want := math.Pow(10, feature(t, m.Groups, x, "electronegativity_mean"))
		if math.Abs(math.Log10(v1/want)) > 0.1 {
			t.Errorf("%s: predicted %.4g, the toy function is %.4g", f, v1, want)
		}
		if math.Abs(u1-math.Ln10*v1*0.1) > 1e-12 {
			t.Errorf("%s: uncertainty %v, want ln10 · value · q68", f, u1)
		}
	}
	lo, hi, err := m.Interval(10, 0.95)
	if err != nil || math.Abs(lo-10/math.Pow(10, 0.3)) > 1e-12 || math.Abs(hi-10*math.Pow(10, 0.3)) > 1e-12 {
		t.Errorf("Interval(10, 0.95) = %v, %v, %v", lo, hi, err)
	}
	if _, _, err := m.Interval(10, 0.9); err == nil {
		t.Error("uncalibrated interval level accepted")
	}
}

// TestLoadRefuses: malformed or incompatible files are refused with
// ErrModelFile and a reason.
func TestLoadRefuses(t *testing.T) {
	var buf bytes.Buffer
	if err := toyModel(t).Save(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	edit := func(f func(map[string]any)) []byte {
		var doc map[string]any
		if err := json.Unmarshal(good, &doc); err != nil {
			t.Fatal(err)
		}
		f(doc)
		b, _ := json.Marshal(doc)
		return b
	}
	firstTree := func(doc map[string]any) []any {
		return doc["ensemble"].(map[string]any)["trees"].([]any)[0].([]any)
	}
	for _, c := range []struct {
		name string
		data []byte
		why  string
	}{
		{"not JSON", []byte("{"), "unexpected EOF"},
		{"unknown key", edit(func(d map[string]any) { d["colour"] = "blue" }), "unknown field"},
		{"format", edit(func(d map[string]any) { d["format"] = "other" }), "format"},
		{"version", edit(func(d map[string]any) { d["version"] = 99 }), "format version 99"},
		{"descriptors", edit(func(d map[string]any) { d["descriptor_version"] = 0 }), "retrain"},
		{"features", edit(func(d map[string]any) { d["features"] = d["features"].([]any)[1:] }), "features differ"},
		{"target", edit(func(d map[string]any) { d["target"] = "ln" }), "target"},
		{"input", edit(func(d map[string]any) { d["inputs"] = []string{"density"} }), "input"},
		{"uncertainty", edit(func(d map[string]any) { d["uncertainty"].(map[string]any)["abs_err_log10_68"] = -1 }), "uncertainty"},
		{"cycle", edit(func(d map[string]any) {
			root := firstTree(d)[0].(map[string]any)
			root["f"], root["l"], root["r"] = 0, 0, 0
		}), "children"},
		{"feature index", edit(func(d map[string]any) {
			root := firstTree(d)[0].(map[string]any)
			if root["f"].(float64) < 0 {
				t.Fatal("first tree is a leaf")
			}
			root["f"] = 10000
		}), "feature 10000"},
	} {
		_, err := Load(bytes.NewReader(c.data))
		if !errors.Is(err, ErrModelFile) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: err = %v, want ErrModelFile mentioning %q", c.name, err, c.why)
		}
	}
}

func TestPredictDomain(t *testing.T) {
	m := toyModel(t)
	m.Groups = append(m.Groups, GroupBandGap)
	m.Features, _ = FeatureNames(m.Groups)
	m.Inputs, m.MinBandGap = []string{"band_gap"}, 0.1
	m.Ensemble.Features = len(m.Features)
	nacl := crystal.MustParseFormula("NaCl")
	for _, c := range []struct {
		name  string
		props map[string]float64
		want  error
	}{
		{"no gap", nil, ErrMissingInput},
		{"metal", map[string]float64{"band_gap": 0}, ErrOutsideDomain},
	} {
		if _, _, err := m.Predict(Input{Composition: nacl, Properties: c.props}); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if _, _, err := m.Predict(Input{Composition: nacl, Properties: map[string]float64{"band_gap": 5}}); err != nil {
		t.Errorf("insulator: %v", err)
	}
	s := toyModel(t)
	s.Groups = []string{GroupMagpie, GroupStructure}
	if _, _, err := s.Predict(Input{Composition: nacl}); !errors.Is(err, ErrNeedsStructure) {
		t.Errorf("composition to a structure model: %v", err)
	}
}
