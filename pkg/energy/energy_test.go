package energy

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
	"github.com/crucible-sci/crucible/pkg/mpcompat"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/relax"
)

var (
	calcOnce sync.Once
	calc     *Calculator
	calcErr  error
)

// testCalculator opens the calculator on the shared data, or skips.
func testCalculator(t *testing.T) *Calculator {
	t.Helper()
	dir := testbed.DataDir(t)
	calcOnce.Do(func() { calc, calcErr = Open(dir) })
	if errors.Is(calcErr, datadir.ErrMissing) {
		t.Skipf("data: %v", calcErr)
	}
	if calcErr != nil {
		t.Fatal(calcErr)
	}
	return calc
}

func readGolden(t *testing.T, name string) *crystal.Structure {
	t.Helper()
	st, err := crystal.ReadFile(testbed.DataPath(t, "golden", "cgcnn", "cifs", name))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestPointGolden: the single point of matgl's MoS test cell gives its
// asserted energy, per atom the half of it, and zero forces (by symmetry).
func TestPointGolden(t *testing.T) {
	c := testCalculator(t)
	l, _ := crystal.NewLattice([3][3]float64{{4, 0, 0}, {0, 4, 0}, {0, 0, 4}})
	st, err := crystal.NewStructure(l, []crystal.Element{crystal.MustElement("Mo"), crystal.MustElement("S")},
		[]crystal.Vec3{{0, 0, 0}, {0.5, 0.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Point(st)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.Energy-(-10.824362)) > 1e-5 {
		t.Errorf("energy %.6f, want -10.824362", p.Energy)
	}
	if p.EnergyPerAtom != p.Energy/2 {
		t.Errorf("energy per atom %v, want %v", p.EnergyPerAtom, p.Energy/2)
	}
	if len(p.Forces) != 2 || p.MaxForce() > 1e-8 {
		t.Errorf("forces %v, want two zero vectors", p.Forces)
	}
	// Cubic symmetry: isotropic stress.
	if d := p.Stress[0][0] - p.Stress[2][2]; math.Abs(d) > 1e-8 || math.Abs(p.Stress[0][1]) > 1e-8 {
		t.Errorf("stress %v is not isotropic", p.Stress)
	}
}

// TestRelaxKnown relaxes rock-salt NaCl and MgO and wurtzite GaN from the
// golden prototypes: each converges, its formation energy is within
// 0.1 eV/atom of the reference table's (they are MP ground states, on the
// hull) and its energy above the hull within 0.1 eV/atom of zero; the
// hull distance is the formation energy minus the hull's energy.
func TestRelaxKnown(t *testing.T) {
	c := testCalculator(t)
	ref, err := reference.Load(filepath.Join(testbed.DataDir(t), "data"))
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"proto-NaCl-rocksalt.cif", "proto-MgO-rocksalt.cif", "proto-GaN-wurtzite.cif"}
	var sts []*crystal.Structure
	for _, f := range files {
		sts = append(sts, readGolden(t, f))
	}
	res, errs := c.RelaxAll(context.Background(), sts, relax.Options{}, 2)
	for i, f := range files {
		if errs[i] != nil {
			t.Errorf("%s: %v", f, errs[i])
			continue
		}
		r := res[i]
		formula := r.Structure.Composition().ReducedFormula()
		if !r.Converged || r.FMax >= 0.05 || r.Steps == 0 || r.Steps > 500 {
			t.Errorf("%s: converged %v, fmax %.3g, %d steps", f, r.Converged, r.FMax, r.Steps)
		}
		if r.Energy > r.InitialEnergy+1e-9 {
			t.Errorf("%s: relaxed energy %.6f above the initial %.6f", f, r.Energy, r.InitialEnergy)
		}
		if r.Formation == nil || r.Stability == nil {
			t.Fatalf("%s: no formation energy or stability: %v", f, r.Warnings)
		}
		want, ok := ref.Property("formation_energy_per_atom", formula)
		if !ok {
			t.Fatalf("%s: no reference formation energy", formula)
		}
		t.Logf("%s: %d steps, E/atom %.4f, E_form %.4f (reference %.4f), E_hull %.4f, a %.4f", formula,
			r.Steps, r.EnergyPerAtom, r.Formation.EnergyPerAtom, want.Value, r.Stability.EAboveHull, r.Structure.Lattice.Vector(0).Norm())
		if d := r.Formation.EnergyPerAtom - want.Value; math.Abs(d) > 0.1 {
			t.Errorf("%s: E_form %.4f, reference %.4f", formula, r.Formation.EnergyPerAtom, want.Value)
		}
		if math.Abs(r.Stability.EAboveHull) > 0.1 {
			t.Errorf("%s: E_hull %.4f, want about 0", formula, r.Stability.EAboveHull)
		}
		if d := r.Formation.EnergyPerAtom - r.Stability.HullEnergy - r.Stability.EAboveHull; math.Abs(d) > 1e-12 {
			t.Errorf("%s: E_form − E_hull(composition) ≠ E_above_hull (%g)", formula, d)
		}
		if r.Formation.Scheme != "legacy" {
			t.Errorf("scheme %q, want legacy", r.Formation.Scheme)
		}
		for _, fr := range r.Structure.Frac {
			for _, x := range fr {
				if x < 0 || x >= 1 {
					t.Errorf("%s: fractional coordinate %v not wrapped", formula, fr)
				}
			}
		}
		// The point at the relaxed structure is what the relaxation reports.
		p, err := c.Point(r.Structure)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(p.Energy-r.Energy) > 1e-8 {
			t.Errorf("%s: point energy %.9f, relaxation's %.9f", formula, p.Energy, r.Energy)
		}
	}
}

// TestRelaxMissingData: without correction data or a hull a relaxation
// still succeeds and says what it left out; a structure the potential
// cannot evaluate is an error of its own, and the others still relax.
func TestRelaxMissingData(t *testing.T) {
	c := New(testCalculator(t).Model(), nil, nil)
	good := readGolden(t, "proto-Cu-fcc.cif")
	l, _ := crystal.NewLattice([3][3]float64{{4, 0, 0}, {0, 4, 0}, {0, 0, 4}})
	bad, err := crystal.NewStructure(l, []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl")},
		[]crystal.Vec3{{0, 0, 0}, {0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	res, errs := c.RelaxAll(context.Background(), []*crystal.Structure{bad, good}, relax.Options{MaxSteps: 5}, 2)
	if !errors.Is(errs[0], m3gnet.ErrInput) || res[0] != nil {
		t.Errorf("overlapping atoms: %v, want m3gnet.ErrInput", errs[0])
	}
	if errs[1] != nil {
		t.Fatal(errs[1])
	}
	r := res[1]
	if r.Formation != nil || r.Stability != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "no formation energy") {
		t.Errorf("without data: formation %v, stability %v, warnings %q", r.Formation, r.Stability, r.Warnings)
	}
	if r.Steps > 5 {
		t.Errorf("%d steps, limit 5", r.Steps)
	}
	if _, err := c.Stability(good.Composition(), -1); !errors.Is(err, ErrNoData) {
		t.Errorf("stability without a hull: %v, want ErrNoData", err)
	}
}

// TestReferenceHullOrphan: an element with no reference phase gives no
// hull, with the element named.
func TestReferenceHullOrphan(t *testing.T) {
	c := testCalculator(t)
	comp, err := crystal.ParseFormula("XeF2")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stability(comp, -0.5)
	if err == nil {
		t.Skip("the reference tables hold a Xe phase")
	}
	if !errors.Is(err, ErrNoHull) || !strings.Contains(err.Error(), "Xe") {
		t.Errorf("XeF2: %v, want ErrNoHull naming Xe", err)
	}
}

func TestOutputNames(t *testing.T) {
	if got := OutputNames([]string{"a/x.cif", "b/x.json", "POSCAR", "y.cif"}); strings.Join(got, " ") != "x-1 x-2 POSCAR y" {
		t.Errorf("output names %v", got)
	}
}

func TestParseScheme(t *testing.T) {
	for name, want := range map[string]mpcompat.Scheme{"legacy": mpcompat.Legacy, "MP2020": mpcompat.MP2020, "mp2020": mpcompat.MP2020} {
		got, err := ParseScheme(name)
		if err != nil || got != want {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	if _, err := ParseScheme("gga"); err == nil {
		t.Error("gga: no error")
	}
	c := New(nil, nil, nil)
	if c.Scheme() != mpcompat.Legacy || c.WithScheme(mpcompat.MP2020).Scheme() != mpcompat.MP2020 || c.Scheme() != mpcompat.Legacy {
		t.Error("WithScheme changed the original or did not apply")
	}
}
