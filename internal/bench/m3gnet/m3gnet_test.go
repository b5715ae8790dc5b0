package m3gnet

import (
	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
)

// TestTorchAgrees: the PyTorch implementation reproduces matgl's golden
// energies and Crucible's energies, forces and stress on three of the
// benchmark's crystals.
func TestTorchAgrees(t *testing.T) {
	dir := testbed.DataDir(t)
	if _, err := findPython("python3"); err != nil {
		t.Skip(err)
	}
	model, err := m3gnet.LoadData(dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := benchStructures(dir)
	if err != nil {
		t.Fatal(err)
	}
	var sts []named
	for _, s := range all {
		if s.name == "icsd-7206075.cif" || s.name == "mp-1094120.cif" || s.name == "mp-1180064.cif" {
			sts = append(sts, s)
		}
	}
	if len(sts) != 3 {
		t.Fatalf("%d of the three structures found", len(sts))
	}
	r := &Result{structures: sts}
	goRes, err := r.timeGo(model, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := runTorch(Options{DataDir: dir, Python: "python3", MinTime: time.Millisecond}, sts, "float64")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Golden) != 2 {
		t.Fatalf("%d golden cases", len(tr.Golden))
	}
	for _, g := range tr.Golden {
		if !g.OK {
			t.Errorf("golden %s: %.6f, want %.6f ± %g", g.Name, g.Energy, g.Want, g.Tolerance)
		}
	}
	for i := range goRes {
		t.Logf("%s: Crucible %.12f eV, PyTorch %.12f eV", sts[i].name, goRes[i].Energy, tr.Results[i].Energy)
	}
	a := compare(goRes, tr.Results)
	t.Logf("max |ΔE| %.1e eV, |ΔF| %.1e eV/Å, |Δσ| %.1e GPa", a.energy, a.force, a.stress)
	if a.energy > 1e-8 || a.force > 1e-8 || a.stress > 1e-6 {
		t.Errorf("PyTorch and Crucible differ: %+v", a)
	}
}

func TestCubicCell(t *testing.T) {
	for _, c := range []struct {
		material, structure string
		atoms               int
	}{
		{"Ag", "FCC", 4}, {"Fe", "BCC", 2}, {"NaCl", "Halite (FCC)", 8}, {"GaAs", "Zinc blende (FCC)", 8},
		{"CsCl", "Caesium chloride", 2}, {"SrTiO3", "Cubic perovskite", 5}, {"HfC0.99", "Halite", 8},
	} {
		sys, err := CubicCell(c.material, c.structure, 4)
		if err != nil || len(sys.Pos) != c.atoms || len(sys.Species) != c.atoms {
			t.Errorf("%s %s: %v atoms, %v", c.material, c.structure, sys, err)
		}
	}
	if _, err := CubicCell("Ag", "HCP", 4); err == nil || !strings.Contains(err.Error(), "no builder") {
		t.Errorf("HCP: %v", err)
	}
}

// TestWrite: the report states both implementations' rates, the ratios by
// wall-clock and CPU time, the relaxations per core-hour and the dense
// part.
func TestWrite(t *testing.T) {
	r := &Result{
		structures: make([]named, 2), atoms: 20,
		goRate:     rate{structures: 10, wall: time.Second, cpu: 500 * time.Millisecond},
		torch:      []*torchRun{{DType: "float64", Structures: 4, Seconds: 4, GraphSeconds: 0.4, CPUSeconds: 2}},
		relaxed:    relaxRate{rows: 4, converged: 4, steps: 20, wall: 2 * time.Second, cpu: time.Second},
		denseFLOPs: 4.8e8,
		kernel:     rate{structures: 8e9, wall: 2 * time.Second, cpu: time.Second},
		cpu:        cpuInfo{cputime.CPU{Model: "test", MHz: 2000, AVX2: true, Peak: 32}},
	}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"10.0×", "10.0×", "14400 relaxations per core-hour", "480.0 MFLOP", "100 ms of CPU per pass",
		"4.8 GFLOP/s of dense products", "8.0 GFLOP/s per CPU-second (4.0 per wall-clock second)", "about 60% of the evaluation's CPU time",
		"the kernel reaches 25%, the whole evaluation 15%"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
