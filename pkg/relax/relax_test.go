package relax

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
)

func TestExpmFrechet(t *testing.T) {
	a := mat3{{0.01, 0.02, -0.03}, {0.02, -0.05, 0.01}, {-0.03, 0.01, 0.04}}
	e := mat3{{0.3, -0.1, 0.2}, {0.5, 0.1, -0.4}, {0.2, 0.7, -0.2}}
	const h = 1e-6
	var ap, am mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			ap[i][j] = a[i][j] + h*e[i][j]
			am[i][j] = a[i][j] - h*e[i][j]
		}
	}
	xp, xm := expm3(ap), expm3(am)
	l := expmFrechet(a, e)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			fd := (xp[i][j] - xm[i][j]) / (2 * h)
			if math.Abs(fd-l[i][j]) > 1e-9 {
				t.Errorf("L[%d][%d] = %g, finite difference %g", i, j, l[i][j], fd)
			}
		}
	}
	// exp of a diagonal matrix.
	d := expm3(mat3{{1, 0, 0}, {0, -2, 0}, {0, 0, 0.5}})
	for i, want := range []float64{math.E, math.Exp(-2), math.Exp(0.5)} {
		if math.Abs(d[i][i]-want) > 1e-14*want {
			t.Errorf("exp diagonal %d = %v, want %v", i, d[i][i], want)
		}
	}
}

var (
	modelOnce sync.Once
	model     *m3gnet.Model
	modelErr  error
)

