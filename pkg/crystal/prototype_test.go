package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func repeatBond(d float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = d
	}
	return out
}

// experimentalBonds are measured cation–anion bond lengths (Å) of the
// archetypes, each the cation's full first shell, sorted. Where the source
// gives lattice and internal parameters the bonds were computed from them.
var experimentalBonds = []struct {
	formula, prototype string
	cation, anion      string
	bonds              []float64
	source             string
}{
	{"NaCl", "rocksalt", "Na", "Cl", repeatBond(2.820, 6),
		"a = 5.6402 Å; R. W. G. Wyckoff, Crystal Structures, vol. 1, 2nd ed. (1963)"},
	{"MgO", "rocksalt", "Mg", "O", repeatBond(2.106, 6),
		"a = 4.212 Å; Wyckoff (1963)"},
	{"ZnO", "wurtzite", "Zn", "O", []float64{1.974, 1.974, 1.974, 1.987},
		"a = 3.2496, c = 5.2042 Å, u = 0.3819; Kisi & Elcombe, Acta Cryst. C45, 1867 (1989)"},
	{"GaN", "wurtzite", "Ga", "N", []float64{1.949, 1.949, 1.949, 1.956},
		"a = 3.190, c = 5.189 Å, u = 0.377; Schulz & Thiemann, Solid State Commun. 23, 815 (1977)"},
	{"TiO2", "rutile", "Ti", "O", []float64{1.949, 1.949, 1.949, 1.949, 1.980, 1.980},
		"a = 4.5937, c = 2.9587 Å, x = 0.30478; Burdett et al., J. Am. Chem. Soc. 109, 3639 (1987)"},
	{"SrTiO3", "perovskite", "Ti", "O", repeatBond(1.9525, 6),
		"a = 3.905 Å; R. H. Mitchell, Perovskites: Modern and Ancient (2002)"},
	{"SrTiO3", "perovskite", "Sr", "O", repeatBond(2.761, 12),
		"a/√2 with a = 3.905 Å; Mitchell (2002)"},
	{"MgAl2O4", "spinel", "Mg", "O", repeatBond(1.922, 4),
		"a = 8.083 Å, u = 0.3873 (origin 1); Hill, Craig & Gibbs, Phys. Chem. Minerals 4, 317 (1979)"},
	{"MgAl2O4", "spinel", "Al", "O", repeatBond(1.927, 6),
		"as above"},
	{"Al2O3", "corundum", "Al", "O", []float64{1.855, 1.855, 1.855, 1.972, 1.972, 1.972},
		"a = 4.7602, c = 12.9933 Å, z = 0.35216, x = 0.30624; Lewis, Schwarzenbach & Flack, Acta Cryst. A38, 733 (1982)"},
}

// shell returns the distances from site i to its n nearest neighbours and
// whether they are all of element want, plus the (n+1)-th distance.
func protoShell(t *testing.T, s *Structure, i, n int, want Element) ([]float64, bool, float64) {
	t.Helper()
	nl, err := s.NearestNeighbors(n+1, 10)
	if err != nil {
		t.Fatal(err)
	}
	nb := nl.Of(i)
	if len(nb) < n+1 {
		t.Fatalf("site %d has %d neighbours within 10 Å", i, len(nb))
	}
	d := make([]float64, n)
	all := true
	for k := 0; k < n; k++ {
		d[k] = nb[k].Distance
		if s.Species[nb[k].Index] != want {
			all = false
		}
	}
	return d, all, nb[n].Distance
}

