package surrogate

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func TestValenceOf(t *testing.T) {
	for _, c := range []struct {
		el   string
		want Valence
	}{
		{"H", Valence{S: 1, Unfilled: 1}},
		{"O", Valence{S: 2, P: 4, Unfilled: 2}},
		{"Na", Valence{S: 1, Unfilled: 1}},
		{"Fe", Valence{S: 2, D: 6, Unfilled: 4}},
		{"Cu", Valence{S: 1, D: 10, Unfilled: 1}}, // 3d10 4s1
		{"Ga", Valence{S: 2, P: 1, D: 10, Unfilled: 5}},
		{"Pd", Valence{D: 10}},                   // 4d10 5s0
		{"La", Valence{S: 2, D: 1, Unfilled: 9}}, // 5d1 6s2
		{"Pb", Valence{S: 2, P: 2, D: 10, F: 14, Unfilled: 4}},
		{"U", Valence{S: 2, D: 1, F: 3, Unfilled: 20}}, // 5f3 6d1 7s2
		{"Kr", Valence{S: 2, P: 6, D: 10}},
	} {
		if got := ValenceOf(crystal.MustElement(c.el)); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.el, got, c.want)
		}
	}
	// Every element's valence electrons and core add up to Z.
	for _, e := range crystal.Elements() {
		if got := ValenceOf(e).Total() + nobleCore(e.Z()); got != e.Z() {
			t.Errorf("%s: valence + core = %d, want Z = %d", e, got, e.Z())
		}
	}
}

// feature returns the named feature of x.
func feature(t *testing.T, groups []string, x []float64, name string) float64 {
	t.Helper()
	names, err := FeatureNames(groups)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(names, name)
	if i < 0 {
		t.Fatalf("no feature %q", name)
	}
	return x[i]
}

func TestMagpieNaCl(t *testing.T) {
	groups := []string{GroupMagpie}
	x, err := Featurize(groups, Input{Composition: crystal.MustParseFormula("Na2Cl2")})
	if err != nil {
		t.Fatal(err)
	}
	names, _ := FeatureNames(groups)
	if len(x) != len(names) {
		t.Fatalf("%d features, %d names", len(x), len(names))
	}
	dx := 3.16 - 0.93 // Pauling χ of Cl and Na
	ic := 1 - math.Exp(-dx*dx/4)
	for _, c := range []struct {
		name string
		want float64
	}{
		{"Z_mean", 14}, {"Z_avg_dev", 3}, {"Z_min", 11}, {"Z_max", 17}, {"Z_range", 6},
		{"Z_mode", 11}, // tie between equal fractions: the lighter element
		{"n_elements", 2}, {"stoich_l2", math.Sqrt(0.5)}, {"stoich_l10", math.Pow(2*math.Pow(0.5, 10), 0.1)},
		{"valence_mean", 4}, {"frac_s_valence", 1.5 / 4}, {"frac_p_valence", 2.5 / 4},
		{"electronegativity_range", dx},
		{"ionic_char_max", ic}, {"ionic_char_mean", 0.5 * ic},
		{"ionic_radius_mean", (1.02 + 1.81) / 2}, // Shannon Na+ and Cl− in six-fold coordination
		{"common_oxidation_mean", 0},
	} {
		if got := feature(t, groups, x, c.name); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s = %.12g, want %.12g", c.name, got, c.want)
		}
	}
}

// cubicStructure builds a structure in a cubic cell of edge a, its lattice
// rotated by the rotation rot (rows are the lattice vectors).
func cubicStructure(t *testing.T, a float64, rot [3][3]float64, species []string, frac []crystal.Vec3) *crystal.Structure {
	t.Helper()
	var m [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			m[i][j] = a * rot[j][i] // row i = R · (a eᵢ)
		}
	}
	l, err := crystal.NewLattice(m)
	if err != nil {
		t.Fatal(err)
	}
	els := make([]crystal.Element, len(species))
	for i, s := range species {
		els[i] = crystal.MustElement(s)
	}
	s, err := crystal.NewStructure(l, els, frac)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var identity = [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

var fcc = []crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}}

