package evolve

import (
	"math"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Each operator on known parents: the moves it offers are the chemistry the
// rule names, and what it builds is valid.

func TestOperatorsOnKnownParents(t *testing.T) {
	tk := wideGap(t)
	tests := []struct {
		name    string
		op      string
		parents []Parent
		// want are formulas (with prototype, "" for any) that must be
		// among the moves; absent must not be.
		want   map[string]string
		absent []string
		// check is applied to every move.
		check func(t *testing.T, m move)
	}{
		{
			name: "same group on NaCl", op: OpSameGroup,
			parents: []Parent{parent(t, "NaCl", "rocksalt", nil)},
			want:    map[string]string{"KCl": "rocksalt", "LiCl": "rocksalt", "NaBr": "rocksalt", "NaF": "rocksalt", "NaI": "rocksalt", "RbCl": "rocksalt"},
			absent:  []string{"MgCl2", "NaO", "CaCl"},
			check: func(t *testing.T, m move) {
				for _, e := range m.comp.Elements() {
					if e.Group() != 1 && e.Group() != 17 {
						t.Errorf("%s: %s is in group %d", m.comp.ReducedFormula(), e, e.Group())
					}
				}
			},
		},
		{
			name: "oxidation state on MgO", op: OpOxidationState,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil)},
			want:    map[string]string{"CaO": "rocksalt", "ZnO": "rocksalt", "NiO": "rocksalt", "SrO": "rocksalt", "MgS": "rocksalt"},
			absent:  []string{"NaO", "Al2O3", "MgF2"},
			check: func(t *testing.T, m move) {
				if m.comp.AnonymousFormula() != "AB" {
					t.Errorf("%s is not AX", m.comp.ReducedFormula())
				}
			},
		},
		{
			name: "similar element on MgO keeps ratios and prefers near neighbours", op: OpSimilarElement,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil)},
			want:    map[string]string{"NiO": "rocksalt", "CoO": "rocksalt", "ZnO": "rocksalt"},
			absent:  []string{"BaO", "BeO"}, // radii 1.35 and 0.45 Å against 0.72 Å
		},
		{
			name: "ionic radius on SrTiO3 stays within 15 % and a formable tolerance factor", op: OpIonicRadius,
			parents: []Parent{parent(t, "SrTiO3", "perovskite", nil)},
			want:    map[string]string{"SrSnO3": "perovskite", "CaTiO3": "perovskite"},
			absent:  []string{"SrSiO3", "MgTiO3"},
			check: func(t *testing.T, m move) {
				perovskiteInRange(t, m)
			},
		},
		{
			name: "prototype fill on SrTiO3 gives perovskites in range", op: OpPrototypeFill,
			parents: []Parent{parent(t, "SrTiO3", "perovskite", nil)},
			check: func(t *testing.T, m move) {
				if m.proto != "perovskite" || m.comp.AnonymousFormula() != "ABC3" {
					t.Errorf("%s built as %s", m.comp.ReducedFormula(), m.proto)
				}
				perovskiteInRange(t, m)
			},
		},
		{
			name: "crossover of MgO and Al2O3 gives the spinel", op: OpCrossover,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil), parent(t, "Al2O3", "corundum", nil)},
			want:    map[string]string{"MgAl2O4": "spinel"},
			absent:  []string{"MgO", "Al2O3"},
		},
		{
			name: "crossover of SrO and TiO2 gives the perovskite", op: OpCrossover,
			parents: []Parent{parent(t, "SrO", "rocksalt", nil), parent(t, "TiO2", "rutile", nil)},
			want:    map[string]string{"SrTiO3": "perovskite"},
		},
		{
			name: "crossover of MgO and ZnS exchanges anions", op: OpCrossover,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil), parent(t, "ZnS", "zincblende", nil)},
			want:    map[string]string{"MgS": "", "ZnO": ""},
		},
		{
			name: "redox of FeO gives corundum Fe2O3", op: OpRedox,
			parents: []Parent{parent(t, "FeO", "rocksalt", nil)},
			want:    map[string]string{"Fe2O3": "corundum"},
		},
		{
			name: "redox of SnO gives SnO2", op: OpRedox,
			parents: []Parent{parent(t, "SnO", "rocksalt", nil)},
			want:    map[string]string{"SnO2": "rutile"},
		},
		{
			name: "redox of LiFeO2: Fe3+ → Fe2+ compensated by Li+ → Mg2+", op: OpRedox,
			parents: []Parent{parent(t, "LiFeO2", "nafeo2", nil)},
			want:    map[string]string{"MgFeO2": "nafeo2"},
			check: func(t *testing.T, m move) {
				if !assignedAs(m.comp, crystal.MustElement("Fe"), 2) {
					t.Errorf("%s does not hold Fe2+", m.comp.ReducedFormula())
				}
			},
		},
		{
			name: "redox of LaFeO3: Ce would read as Ce3+, no redox", op: OpRedox,
			parents: []Parent{parent(t, "LaFeO3", "perovskite", nil)},
			absent:  []string{"CeFeO3"},
		},
		{
			name: "coordination change of rock-salt NaCl", op: OpCoordinationChange,
			parents: []Parent{parent(t, "NaCl", "rocksalt", nil)},
			want:    map[string]string{"NaCl": "cscl"},
			check: func(t *testing.T, m move) {
				if m.proto == "rocksalt" || m.proto == "nias" {
					t.Errorf("octahedral %s offered as a coordination change of rock salt", m.proto)
				}
			},
		},
		{
			name: "coordination change of rutile TiO2", op: OpCoordinationChange,
			parents: []Parent{parent(t, "TiO2", "rutile", nil)},
			want:    map[string]string{"TiO2": "fluorite"},
		},
		{
			name: "isoelectronic GaN → ZnO", op: OpIsoelectronic,
			parents: []Parent{parent(t, "GaN", "wurtzite", nil)},
			want:    map[string]string{"ZnO": "wurtzite"},
		},
		{
			name: "isoelectronic ZnO → GaN", op: OpIsoelectronic,
			parents: []Parent{parent(t, "ZnO", "wurtzite", nil)},
			want:    map[string]string{"GaN": "wurtzite"},
			absent:  []string{"CuF"}, // Cu+ is not a common state of Cu
		},
		{
			name: "charge-coupled SrTiO3 → LaAlO3", op: OpChargeCoupled,
			parents: []Parent{parent(t, "SrTiO3", "perovskite", nil)},
			want:    map[string]string{"LaAlO3": "perovskite"},
			check: func(t *testing.T, m move) {
				if m.proto == "perovskite" {
					perovskiteInRange(t, m)
				}
			},
		},
		{
			name: "partial substitution of MgO is an ordered solid solution", op: OpPartialSubstitution,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil)},
			want:    map[string]string{"MgNiO2": "", "MgCoO2": ""},
			check: func(t *testing.T, m move) {
				if m.comp.Len() != 3 || m.comp.Amount(crystal.MustElement("O")) == 0 {
					t.Errorf("%s is not a solid solution of MgO", m.comp.ReducedFormula())
				}
			},
		},
		{
			name: "anion exchange rebalances the stoichiometry", op: OpAnionExchange,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil)},
			want:    map[string]string{"MgF2": "rutile", "MgCl2": "cdi2"},
			absent:  []string{"MgS"}, // same group: rule 1
		},
		{
			name: "anion exchange of Al2O3 gives AlN", op: OpAnionExchange,
			parents: []Parent{parent(t, "Al2O3", "corundum", nil)},
			want:    map[string]string{"AlN": "wurtzite"},
		},
		{
			name: "template fill of rock salt MgO uses the other AX prototypes", op: OpTemplateFill,
			parents: []Parent{parent(t, "MgO", "rocksalt", nil)},
			check: func(t *testing.T, m move) {
				if m.comp.AnonymousFormula() != "AB" || m.proto == "rocksalt" {
					t.Errorf("%s as %s", m.comp.ReducedFormula(), m.proto)
				}
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := testGeneration(t, tk, uint64(i), tt.parents...)
			ms := movesOf(t, g, tt.op)
			if len(ms) == 0 {
				t.Fatal("no moves")
			}
			got := formulas(ms)
			for f, proto := range tt.want {
				protos, ok := got[f]
				if !ok {
					t.Errorf("%s not among the %d moves", f, len(ms))
					continue
				}
				if proto != "" && !slices.Contains(protos, proto) {
					t.Errorf("%s offered as %v, want %s", f, protos, proto)
				}
			}
			for _, f := range tt.absent {
				if _, ok := got[f]; ok {
					t.Errorf("%s offered", f)
				}
			}
			valid := 0
			for _, m := range ms {
				if m.op != tt.op || m.weight <= 0 || m.explain() == "" || len(m.parents) != len(tt.parents) {
					t.Errorf("%s: op %q weight %g rationale %q parents %v", m.comp.ReducedFormula(), m.op, m.weight, m.explain(), m.parents)
				}
				if tt.check != nil {
					tt.check(t, m)
				}
				if _, ok := buildValid(t, m); ok {
					valid++
				}
			}
			if valid < len(ms)*3/4 {
				t.Errorf("only %d of %d moves build valid structures", valid, len(ms))
			}
		})
	}
}

