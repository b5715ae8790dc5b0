package surrogate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func rejectionCodes(ds *Dataset) map[string][]string {
	out := map[string][]string{}
	for _, r := range ds.Rejected {
		out[r.Code] = append(out[r.Code], r.ID)
	}
	return out
}

// TestLoadConductivity reads the hand-made ESTM fixture: rows outside
// 280–320 K dropped, bad rows rejected with reasons, duplicates of one
// composition aggregated by the median of log10 σ, sources linked into
// groups.
func TestLoadConductivity(t *testing.T) {
	ds, err := LoadDataset("conductivity", "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Rows != 10 {
		t.Errorf("%d rows, want 10", ds.Rows)
	}
	codes := rejectionCodes(ds)
	for code, want := range map[string][]string{
		RejectValue:   {"PbTe", "ZnO"}, // σ = 0; temperature "hot"
		RejectFormula: {"Xx2O3"},
		RejectElement: {"HeNa"},
	} {
		if !slices.Equal(codes[code], want) {
			t.Errorf("%s: %v, want %v", code, codes[code], want)
		}
	}
	bySID := map[string]Sample{}
	for _, s := range ds.Samples {
		bySID[s.Composition.ReducedFormula()] = s
	}
	if len(ds.Samples) != 3 {
		t.Fatalf("%d samples, want Bi2Te3, SnSe, Zn0.98Al0.02O", len(ds.Samples))
	}
	// Bi2Te3 at 300, 298 (as Bi4Te6) and 310 K: 1e5, 1e4, 1e3 S/m → the
	// median 1e4 S/m = 100 S/cm; the 400 K row is out of the window.
	bt := bySID["Bi2Te3"]
	if math.Abs(bt.Target-100) > 1e-9 || !slices.Equal(bt.Rows, []int{1, 3, 4}) {
		t.Errorf("Bi2Te3: σ %v S/cm from rows %v, want 100 from 1, 3, 4", bt.Target, bt.Rows)
	}
	// Bi2Te3 and SnSe share source b: one group; ZnAlO is alone.
	sn, zn := bySID["SnSe"], ds.Samples[2]
	if bt.Group != sn.Group || zn.Group == bt.Group {
		t.Errorf("groups: Bi2Te3 %q, SnSe %q, Zn0.98Al0.02O %q", bt.Group, sn.Group, zn.Group)
	}
	if math.Abs(zn.Target-500) > 1e-9 {
		t.Errorf("Zn0.98Al0.02O: %v S/cm, want 500", zn.Target)
	}
}

func TestLoadPiezoFixture(t *testing.T) {
	ds, err := LoadDataset("piezo_max_eij", "testdata")
	if err != nil {
		t.Fatal(err)
	}
	codes := rejectionCodes(ds)
	for code, want := range map[string][]string{
		RejectValue:     {"fx-3"},
		RejectStructure: {"fx-4", "fx-5"},
		RejectFormula:   {"fx-6"},
	} {
		if !slices.Equal(codes[code], want) {
			t.Errorf("%s: %v, want %v", code, codes[code], want)
		}
	}
	if len(ds.Samples) != 2 || ds.Samples[0].ID != "fx-1" || ds.Samples[1].Target != 0.005 || ds.Samples[0].Structure.NumSites() != 2 {
		t.Errorf("samples %+v", ds.Samples)
	}
	data, _ := os.ReadFile(filepath.Join("testdata", TablesDir, "mp_piezo_dejong2015.csv"))
	if len(ds.SHA256) != 64 || len(data) == 0 {
		t.Errorf("sha256 %q", ds.SHA256)
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	if _, err := LoadDataset("band_gap", "testdata"); !errors.Is(err, ErrUnknownProperty) {
		t.Errorf("unknown property: %v", err)
	}
	if _, err := LoadDataset("dielectric_constant", "testdata"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, TablesDir), 0o755)
	os.WriteFile(filepath.Join(dir, TablesDir, "expt_thermoelectric_estm.csv"), []byte("Formula,temperature(K)\nBi2Te3,300\n"), 0o644)
	if _, err := LoadDataset("conductivity", dir); !errors.Is(err, ErrData) {
		t.Errorf("missing column: %v", err)
	}
}

func TestCompositionKey(t *testing.T) {
	same := [][2]string{{"Ag2.0Se0.5Te0.5", "Ag4SeTe"}, {"Bi2Te3", "Te3Bi2"}, {"BiSb(Se0.92Br0.08)3", "Bi1Sb1Se2.76Br0.24"}}
	for _, p := range same {
		if a, b := compositionKey(crystal.MustParseFormula(p[0])), compositionKey(crystal.MustParseFormula(p[1])); a != b {
			t.Errorf("%s → %s, %s → %s", p[0], a, p[1], b)
		}
	}
	if compositionKey(crystal.MustParseFormula("Bi2Te3")) == compositionKey(crystal.MustParseFormula("Bi2Te3.1")) {
		t.Error("Bi2Te3 and Bi2Te3.1 share a key")
	}
	for in, want := range map[string]string{
		"https://doi.org/10.1021/ACSAMI.0c22558": "10.1021/acsami.0c22558",
		"dx.doi.org/10.1021/jp3021408":           "10.1021/jp3021408",
		" 10.1039/c6ta03126a ":                   "10.1039/c6ta03126a",
	} {
		if got := normalizeDOI(in); got != want {
			t.Errorf("normalizeDOI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFolds(t *testing.T) {
	fold, err := Folds(103, 5, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	size := make([]int, 5)
	for _, f := range fold {
		size[f]++
	}
	if slices.Max(size)-slices.Min(size) > 1 {
		t.Errorf("fold sizes %v", size)
	}
	again, _ := Folds(103, 5, 1, nil)
	other, _ := Folds(103, 5, 2, nil)
	if !slices.Equal(fold, again) || slices.Equal(fold, other) {
		t.Error("folds not reproducible by seed")
	}
	groups := make([]string, 103)
	for i := range groups {
		groups[i] = string(rune('a' + i%17))
	}
	g, err := Folds(103, 5, 1, groups)
	if err != nil {
		t.Fatal(err)
	}
	where := map[string]int{}
	size = make([]int, 5)
	for i, f := range g {
		if w, ok := where[groups[i]]; ok && w != f {
			t.Fatalf("group %s in folds %d and %d", groups[i], w, f)
		}
		where[groups[i]] = f
		size[f]++
	}
	if slices.Min(size) < 14 {
		t.Errorf("grouped fold sizes %v unbalanced", size)
	}
	if _, err := Folds(3, 5, 1, nil); err == nil {
		t.Error("5 folds of 3 samples accepted")
	}
	if _, err := Folds(10, 5, 1, []string{"a", "a", "a", "a", "a", "b", "b", "b", "b", "c"}); err == nil {
		t.Error("3 groups for 5 folds accepted")
	}
}