// The built structures of the archetypes have the right formula and bond
// lengths within 10 % of experiment, bond by bond.
func TestPrototypeBondLengthsMatchExperiment(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-8s %-10s %-6s %-24s %-24s %s\n", "formula", "prototype", "bond", "built (Å)", "experiment (Å)", "max dev")
	for _, tc := range experimentalBonds {
		p, err := PrototypeByName(tc.prototype)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Build(p, MustParseFormula(tc.formula))
		if err != nil {
			t.Fatalf("%s: %v", tc.formula, err)
		}
		s := b.Structure
		if got := s.Composition().ReducedFormula(); got != tc.formula {
			t.Errorf("%s: built %s", tc.formula, got)
		}
		cation, anion := MustElement(tc.cation), MustElement(tc.anion)
		worst := 0.0
		var built []float64
		for i, e := range s.Species {
			if e != cation {
				continue
			}
			d, allAnion, next := protoShell(t, s, i, len(tc.bonds), anion)
			if !allAnion {
				t.Errorf("%s site %d: first %d neighbours not all %s: %v", tc.formula, i, len(tc.bonds), anion, d)
			}
			if next < d[len(d)-1]*1.05 {
				t.Errorf("%s site %d: shell not separated: %d-th neighbour at %.3f, next at %.3f", tc.formula, i, len(d), d[len(d)-1], next)
			}
			for k := range d {
				dev := math.Abs(d[k]-tc.bonds[k]) / tc.bonds[k]
				worst = math.Max(worst, dev)
				if dev > 0.10 {
					t.Errorf("%s %s–%s bond %d: built %.3f Å, experiment %.3f Å (%.1f %%, %s)",
						tc.formula, cation, anion, k, d[k], tc.bonds[k], 100*dev, tc.source)
				}
			}
			built = d
		}
		if built == nil {
			t.Fatalf("%s: no %s site", tc.formula, cation)
		}
		fmt.Fprintf(&table, "%-8s %-10s %-6s %-24s %-24s %.1f %%\n", tc.formula, tc.prototype, tc.cation+"–"+tc.anion,
			compactBonds(built), compactBonds(tc.bonds), 100*worst)
	}
	t.Log(table.String())
}

// compactBonds writes "1.949×4 1.980×2".
func compactBonds(d []float64) string {
	var parts []string
	for i := 0; i < len(d); {
		j := i
		for j < len(d) && math.Abs(d[j]-d[i]) < 5e-4 {
			j++
		}
		parts = append(parts, fmt.Sprintf("%.3f×%d", d[i], j-i))
		i = j
	}
	return strings.Join(parts, " ")
}

// Every prototype built from its archetype has the archetype's formula, the
// right number of atoms, every cation with its site's coordination number,
// and passes the validity checks.
func TestPrototypeArchetypes(t *testing.T) {
	archetypes := map[string]string{
		"rocksalt": "NaCl", "cscl": "CsCl", "zincblende": "ZnS", "wurtzite": "ZnO", "fluorite": "CaF2",
		"antifluorite": "Li2O", "rutile": "TiO2", "perovskite": "SrTiO3", "spinel": "MgAl2O4",
		"corundum": "Al2O3", "nias": "NiAs", "cdi2": "CdI2", "nafeo2": "LiCoO2",
	}
	protos := Prototypes()
	if len(protos) != len(archetypes) {
		t.Fatalf("%d prototypes, %d archetypes", len(protos), len(archetypes))
	}
	seen := map[string]bool{}
	for _, p := range protos {
		if seen[p.Name] {
			t.Errorf("duplicate prototype %s", p.Name)
		}
		seen[p.Name] = true
		formula, ok := archetypes[p.Name]
		if !ok {
			t.Errorf("prototype %s has no archetype in the test", p.Name)
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			b, err := Build(p, MustParseFormula(formula))
			if err != nil {
				t.Fatal(err)
			}
			s := b.Structure
			if got := s.Composition().ReducedFormula(); got != formula {
				t.Errorf("formula %s, want %s", got, formula)
			}
			perFU := 0
			for _, site := range p.Sites {
				perFU += site.Count
			}
			if s.NumSites() != perFU*p.FormulaUnits {
				t.Errorf("%d sites, want %d formula units × %d", s.NumSites(), p.FormulaUnits, perFU)
			}
			anion := b.Elements[slices.IndexFunc(p.Sites, func(x PrototypeSite) bool { return x.Role == Anion })]
			for k, site := range p.Sites {
				if site.Role != Cation {
					continue
				}
				cn := romanCoordination(site.Coordination)
				for i, e := range s.Species {
					if e != b.Elements[k] {
						continue
					}
					d, allAnion, next := protoShell(t, s, i, cn, anion)
					if !allAnion || next < 1.04*d[cn-1] {
						t.Errorf("site %s (%s, %d): not %d-coordinated by %s: %v, next %.3f", site.Label, e, i, cn, anion, d, next)
					}
				}
			}
			// NiAs balances only with Ni³⁺, an ICSD but not a common state.
			r, err := Validate(s, ValidityOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Valid() {
				t.Errorf("invalid: %v", r.Reasons())
			}
			if !(b.Parameters["a"] > 0) {
				t.Errorf("parameters %v lack a", b.Parameters)
			}
		})
	}
}

