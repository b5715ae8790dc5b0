package evolve

import (
	"math"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func el(s string) crystal.Element { return crystal.MustElement(s) }

func TestClosedShell(t *testing.T) {
	tests := []struct {
		sym  string
		q    int
		want bool
	}{
		{"Mg", 2, true}, {"Al", 3, true}, {"Sn", 2, true},
		{"Sc", 3, true}, {"Ti", 4, true}, {"Nb", 5, true}, // d0
		{"Zn", 2, true}, {"Ga", 3, true}, {"Cu", 1, true}, {"Ag", 1, true}, // d10
		{"Fe", 2, false}, {"Fe", 3, false}, {"Ni", 2, false}, {"Cu", 2, false}, {"Ti", 3, false},
		{"La", 3, true}, {"Ce", 4, true}, {"Lu", 3, true}, // f0, f14
		{"Ce", 3, false}, {"Gd", 3, false}, {"Eu", 2, false},
		{"Th", 4, true}, {"U", 4, false},
	}
	for _, tt := range tests {
		if got := closedShell(el(tt.sym), tt.q); got != tt.want {
			t.Errorf("closedShell(%s%+d) = %v", tt.sym, tt.q, got)
		}
	}
}

func TestLadderStep(t *testing.T) {
	tests := []struct {
		sym  string
		step int
		want string // "" for none
	}{
		{"Ga", -1, "Zn"}, {"Zn", -1, "Cu"}, {"N", 1, "O"}, {"O", 1, "F"}, {"F", 1, ""},
		{"Al", -1, "Mg"}, {"Mg", 1, "Al"}, {"Ca", 1, "Sc"}, {"Li", -1, ""}, {"Sr", -1, "Rb"},
		{"Fe", 1, ""}, // on no ladder
	}
	for _, tt := range tests {
		got, ok := ladderStep(el(tt.sym), tt.step)
		if (tt.want == "") == ok || (ok && got.Symbol() != tt.want) {
			t.Errorf("ladderStep(%s, %+d) = %v, %v; want %q", tt.sym, tt.step, got, ok, tt.want)
		}
	}
}

func TestToleranceFactor(t *testing.T) {
	// Shannon radii: SrTiO3 t = (1.44 + 1.40)/(√2 (0.605 + 1.40)) = 1.0016.
	tf, mu, ok := toleranceFactor(ion{el("Sr"), 2}, ion{el("Ti"), 4}, ion{el("O"), -2})
	if !ok || math.Abs(tf-1.0016) > 1e-3 || math.Abs(mu-0.605/1.40) > 1e-9 {
		t.Errorf("SrTiO3: t = %.4f, μ = %.4f, %v", tf, mu, ok)
	}
	p, err := crystal.PrototypeByName("perovskite")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b    ion
		wantMin float64
		wantMax float64
	}{
		{ion{el("Sr"), 2}, ion{el("Ti"), 4}, 0.9, 1},  // cubic
		{ion{el("Ca"), 2}, ion{el("Ti"), 4}, 0.3, 1},  // t = 0.97
		{ion{el("Cs"), 1}, ion{el("Al"), 3}, 0, 0},    // t = 1.20: not formable
		{ion{el("Li"), 1}, ion{el("Nb"), 5}, 0, 0.05}, // t = 0.82 (LiNbO3 is not a perovskite)
		{ion{el("Mg"), 2}, ion{el("Ba"), 2}, 0, 0},    // small A, large B: t = 0.59
	}
	for _, tt := range tests {
		fit := siteFit(p, []ion{tt.a, tt.b, {el("O"), -2}})
		if fit < tt.wantMin || fit > tt.wantMax {
			t.Errorf("%s%s O3: fit %.3f, want %.2f–%.2f", tt.a.el, tt.b.el, fit, tt.wantMin, tt.wantMax)
		}
	}
}

func TestSiteFitFollowsRadiusRatios(t *testing.T) {
	// Pauling's first rule: Be2+ (small) prefers tetrahedra, Cs+ cubes.
	proto := func(name string) *crystal.Prototype {
		p, err := crystal.PrototypeByName(name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	o, cl := ion{el("O"), -2}, ion{el("Cl"), -1}
	be := ion{el("Be"), 2}
	if !(siteFit(proto("wurtzite"), []ion{be, o}) > siteFit(proto("rocksalt"), []ion{be, o})) {
		t.Error("BeO: tetrahedral should fit better than octahedral")
	}
	cs := ion{el("Cs"), 1}
	if !(siteFit(proto("cscl"), []ion{cs, cl}) > siteFit(proto("zincblende"), []ion{cs, cl})) {
		t.Error("CsCl: cubic should fit better than tetrahedral")
	}
	mg := ion{el("Mg"), 2}
	if siteFit(proto("rocksalt"), []ion{mg, o}) != 1 {
		t.Error("MgO: r+/r− = 0.51 is inside the octahedral window")
	}
}

func TestPalette(t *testing.T) {
	p := palette(nil)
	for _, sym := range []string{"H", "He", "Ar", "Tc", "Pm", "Po", "U", "Pu"} {
		for _, e := range p {
			if e.Symbol() == sym {
				t.Errorf("%s in the palette", sym)
			}
		}
	}
	noPb := palette(func(e crystal.Element) bool { return e.Symbol() != "Pb" })
	if len(noPb) != len(p)-1 {
		t.Errorf("palette without Pb has %d elements, full %d", len(noPb), len(p))
	}
	if !hasState(el("Fe"), 3) || hasState(el("Fe"), 4) || !hasState(el("O"), -2) || hasState(el("N"), 5) || hasState(el("O"), 2) {
		t.Error("hasState")
	}
}
