package evolve

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// ionsOfFormula returns the ions of a formula with their counts.
func ionsOfFormula(t testing.TB, f string) []ionAmount {
	t.Helper()
	ions, ok := parentIons(crystal.MustParseFormula(f))
	if !ok {
		t.Fatalf("%s has no ionic assignment", f)
	}
	var out []ionAmount
	for _, si := range ions {
		out = append(out, ionAmount{si.ion, float64(si.n)})
	}
	return out
}

func trendOf(t testing.TB, f, prop string) float64 {
	t.Helper()
	d, ok := describe(ionsOfFormula(t, f))
	if !ok {
		t.Fatalf("%s: no descriptors", f)
	}
	v, ok := d.trend(prop)
	if !ok {
		t.Fatalf("%s: no trend", prop)
	}
	return v
}

func TestTrendDirections(t *testing.T) {
	// Pairs (higher, lower) of the property, measured (Materials Project
	// PBE gaps and formation energies; moduli and densities from
	// experiment).
	tests := []struct {
		prop           string
		higher, lower  string
		measuredHigher float64
		measuredLower  float64
	}{
		{"band_gap", "MgO", "MgS", 4.45, 2.76},
		{"band_gap", "LiF", "LiI", 8.7, 4.1},
		{"band_gap", "AlN", "GaN", 4.1, 1.7},
		{"band_gap", "MgO", "FeO", 4.45, 0.6},
		{"band_gap", "CaO", "NiO", 3.4, 2.3},
		{"formation_energy_per_atom", "ZnO", "MgO", -1.8, -3.1},
		{"formation_energy_per_atom", "LiI", "LiF", -1.4, -3.2},
		{"formation_energy_per_atom", "Ga2O3", "Al2O3", -2.3, -3.4},
		{"bulk_modulus", "MgO", "BaO", 160, 70},
		{"bulk_modulus", "NaF", "NaI", 46, 15},
		{"density", "BaO", "MgO", 5.7, 3.6},
		{"density", "PbS", "ZnS", 7.6, 4.1},
	}
	for _, tt := range tests {
		h, l := trendOf(t, tt.higher, tt.prop), trendOf(t, tt.lower, tt.prop)
		if !(h > l) {
			t.Errorf("%s: %s (%.3g) should be above %s (%.3g): trend %.3f vs %.3f", tt.prop, tt.higher, tt.measuredHigher, tt.lower, tt.measuredLower, h, l)
		}
	}
}

func TestNeeds(t *testing.T) {
	tk, err := task.ByName("High-k Dielectrics") // dielectric 10–90, gap 2.5–6.5
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		props map[string]float64
		want  map[string]need
	}{
		{"nothing known", nil, map[string]need{}},
		{"gap too small, dielectric unknown", map[string]float64{"band_gap": 1.5},
			map[string]need{"band_gap": {"band_gap", 1, 1 + 1.0/4}}},
		{"gap too large", map[string]float64{"band_gap": 7.5},
			map[string]need{"band_gap": {"band_gap", -1, 1 + 1.0/4}}},
		{"gap comfortable, dielectric thin", map[string]float64{"band_gap": 4.5, "dielectric_constant": 12},
			map[string]need{"band_gap": {"band_gap", -1, 0.15}, "dielectric_constant": {"dielectric_constant", 1, 0.3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]need{}
			for _, n := range needs(tk, tt.props) {
				got[n.prop] = n
			}
			if len(got) != len(tt.want) {
				t.Fatalf("needs %v, want %v", got, tt.want)
			}
			for k, w := range tt.want {
				g := got[k]
				if g.dir != w.dir || g.weight < w.weight-1e-9 || g.weight > w.weight+1e-9 {
					t.Errorf("%s: %+v, want %+v", k, g, w)
				}
			}
		})
	}
}