// Every structure BuildAll makes from a varied set of compositions passes
// the geometric validity checks and has the composition asked for. (Charge
// neutrality belongs to the composition, not to the builder: UO2 and
// LiNiO2 balance only with ICSD states.)
func TestBuildAllStructuresAreValid(t *testing.T) {
	formulas := []string{
		"NaCl", "KBr", "CsI", "MgO", "CaO", "BaO", "ZnS", "CdTe", "GaAs", "SiC", "AlN", "InP", "FeS", "NiAs",
		"TiO2", "SnO2", "ZrO2", "UO2", "CaF2", "MoS2", "Li2O", "Na2S", "Mg2Si",
		"SrTiO3", "BaTiO3", "CaTiO3", "KNbO3", "CsPbI3", "LaAlO3", "MgAl2O4", "ZnFe2O4", "CoAl2O4",
		"Al2O3", "Fe2O3", "Cr2O3", "LiCoO2", "NaFeO2", "LiNiO2", "NiAl", "CuZn", "FeAl",
	}
	for _, f := range formulas {
		c := MustParseFormula(f)
		bs, err := BuildAll(c)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if len(bs) == 0 {
			t.Errorf("%s: no prototype", f)
		}
		for _, b := range bs {
			if !b.Structure.Composition().SameReduced(c) {
				t.Errorf("%s as %s: composition %s", f, b.Prototype.Name, b.Structure.Composition())
			}
			r, err := Validate(b.Structure, ValidityOptions{SkipChargeNeutrality: true})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Valid() {
				t.Errorf("%s as %s (%s radii): %v", f, b.Prototype.Name, b.RadiusKind, r.Reasons())
			}
		}
	}
}

func TestMatching(t *testing.T) {
	cases := []struct {
		formula string
		want    []string
	}{
		{"NaCl", []string{"rocksalt", "cscl", "zincblende", "wurtzite", "nias"}},
		{"ClNa", []string{"rocksalt", "cscl", "zincblende", "wurtzite", "nias"}},
		{"Na2Cl2", []string{"rocksalt", "cscl", "zincblende", "wurtzite", "nias"}},
		{"TiO2", []string{"fluorite", "rutile", "cdi2"}},
		{"Li2O", []string{"antifluorite"}},
		{"SrTiO3", []string{"perovskite"}},
		{"MgAl2O4", []string{"spinel"}},
		{"Al2O3", []string{"corundum"}},
		{"LiCoO2", []string{"nafeo2"}},
		{"NiAl", []string{"cscl", "nias"}},
		{"Fe3O4", nil},   // one element on two cation sites is not offered
		{"LiFePO4", nil}, // four elements
		{"Si", nil},
		// Stoichiometry and the anion decide, not charge: NaCl2 fits AX2.
		{"NaCl2", []string{"fluorite", "rutile", "cdi2"}},
		// O is the anion, so O2Ti matches but TiO2 with the counts swapped does not.
		{"Ti2O", []string{"antifluorite"}},
	}
	for _, tc := range cases {
		var got []string
		for _, p := range Matching(MustParseFormula(tc.formula)) {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.formula, got, tc.want)
		}
	}
}

func TestFitAssignsSites(t *testing.T) {
	cases := []struct {
		prototype, formula string
		want               []string
	}{
		{"perovskite", "TiSrO3", []string{"Sr", "Ti", "O"}},
		{"perovskite", "PbCsI3", []string{"Cs", "Pb", "I"}},
		{"perovskite", "NbKO3", []string{"K", "Nb", "O"}},
		{"spinel", "Al2MgO4", []string{"Mg", "Al", "O"}},
		{"nafeo2", "CoLiO2", []string{"Li", "Co", "O"}},
		{"nafeo2", "FeNaO2", []string{"Na", "Fe", "O"}},
		{"antifluorite", "OLi2", []string{"Li", "O"}},
		{"cscl", "AlNi", []string{"Al", "Ni"}}, // Ni (1.91) more electronegative than Al (1.61)
	}
	for _, tc := range cases {
		p, err := PrototypeByName(tc.prototype)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Fit(MustParseFormula(tc.formula))
		if err != nil {
			t.Errorf("%s in %s: %v", tc.formula, tc.prototype, err)
			continue
		}
		var syms []string
		for _, e := range got {
			syms = append(syms, e.Symbol())
		}
		if !slices.Equal(syms, tc.want) {
			t.Errorf("%s in %s: %v, want %v", tc.formula, tc.prototype, syms, tc.want)
		}
	}
}