// perovskiteInRange checks a perovskite move's tolerance and octahedral
// factors with crystal's own site assignment.
func perovskiteInRange(t *testing.T, m move) {
	t.Helper()
	p, err := crystal.PrototypeByName("perovskite")
	if err != nil {
		t.Fatal(err)
	}
	elems, err := p.Fit(m.comp)
	if err != nil {
		t.Errorf("%s does not fit the perovskite: %v", m.comp.ReducedFormula(), err)
		return
	}
	ions, ok := parentIons(m.comp)
	if !ok {
		t.Errorf("%s has no ionic assignment", m.comp.ReducedFormula())
		return
	}
	byEl := map[crystal.Element]ion{}
	for _, si := range ions {
		byEl[si.el] = si.ion
	}
	tf, mu, ok := toleranceFactor(byEl[elems[0]], byEl[elems[1]], byEl[elems[2]])
	if !ok {
		return
	}
	if tf < minTolerance-0.05 || tf > maxTolerance+0.05 || mu < minOctahedral-0.05 || mu > maxOctahedral+0.05 {
		t.Errorf("%s: t = %.3f, μ = %.3f outside the formable range", m.comp.ReducedFormula(), tf, mu)
	}
}

func TestCoordinationChangeFollowsRadiusRatio(t *testing.T) {
	// CsCl built as rock salt: r(Cs+)/r(Cl−) ≈ 1.0 favours eight-fold
	// coordination over four-fold.
	g := testGeneration(t, wideGap(t), 1, parent(t, "CsCl", "rocksalt", nil))
	w := map[string]float64{}
	for _, m := range movesOf(t, g, OpCoordinationChange) {
		w[m.proto] = m.weight
	}
	if !(w["cscl"] > w["zincblende"] && w["cscl"] > w["wurtzite"]) {
		t.Errorf("weights %v: CsCl type should be preferred for Cs+/Cl−", w)
	}
	// BeO as rock salt: r(Be2+)/r(O2−) ≈ 0.2 favours tetrahedra.
	g = testGeneration(t, wideGap(t), 1, parent(t, "BeO", "rocksalt", nil))
	w = map[string]float64{}
	for _, m := range movesOf(t, g, OpCoordinationChange) {
		w[m.proto] = m.weight
	}
	if !(w["wurtzite"] > w["cscl"]) {
		t.Errorf("weights %v: wurtzite should be preferred for Be2+/O2−", w)
	}
}

