package cgcnn

import (
	"math"
	"testing"
)

// TestCrystalFeaturesFeedHead checks that CrystalFeatures is the input of
// the model's head: softplus, the hidden layers and the output layer
// applied to it give Eval's value, for every checkpoint and golden
// structure.
func TestCrystalFeaturesFeedHead(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t)
	structs := readGoldenCIFs(t, names)
	f := NewFeaturizer(set.AtomFeatures())
	for _, m := range set.Models() {
		f.Full = f.Full || m.NeedsFullExpansion()
	}
	var g Graph
	var ws Workspace
	var feats []float64
	for i, s := range structs {
		if err := f.Featurize(s, &g); err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		for _, m := range set.Models() {
			want, err := m.Eval(&ws, &g)
			if err != nil {
				t.Fatal(err)
			}
			feats, err = m.CrystalFeatures(&ws, &g, feats)
			if err != nil {
				t.Fatal(err)
			}
			if len(feats) != m.AtomFeaLen {
				t.Fatalf("%s: %d features, want %d", m.Name, len(feats), m.AtomFeaLen)
			}
			cur := make([]float64, len(feats))
			softplusVec(cur, feats)
			for _, fc := range m.fcs {
				next := make([]float64, fc.nOut)
				fc.apply(next, cur)
				softplusVec(next, next)
				cur = next
			}
			y := make([]float64, m.out.nOut)
			m.out.apply(y, cur)
			got := y[0]*m.Std + m.Mean
			if m.Task == Classification {
				got = classOneProbability(y[0], y[1])
			}
			if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("%s %s: head of CrystalFeatures gives %.15g, Eval %.15g", names[i], m.Name, got, want)
			}
		}
	}
}

// TestCrystalFeaturesNoSites checks the empty graph's error.
func TestCrystalFeaturesNoSites(t *testing.T) {
	set := loadTestSet(t, "band-gap")
	if _, err := set.Models()[0].CrystalFeatures(&Workspace{}, &Graph{}, nil); err != ErrNoSites {
		t.Fatalf("got %v, want ErrNoSites", err)
	}
}