func shifted(v []crystal.Vec3, d crystal.Vec3) []crystal.Vec3 {
	out := make([]crystal.Vec3, len(v))
	for i, p := range v {
		out[i] = p.Add(d)
	}
	return out
}

func rocksalt(t *testing.T) *crystal.Structure {
	return cubicStructure(t, 5.64, identity, []string{"Na", "Na", "Na", "Na", "Cl", "Cl", "Cl", "Cl"},
		append(slices.Clone(fcc), shifted(fcc, crystal.Vec3{0.5, 0, 0})...))
}

func zincblende(t *testing.T, rot [3][3]float64) *crystal.Structure {
	return cubicStructure(t, 5.41, rot, []string{"Zn", "Zn", "Zn", "Zn", "S", "S", "S", "S"},
		append(slices.Clone(fcc), shifted(fcc, crystal.Vec3{0.25, 0.25, 0.25})...))
}

func TestStructureFeatures(t *testing.T) {
	groups := []string{GroupStructure}
	// Tetrahedral bonds u = (±1, ±1, ±1)/√3 with an even number of minus
	// signs: Σu = 0; the third moment has only the six xyz-type components
	// 4/(3√3), so |Σ u⊗u⊗u| = 4√2/3 and per bond √2/3.
	xZn, xS := 1.65, 2.58
	for _, c := range []struct {
		name string
		s    *crystal.Structure
		want map[string]float64
		tol  float64
	}{
		{"NaCl", rocksalt(t), map[string]float64{
			"ecn_mean": 6, "ecn_std": 0, "asymmetry_mean": 0, "asymmetry_max": 0, "octupole_max": 0,
			"net_dipole": 0, "net_octupole": 0, "hetero_bond_fraction": 1,
			"volume_per_atom": 5.64 * 5.64 * 5.64 / 8,
			"density":         (4 * (22.98976928 + 35.453)) * 1.66053906660 / (5.64 * 5.64 * 5.64),
		}, 0.02},
		{"ZnS", zincblende(t, identity), map[string]float64{
			"ecn_mean": 4, "asymmetry_mean": 0, "octupole_mean": math.Sqrt2 / 3, "octupole_max": math.Sqrt2 / 3,
			"net_dipole": 0, "net_octupole": (xS - xZn) / 2 * math.Sqrt2 / 3, "hetero_bond_fraction": 1,
			"bond_delta_x": xS - xZn,
		}, 1e-6},
	} {
		x, err := Featurize(groups, Input{Structure: c.s})
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range c.want {
			if got := feature(t, groups, x, name); math.Abs(got-want) > c.tol*max(1, math.Abs(want)) {
				t.Errorf("%s %s = %.6g, want %.6g", c.name, name, got, want)
			}
		}
	}
}

// TestPlasmonEnergySilicon: diamond Si, 4 valence electrons per atom,
// a = 5.431 Å: ħω_p = 16.6 eV (the measured bulk plasmon of Si is
// 16.7 eV; Raether, Excitation of Plasmons (1980)).
func TestPlasmonEnergySilicon(t *testing.T) {
	si := cubicStructure(t, 5.431, identity, []string{"Si", "Si", "Si", "Si", "Si", "Si", "Si", "Si"},
		append(slices.Clone(fcc), shifted(fcc, crystal.Vec3{0.25, 0.25, 0.25})...))
	want := 37.13 * math.Sqrt(32/(5.431*5.431*5.431))
	if got := plasmonEnergy(si); math.Abs(got-want) > 1e-9 || math.Abs(got-16.6) > 0.1 {
		t.Errorf("ħω_p(Si) = %.4f eV, want %.4f ≈ 16.6", got, want)
	}
}