func TestPropertyDirectedMovesTowardsTheTarget(t *testing.T) {
	// ZnSe misses both constraints of the wide-gap task: its children
	// should be more ionic and closed-shell.
	tk := wideGap(t)
	p := parent(t, "ZnSe", "zincblende", map[string]float64{"band_gap": 1.2, "formation_energy_per_atom": -0.8})
	g := testGeneration(t, tk, 3, p)
	ms := movesOf(t, g, OpPropertyDirected)
	if len(ms) == 0 {
		t.Fatal("no moves")
	}
	from := g.parents[0].ionList()
	base, _ := describe(from)
	gap0, _ := base.trend("band_gap")
	better, total := 0.0, 0.0
	for _, m := range ms {
		ions, ok := parentIons(m.comp)
		if !ok {
			t.Fatalf("%s not ionic", m.comp.ReducedFormula())
		}
		var to []ionAmount
		for _, si := range ions {
			to = append(to, ionAmount{si.ion, float64(si.n)})
		}
		if d := direction(g.parents[0].needs, from, to); d <= 0 {
			t.Errorf("%s: direction %.2f ≤ 0", m.comp.ReducedFormula(), d)
		}
		dd, _ := describe(to)
		gap, _ := dd.trend("band_gap")
		total += m.weight
		if gap > gap0 {
			better += m.weight
		}
	}
	if better/total < 0.8 {
		t.Errorf("only %.0f %% of the weight raises the gap trend", 100*better/total)
	}
	// A parent that meets everything comfortably asks for nothing.
	ok := parent(t, "MgO", "rocksalt", map[string]float64{"band_gap": 7, "formation_energy_per_atom": -3})
	if ms := movesOf(t, testGeneration(t, tk, 3, ok), OpPropertyDirected); len(ms) != 0 {
		t.Errorf("%d moves for a comfortable hit", len(ms))
	}
}