func TestFitRejects(t *testing.T) {
	cases := []struct{ prototype, formula, why string }{
		{"rocksalt", "NiAl", "no anion"},
		{"perovskite", "SrTiO2", "anion O has 2"},
		{"spinel", "MgAl3O4", "elements"}, // three elements but counts 1, 3, 4
		{"rocksalt", "SrTiO3", "3 elements"},
	}
	for _, tc := range cases {
		p, _ := PrototypeByName(tc.prototype)
		_, err := p.Fit(MustParseFormula(tc.formula))
		if !errors.Is(err, ErrPrototypeMismatch) {
			t.Errorf("%s in %s: %v, want ErrPrototypeMismatch", tc.formula, tc.prototype, err)
		}
		if _, err := Build(p, MustParseFormula(tc.formula)); !errors.Is(err, ErrPrototypeMismatch) {
			t.Errorf("Build %s in %s: %v", tc.formula, tc.prototype, err)
		}
	}
	if _, err := PrototypeByName("diamond"); !errors.Is(err, ErrUnknownPrototype) {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Build(nil, MustParseFormula("NaCl")); !errors.Is(err, ErrUnknownPrototype) {
		t.Errorf("nil prototype: %v", err)
	}
	if _, err := Build(&Prototype{Name: "handmade"}, MustParseFormula("NaCl")); !errors.Is(err, ErrUnknownPrototype) {
		t.Errorf("prototype without builder: %v", err)
	}
	bs, err := BuildAll(MustParseFormula("LiFePO4"))
	if len(bs) != 0 || err != nil {
		t.Errorf("LiFePO4: %d structures, %v", len(bs), err)
	}
}

// Radius choice: ionic where oxidation states and Shannon radii exist,
// covalent where an anion radius is missing, metallic for intermetallics.
func TestBuildRadiusKinds(t *testing.T) {
	cases := []struct{ formula, prototype, kind string }{
		{"NaCl", "rocksalt", "ionic"},
		{"GaN", "wurtzite", "ionic"},
		{"SiC", "zincblende", "covalent"}, // no Shannon radius for C⁴⁻
		{"GaAs", "zincblende", "covalent"},
		{"NiAl", "cscl", "metallic"},
	}
	for _, tc := range cases {
		p, _ := PrototypeByName(tc.prototype)
		b, err := Build(p, MustParseFormula(tc.formula))
		if err != nil {
			t.Fatal(err)
		}
		if b.RadiusKind != tc.kind {
			t.Errorf("%s: %s radii, want %s", tc.formula, b.RadiusKind, tc.kind)
		}
		if (b.Oxidation != nil) != (tc.kind == "ionic") {
			t.Errorf("%s: oxidation %v with %s radii", tc.formula, b.Oxidation, b.RadiusKind)
		}
	}
	// Covalent radii suit the covalent compounds: SiC (3C) has d = 1.888 Å,
	// GaAs 2.448 Å (a = 4.3596 and 5.6533 Å; Madelung, Semiconductors: Data
	// Handbook, 3rd ed. (2004)).
	for _, tc := range []struct {
		formula string
		bond    float64
	}{{"SiC", 1.888}, {"GaAs", 2.448}} {
		p, _ := PrototypeByName("zincblende")
		b, _ := Build(p, MustParseFormula(tc.formula))
		d, _, err := MinimumDistance(b.Structure)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(d-tc.bond)/tc.bond > 0.05 {
			t.Errorf("%s: bond %.3f Å, experiment %.3f Å", tc.formula, d, tc.bond)
		}
	}
}

// Goldschmidt's t orders the titanates as observed: BaTiO3 (t > 1,
// ferroelectric off-centring), SrTiO3 (≈ 1, cubic), CaTiO3 (< 1,
// orthorhombic tilts).
func TestPerovskiteToleranceFactor(t *testing.T) {
	p, _ := PrototypeByName("perovskite")
	tf := map[string]float64{}
	for _, f := range []string{"BaTiO3", "SrTiO3", "CaTiO3"} {
		b, err := Build(p, MustParseFormula(f))
		if err != nil {
			t.Fatal(err)
		}
		tf[f] = b.ToleranceFactor
		rA, rB, rX := b.Radii[0], b.Radii[1], b.Radii[2]
		if want := (rA + rX) / (math.Sqrt2 * (rB + rX)); math.Abs(b.ToleranceFactor-want) > 1e-12 {
			t.Errorf("%s: t = %v, want %v", f, b.ToleranceFactor, want)
		}
	}
	if !(tf["BaTiO3"] > 1.03 && tf["SrTiO3"] > 0.98 && tf["SrTiO3"] < 1.02 && tf["CaTiO3"] < 0.98) {
		t.Errorf("tolerance factors %v", tf)
	}
	rs, _ := PrototypeByName("rocksalt")
	if b, _ := Build(rs, MustParseFormula("NaCl")); b.ToleranceFactor != 0 {
		t.Errorf("rock salt with tolerance factor %v", b.ToleranceFactor)
	}
}

// The spinel's u follows the size of the tetrahedral cation: larger A,
// larger u (ZnFe2O4's u(origin 1) = 0.385 < MgAl2O4's 0.387 < …); and u
// stays in the observed range however odd the radii.
func TestSpinelParameter(t *testing.T) {
	p, _ := PrototypeByName("spinel")
	for _, f := range []string{"MgAl2O4", "ZnFe2O4", "CoAl2O4", "MgCr2O4", "CdIn2S4", "ZnAl2S4"} {
		b, err := Build(p, MustParseFormula(f))
		if err != nil {
			t.Fatal(err)
		}
		u := b.Parameters["u"]
		if u < 0.355 || u > 0.400 || math.Abs(b.Parameters["x"]-(u-0.125)) > 1e-12 {
			t.Errorf("%s: u = %v, x = %v", f, u, b.Parameters["x"])
		}
	}
}

func TestSubstitute(t *testing.T) {
	p, _ := PrototypeByName("perovskite")
	sto, err := Build(p, MustParseFormula("SrTiO3"))
	if err != nil {
		t.Fatal(err)
	}
	s := sto.Structure
	bto, err := Substitute(s, MustElement("Sr"), MustElement("Ba"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bto.Composition().ReducedFormula(); got != "BaTiO3" {
		t.Fatalf("formula %s", got)
	}
	// Sum of ionic volumes with Shannon VI radii, Sr²⁺ 1.18 → Ba²⁺ 1.35 Å,
	// Ti⁴⁺ 0.605, O²⁻ 1.40.
	want := s.Volume() * (math.Pow(1.35, 3) + math.Pow(0.605, 3) + 3*math.Pow(1.40, 3)) /
		(math.Pow(1.18, 3) + math.Pow(0.605, 3) + 3*math.Pow(1.40, 3))
	if math.Abs(bto.Volume()-want) > 1e-9*want {
		t.Errorf("volume %v, want %v", bto.Volume(), want)
	}
	if s.Species[0] != MustElement("Sr") || s.Volume() != sto.Structure.Volume() {
		t.Error("input modified")
	}
	if !slices.Equal(bto.Frac, s.Frac) {
		t.Error("fractional coordinates changed")
	}

	// Same element: unchanged copy.
	same, err := Substitute(s, MustElement("Sr"), MustElement("Sr"))
	if err != nil || same.Volume() != s.Volume() {
		t.Errorf("Sr→Sr: %v, volume %v", err, same.Volume())
	}
	// A single site of a supercell: the volume change is shared.
	sc, _ := s.Supercell(2, 1, 1)
	one, err := SubstituteSites(sc, []int{0}, MustElement("Ba"))
	if err != nil {
		t.Fatal(err)
	}
	if !(one.Volume() > sc.Volume() && one.Volume() < 2*bto.Volume()) {
		t.Errorf("half-substituted volume %v, between %v and %v", one.Volume(), sc.Volume(), 2*bto.Volume())
	}
	// Covalent fallback: C⁴⁻ has no Shannon radius.
	zb, _ := PrototypeByName("zincblende")
	sic, _ := Build(zb, MustParseFormula("SiC"))
	gec, err := Substitute(sic.Structure, MustElement("Si"), MustElement("Ge"))
	if err != nil {
		t.Fatal(err)
	}
	si, ge, c := MustElement("Si").CovalentRadius(), MustElement("Ge").CovalentRadius(), MustElement("C").CovalentRadius()
	wantV := sic.Structure.Volume() * (ge*ge*ge + c*c*c) / (si*si*si + c*c*c)
	if math.Abs(gec.Volume()-wantV) > 1e-9*wantV {
		t.Errorf("GeC volume %v, want %v", gec.Volume(), wantV)
	}

	if _, err := Substitute(s, MustElement("Fe"), MustElement("Ba")); !errors.Is(err, ErrBadStructure) {
		t.Errorf("absent element: %v", err)
	}
	if _, err := Substitute(s, MustElement("Sr"), Element(0)); !errors.Is(err, ErrUnknownElement) {
		t.Errorf("invalid element: %v", err)
	}
	if _, err := SubstituteSites(s, []int{7}, MustElement("Ba")); !errors.Is(err, ErrBadStructure) {
		t.Errorf("site out of range: %v", err)
	}
	if _, err := Substitute(nil, MustElement("Sr"), MustElement("Ba")); !errors.Is(err, ErrBadStructure) {
		t.Errorf("nil structure: %v", err)
	}
}