// TestFeaturesInvariant: the descriptors of a structure do not change
// with a supercell, a rotation of the lattice, a permutation of the sites
// or the formula's scale.
func TestFeaturesInvariant(t *testing.T) {
	groups := []string{GroupMagpie, GroupOxidation, GroupStructure}
	base := zincblende(t, identity)
	ref, err := Featurize(groups, Input{Structure: base})
	if err != nil {
		t.Fatal(err)
	}
	c, s := math.Cos(0.7), math.Sin(0.7)
	rz := [3][3]float64{{c, -s, 0}, {s, c, 0}, {0, 0, 1}}
	ry := [3][3]float64{{math.Cos(0.3), 0, math.Sin(0.3)}, {0, 1, 0}, {-math.Sin(0.3), 0, math.Cos(0.3)}}
	var rot [3][3]float64
	for i := range 3 {
		for j := range 3 {
			for k := range 3 {
				rot[i][j] += rz[i][k] * ry[k][j]
			}
		}
	}
	super, err := base.Supercell(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	perm := base.Copy()
	slices.Reverse(perm.Species)
	slices.Reverse(perm.Frac)
	names, _ := FeatureNames(groups)
	for _, v := range []struct {
		name string
		s    *crystal.Structure
	}{{"supercell", super}, {"rotated", zincblende(t, rot)}, {"permuted", perm}} {
		x, err := Featurize(groups, Input{Structure: v.s})
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Abs(x[i]-ref[i]) > 1e-9*max(1, math.Abs(ref[i])) {
				t.Errorf("%s: %s = %.12g, want %.12g", v.name, names[i], x[i], ref[i])
			}
		}
	}
}

func TestFeaturizeErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		groups []string
		in     Input
		want   error
	}{
		{"empty", []string{GroupMagpie}, Input{}, ErrBadInput},
		{"helium", []string{GroupMagpie}, Input{Composition: crystal.MustParseFormula("HeNa")}, ErrUnsupportedElement},
		{"no structure", []string{GroupMagpie, GroupStructure}, Input{Composition: crystal.MustParseFormula("NaCl")}, ErrNeedsStructure},
		{"no gap", []string{GroupBandGap}, Input{Composition: crystal.MustParseFormula("NaCl")}, ErrMissingInput},
		{"NaN gap", []string{GroupBandGap}, Input{Composition: crystal.MustParseFormula("NaCl"), Properties: map[string]float64{"band_gap": math.NaN()}}, ErrBadInput},
	} {
		if _, err := Featurize(c.groups, c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := Featurize([]string{"nonsense"}, Input{Composition: crystal.MustParseFormula("NaCl")}); err == nil {
		t.Error("unknown group accepted")
	}
	// A lone atom in a 20 Å cell has no neighbour within 8 Å.
	l, _ := crystal.LatticeFromParameters(20, 20, 20, 90, 90, 90)
	lone, _ := crystal.NewStructure(l, []crystal.Element{crystal.MustElement("Na")}, []crystal.Vec3{{0, 0, 0}})
	if _, err := Featurize([]string{GroupStructure}, Input{Structure: lone}); !errors.Is(err, ErrIsolatedSite) {
		t.Errorf("lone atom: err = %v, want ErrIsolatedSite", err)
	}
}

// TestIonicRadiusPositive: the ionic radius property is a positive length
// for every supported element (Shannon's H⁺ radius is negative; the
// covalent radius stands in).
func TestIonicRadiusPositive(t *testing.T) {
	for _, e := range crystal.Elements() {
		if r := commonIonRadius(e); !(r > 0) {
			t.Errorf("%s: ionic radius %v", e, r)
		}
	}
	if r := commonIonRadius(crystal.MustElement("H")); r != crystal.MustElement("H").CovalentRadius() {
		t.Errorf("H: %v, want its covalent radius", r)
	}
}