func TestScratchMoves(t *testing.T) {
	g := testGeneration(t, wideGap(t), 5)
	ms := movesOf(t, g, OpScratch)
	if len(ms) < 10 {
		t.Fatalf("%d scratch moves", len(ms))
	}
	valid := 0
	for _, m := range ms {
		if len(m.parents) != 0 || m.proto == "" {
			t.Errorf("%s: parents %v proto %q", m.comp.ReducedFormula(), m.parents, m.proto)
		}
		if _, ok := buildValid(t, m); ok {
			valid++
		}
	}
	if valid < len(ms)*3/4 {
		t.Errorf("only %d of %d scratch moves valid", valid, len(ms))
	}
}

func TestSubstitutionDensity(t *testing.T) {
	// Substituted structures have sensible densities. Ionic solids come
	// within 10 % of the measured density; tetrahedral chalcogenides are
	// less dense than measured (15 %), because the prototype library sets
	// their bonds from ionic radii, which overestimate covalent bonds
	// (ZnSe: a = 5.96 Å against 5.67 Å).
	tests := []struct {
		parent, proto, from, to, want string
		density, tol                  float64 // measured, g/cm³; relative tolerance
	}{
		{"NaCl", "rocksalt", "Na", "K", "KCl", 1.99, 0.10},
		{"MgO", "rocksalt", "Mg", "Ca", "CaO", 3.34, 0.10},
		{"MgO", "rocksalt", "Mg", "Ni", "NiO", 6.67, 0.10},
		{"SrTiO3", "perovskite", "Sr", "Ba", "BaTiO3", 6.02, 0.10},
		{"ZnS", "zincblende", "S", "Se", "ZnSe", 5.27, 0.15},
	}
	for _, tt := range tests {
		g := testGeneration(t, wideGap(t), 1, parent(t, tt.parent, tt.proto, nil))
		var found bool
		for _, m := range movesOf(t, g, OpOxidationState) {
			if m.comp.ReducedFormula() != tt.want {
				continue
			}
			found = true
			s, ok := buildValid(t, m)
			if !ok {
				t.Errorf("%s invalid", tt.want)
				continue
			}
			if d := s.Density(); math.Abs(d-tt.density)/tt.density > tt.tol {
				t.Errorf("%s from %s: density %.2f g/cm³, measured %.2f", tt.want, tt.parent, d, tt.density)
			}
		}
		if !found {
			t.Errorf("%s not offered from %s", tt.want, tt.parent)
		}
	}
}

func TestSubstitutionOutsideTheLibraryKeepsTheCell(t *testing.T) {
	// An ordered SrBaTi2O6 cell (half the Sr of a doubled perovskite
	// replaced) is no library prototype: substitutions keep its cell and
	// scale its volume with the ions.
	s := crystaltest.Build(t, "perovskite", "SrTiO3")
	sc, err := s.Supercell(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	sc, err = crystal.SubstituteSites(sc, sitesOf(sc, crystal.MustElement("Sr"))[:1], crystal.MustElement("Ba"))
	if err != nil {
		t.Fatal(err)
	}
	g := newGeneration(new(Generator), Input{Task: wideGap(t), Successes: []Parent{{ID: "p", Structure: sc}}, Slots: 1})
	if g.parents[0].proto != nil {
		t.Fatalf("ordered cell identified as %s", g.parents[0].proto.Name)
	}
	grow := map[string]bool{"BaSrZr2O6": true, "BaSr(GeO3)2": false}
	for _, m := range movesOf(t, g, OpOxidationState) {
		want, ok := grow[m.comp.ReducedFormula()]
		if !ok {
			continue
		}
		delete(grow, m.comp.ReducedFormula())
		out, valid := buildValid(t, m)
		if !valid || len(out.Species) != len(sc.Species) || (out.Volume() > sc.Volume()) != want {
			t.Errorf("%s from SrBaTi2O6: volume %.2f → %.2f Å³", m.comp.ReducedFormula(), sc.Volume(), out.Volume())
		}
	}
	if len(grow) > 0 {
		t.Errorf("not offered: %v", grow)
	}
}