func TestDirection(t *testing.T) {
	tk := wideGap(t)
	ns := needs(tk, map[string]float64{"band_gap": 1.2, "formation_energy_per_atom": -0.7})
	znse := ionsOfFormula(t, "ZnSe")
	if d := direction(ns, znse, ionsOfFormula(t, "ZnO")); d <= 0 {
		t.Errorf("ZnSe → ZnO scores %.2f for a wider gap and lower formation energy", d)
	}
	if d := direction(ns, znse, ionsOfFormula(t, "ZnTe")); d >= 0 {
		t.Errorf("ZnSe → ZnTe scores %.2f", d)
	}
	if d := direction(nil, znse, ionsOfFormula(t, "ZnO")); d != 0 {
		t.Errorf("no needs, direction %.2f", d)
	}
	if p := prior(tk, ionsOfFormula(t, "MgF2")); !(p > prior(tk, ionsOfFormula(t, "FeS"))) {
		t.Errorf("task prior: MgF2 %.2f should exceed FeS %.2f", p, prior(tk, ionsOfFormula(t, "FeS")))
	}
}

// TestTrendRanksReference checks the claim in trend's documentation: the
// gap and formation-energy trends rank the reference compounds with
// Spearman ρ of about 0.56 and 0.81.
func TestTrendRanksReference(t *testing.T) {
	dir := testbed.DataDir(t)
	read := func(file string) map[string]float64 {
		f, err := os.Open(filepath.Join(dir, "data", file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, r := range rows[1:] {
			c, err := crystal.ParseFormula(r[0])
			if err != nil {
				continue
			}
			x, err := strconv.ParseFloat(r[1], 64)
			if err != nil {
				continue
			}
			if old, ok := out[c.ReducedFormula()]; !ok || x < old {
				out[c.ReducedFormula()] = x
			}
		}
		return out
	}
	gaps, efs := read("mp_gap.csv"), read("mp_e_form.csv")
	formulas := make([]string, 0, len(gaps))
	for f := range gaps {
		if _, ok := efs[f]; ok {
			formulas = append(formulas, f)
		}
	}
	slices.Sort(formulas)
	var gx, gy, ex, ey []float64
	for i, f := range formulas {
		if i%15 != 0 { // a fixed sample of about 4 000
			continue
		}
		c := crystal.MustParseFormula(f)
		if c.Len() < 2 || c.Len() > 4 {
			continue
		}
		ions, ok := parentIons(c)
		if !ok {
			continue
		}
		var amounts []ionAmount
		anions := 0
		for _, si := range ions {
			amounts = append(amounts, ionAmount{si.ion, float64(si.n)})
			if si.q < 0 {
				anions++
			}
		}
		d, ok := describe(amounts)
		if !ok || anions != 1 {
			continue
		}
		g, _ := d.trend("band_gap")
		e, _ := d.trend("formation_energy_per_atom")
		gx, gy = append(gx, g), append(gy, gaps[f])
		ex, ey = append(ex, e), append(ey, efs[f])
	}
	if len(gx) < 1000 {
		t.Fatalf("only %d compounds", len(gx))
	}
	rg, re := spearman(gx, gy), spearman(ex, ey)
	t.Logf("%d compounds: Spearman ρ gap %.2f, formation energy %.2f", len(gx), rg, re)
	if rg < 0.45 || re < 0.7 {
		t.Errorf("trends rank the reference poorly: ρ gap %.2f, formation energy %.2f", rg, re)
	}
}

// spearman is Spearman's rank correlation (average ranks for ties).
func spearman(x, y []float64) float64 {
	rank := func(v []float64) []float64 {
		idx := make([]int, len(v))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, len(v))
		for i := 0; i < len(idx); {
			j := i
			for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
				j++
			}
			for k := i; k <= j; k++ {
				r[idx[k]] = float64(i+j)/2 + 1
			}
			i = j + 1
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	n := float64(len(x))
	var mx, my float64
	for i := range rx {
		mx += rx[i] / n
		my += ry[i] / n
	}
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}
