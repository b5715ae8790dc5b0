package cgcnn

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// cubic returns a structure with a cubic lattice of edge a (Å).
func cubic(t *testing.T, a float64, species []crystal.Element, frac []crystal.Vec3) *crystal.Structure {
	t.Helper()
	l, err := crystal.LatticeFromParameters(a, a, a, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	s, err := crystal.NewStructure(l, species, frac)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// smallTable is an atom feature table covering only H and O.
func smallTable(t *testing.T) *AtomFeatures {
	t.Helper()
	a, err := ReadAtomFeatures(strings.NewReader(`{"1": [1, 0, 0.5], "8": [0, 1, 0.25]}`))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestFeaturizeRejectsInvalidStructures(t *testing.T) {
	h, o, xe := crystal.MustElement("H"), crystal.MustElement("O"), crystal.MustElement("Xe")
	atoms := smallTable(t)
	for _, tc := range []struct {
		name string
		s    *crystal.Structure
		want error
		msg  string
	}{
		{"no sites", &crystal.Structure{}, ErrNoSites, "no sites"},
		{"element outside the table", cubic(t, 3, []crystal.Element{h, xe}, []crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}}),
			ErrUnsupportedElement, "site 1 is Xe"},
		{"invalid element", &crystal.Structure{Lattice: cubic(t, 3, []crystal.Element{h}, []crystal.Vec3{{}}).Lattice,
			Species: []crystal.Element{0}, Frac: []crystal.Vec3{{}}}, ErrUnsupportedElement, "site 0"},
		{"isolated atom", cubic(t, 20, []crystal.Element{o}, []crystal.Vec3{{0, 0, 0}}), ErrIsolatedAtom, "site 0 (O)"},
		{"one isolated atom of two", cubic(t, 30, []crystal.Element{h, o, h}, []crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}, {0.02, 0, 0}}),
			ErrIsolatedAtom, "site 1 (O)"},
		{"mismatched sites", &crystal.Structure{Species: []crystal.Element{h, h}, Frac: []crystal.Vec3{{}}}, ErrInvalidStructure, "coordinates"},
		{"no lattice", &crystal.Structure{Species: []crystal.Element{h}, Frac: []crystal.Vec3{{}}}, ErrInvalidStructure, "lattice of volume 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g Graph
			err := NewFeaturizer(atoms).Featurize(tc.s, &g)
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrInvalidStructure) {
				t.Fatalf("error %v, want %v (an ErrInvalidStructure)", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
}

// TestFeaturizePadsLikeCGCNN checks the padding of atoms with fewer than
// MaxNeighbors neighbours: index 0 at Radius + 1, Gaussians at 9 Å. In a
// simple cubic cell of 6 Å the atom's six images at 6 Å are one edge of
// weight 6, the six padded slots another.
func TestFeaturizePadsLikeCGCNN(t *testing.T) {
	o := crystal.MustElement("O")
	s := cubic(t, 6, []crystal.Element{o}, []crystal.Vec3{{0, 0, 0}})
	f := NewFeaturizer(smallTable(t))
	f.Full = true
	var g Graph
	if err := f.Featurize(s, &g); err != nil {
		t.Fatal(err)
	}
	if g.Padded() != 6 {
		t.Errorf("%d padded slots, want 6", g.Padded())
	}
	idx, dist := g.Neighbors(0)
	w, m := g.Weights(0), g.Multiplicities(0)
	if len(idx) != 2 || idx[0] != 0 || idx[1] != 0 || math.Abs(dist[0]-6) > 1e-12 || dist[1] != 9 ||
		w[0] != 6 || w[1] != 6 || m[0] != 6 || m[1] != 6 {
		t.Errorf("edges %v at %v Å, weights %v, multiplicities %v; want 0 at 6 and 9 Å, 6 each", idx, dist, w, m)
	}
	// exp(−(9 − 8)²/0.2²) for the last centre of the padded edge.
	last := g.gauss[NumGaussians+NumGaussians-1]
	if want := math.Exp(-25); math.Abs(last-want) > 1e-14*want {
		t.Errorf("padded slot's last Gaussian %v, want e^−25 = %v", last, want)
	}
}

func TestWindowStartCoversNonNegligibleGaussians(t *testing.T) {
	for d := 0.0; d <= 9.0; d += 0.001 {
		k0 := windowStart(d)
		if k0 < 0 || k0+gaussWindow > NumGaussians {
			t.Fatalf("d = %v: window [%d, %d) outside the centres", d, k0, k0+gaussWindow)
		}
		for k := range NumGaussians {
			x := (d - float64(k)*GaussianStep) / GaussianWidth
			if (k < k0 || k >= k0+gaussWindow) && math.Exp(-x*x) > math.Exp(-gaussHalfWindow*gaussHalfWindow)*(1+1e-9) {
				t.Fatalf("d = %v: centre %d (Gaussian %v) left out of window [%d, %d)", d, k, math.Exp(-x*x), k0, k0+gaussWindow)
			}
		}
	}
}

// TestPaddedStructuresMatchReference compares structures whose atoms have
// fewer than twelve neighbours with the reference implementation
// (internal/bench/predict/cgcnn_reference.py --predict, which pads as CGCNN's CIFData).
func TestPaddedStructuresMatchReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "padded_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Predictions map[string]map[string]float64 `json:"predictions"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	set := loadTestSet(t)
	for file, want := range ref.Predictions {
		s, err := crystal.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		preds, err := set.Predict(t.Context(), []*crystal.Structure{s})
		if err != nil || preds[0].Err != nil {
			t.Fatalf("%s: %v %v", file, err, preds[0].Err)
		}
		if preds[0].Padded == 0 {
			t.Errorf("%s: no padded neighbour slots reported", file)
		}
		for m, model := range set.Models() {
			if d := math.Abs(preds[0].Values[m] - want[model.Name]); d > parityTol {
				t.Errorf("%s %s: %v, reference %v", file, model.Name, preds[0].Values[m], want[model.Name])
			}
		}
	}
	if len(ref.Predictions) < 3 {
		t.Errorf("%d reference structures, want 3", len(ref.Predictions))
	}
}

// TestAtomFeaturesTable checks the published table and the reader's errors.
func TestAtomFeaturesTable(t *testing.T) {
	a, err := LoadAtomFeatures(testbed.DataPath(t, "models", "cgcnn", AtomInitFile))
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != 92 {
		t.Errorf("%d features, want 92", a.Len())
	}
	for _, e := range crystal.Elements() {
		if !a.Has(e) {
			t.Errorf("no features for %v", e)
		}
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"x": [1]}`, `{"0": [1]}`, `{"1": [1, 2], "2": [1]}`, `{"1": []}`} {
		if _, err := ReadAtomFeatures(strings.NewReader(bad)); !errors.Is(err, ErrAtomFeatures) {
			t.Errorf("%q: error %v, want ErrAtomFeatures", bad, err)
		}
	}
}