func testModel(t testing.TB) *m3gnet.Model {
	t.Helper()
	dir := os.Getenv("CRUCIBLE_DATA")
	if dir == "" {
		t.Skip("CRUCIBLE_DATA not set")
	}
	if _, err := os.Stat(filepath.Join(dir, m3gnet.DataPath, "state.pt")); err != nil {
		t.Skipf("no M3GNet potential: %v", err)
	}
	modelOnce.Do(func() { model, modelErr = m3gnet.LoadData(dir) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return model
}

// TestRelaxConverges relaxes a distorted rock-salt cell and checks the
// result: converged below fmax, forces and stress small, energy lower.
func TestRelaxConverges(t *testing.T) {
	m := testModel(t)
	sys := &m3gnet.System{
		Species:  []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl")},
		Pos:      []crystal.Vec3{{0.1, 0, 0}, {2.9, 2.7, 2.8}},
		Cell:     [3][3]float64{{0.2, 2.9, 2.8}, {2.8, 0, 2.7}, {2.8, 2.9, 0.1}},
		Periodic: true,
	}
	r, err := Relax(context.Background(), m3gnet.NewCalculator(m), sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmax := 0.0
	for _, f := range r.Forces {
		fmax = math.Max(fmax, f.Norm())
	}
	t.Logf("NaCl: %d steps, converged %v, E %.4f → %.4f eV, max |F| %.3g eV/Å, σ %.3g GPa", r.Steps, r.Converged, r.InitialEnergy, r.Energy, fmax, r.Stress)
	if !r.Converged || fmax >= 0.05 || r.Energy >= r.InitialEnergy {
		t.Errorf("relaxation did not converge to a lower energy")
	}
	for i := 0; i < 3; i++ {
		if math.Abs(r.Stress[i][i]) > 1 {
			t.Errorf("stress %v GPa after relaxation", r.Stress)
		}
	}
}

// TestFilterForces checks the generalised forces of the cell filter against
// central differences of the energy in the optimiser's coordinates, at a
// deformed cell (U ≠ 0), for the atoms and the three cell rows.
func TestFilterForces(t *testing.T) {
	m := testModel(t)
	sys := &m3gnet.System{
		Species:  []crystal.Element{crystal.MustElement("Mg"), crystal.MustElement("O"), crystal.MustElement("Si")},
		Pos:      []crystal.Vec3{{0.1, 0.2, 0}, {2.1, 1.9, 2.2}, {0.2, 2.3, 2.0}},
		Cell:     [3][3]float64{{0.3, 2.9, 2.8}, {3.8, 0.2, 2.6}, {2.7, 3.1, 0.1}},
		Periodic: true,
	}
	opt := Options{}.withDefaults(len(sys.Pos))
	fl := newFilter(m3gnet.NewCalculator(m), sys, true, opt)
	n := len(sys.Pos)
	// A deformed, sheared starting point.
	fl.q[n] = crystal.Vec3{0.05, 0.02, -0.01}.Scale(opt.CellFactor)
	fl.q[n+1] = crystal.Vec3{-0.03, -0.04, 0.03}.Scale(opt.CellFactor)
	fl.q[n+2] = crystal.Vec3{0.01, 0.02, 0.06}.Scale(opt.CellFactor)
	if _, err := fl.evaluate(); err != nil {
		t.Fatal(err)
	}
	want := append([]crystal.Vec3(nil), fl.f...)
	const h = 1e-5
	worst, fmax := 0.0, 0.0
	for i := range fl.q {
		for k := 0; k < 3; k++ {
			x := fl.q[i][k]
			fl.q[i][k] = x + h
			if _, err := fl.evaluate(); err != nil {
				t.Fatal(err)
			}
			ep := fl.res.Energy
			fl.q[i][k] = x - h
			if _, err := fl.evaluate(); err != nil {
				t.Fatal(err)
			}
			em := fl.res.Energy
			fl.q[i][k] = x
			fd := -(ep - em) / (2 * h)
			worst = math.Max(worst, math.Abs(fd-want[i][k]))
			fmax = math.Max(fmax, math.Abs(want[i][k]))
		}
	}
	t.Logf("generalised forces: max %.3g, largest difference from central differences %.2g", fmax, worst)
	if worst > 1e-5*fmax {
		t.Errorf("generalised forces differ from −∂E/∂q by %.2g (max %.3g)", worst, fmax)
	}
}

// TestRelaxMolecule relaxes a stretched, bent water molecule (no cell):
// positions only, converged, O–H bonds back near 0.97 Å.
func TestRelaxMolecule(t *testing.T) {
	m := testModel(t)
	sys := &m3gnet.System{
		Species: []crystal.Element{crystal.MustElement("O"), crystal.MustElement("H"), crystal.MustElement("H")},
		Pos:     []crystal.Vec3{{0, 0, 0}, {1.2, 0.1, 0}, {-0.2, 1.1, 0.1}},
	}
	r, err := Relax(context.Background(), m3gnet.NewCalculator(m), sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d1 := r.System.Pos[1].Sub(r.System.Pos[0]).Norm()
	d2 := r.System.Pos[2].Sub(r.System.Pos[0]).Norm()
	t.Logf("H2O: %d steps, converged %v, E %.4f → %.4f eV, O–H %.3f, %.3f Å", r.Steps, r.Converged, r.InitialEnergy, r.Energy, d1, d2)
	if !r.Converged || r.Energy >= r.InitialEnergy || math.Abs(d1-0.97) > 0.05 || math.Abs(d2-0.97) > 0.05 {
		t.Errorf("water did not relax to O–H ≈ 0.97 Å")
	}
	if r.System.Cell != sys.Cell {
		t.Errorf("a molecule's cell changed")
	}
}

// TestRelaxCancel stops at once on a cancelled context.
func TestRelaxCancel(t *testing.T) {
	m := testModel(t)
	sys := &m3gnet.System{
		Species:  []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl")},
		Pos:      []crystal.Vec3{{0.3, 0, 0}, {2.9, 2.7, 2.8}},
		Cell:     [3][3]float64{{0.2, 2.9, 2.8}, {2.8, 0, 2.7}, {2.8, 2.9, 0.1}},
		Periodic: true,
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Relax(ctx, m3gnet.NewCalculator(m), sys, Options{}); err == nil {
		t.Error("a cancelled relaxation returned no error")
	}
}

// TestRelaxAll checks the parallel batch against one-by-one relaxation.
func TestRelaxAll(t *testing.T) {
	m := testModel(t)
	rows := latticeRows(t)[:4]
	var systems []*m3gnet.System
	for _, r := range rows {
		s, err := conventionalCell(r, r.AMP)
		if err != nil {
			t.Fatal(err)
		}
		systems = append(systems, s)
	}
	res, errs := RelaxAll(context.Background(), func() Potential { return m3gnet.NewCalculator(m) }, systems, Options{}, 2)
	for i, s := range systems {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		one, err := Relax(context.Background(), m3gnet.NewCalculator(m), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if one.Energy != res[i].Energy || one.Steps != res[i].Steps {
			t.Errorf("%s: batch %v eV in %d steps, alone %v eV in %d", rows[i].Material, res[i].Energy, res[i].Steps, one.Energy, one.Steps)
		}
	}
}
