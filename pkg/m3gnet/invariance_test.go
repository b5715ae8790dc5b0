package m3gnet

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// rotation returns the rotation by angle about axis (Rodrigues).
func rotation(axis crystal.Vec3, angle float64) [3][3]float64 {
	k := axis.Scale(1 / axis.Norm())
	c, s := math.Cos(angle), math.Sin(angle)
	var r [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[i][j] = (1 - c) * k[i] * k[j]
			if i == j {
				r[i][j] += c
			}
		}
	}
	r[0][1] -= s * k[2]
	r[0][2] += s * k[1]
	r[1][0] += s * k[2]
	r[1][2] -= s * k[0]
	r[2][0] -= s * k[1]
	r[2][1] += s * k[0]
	return r
}

func apply(r [3][3]float64, v crystal.Vec3) crystal.Vec3 {
	var w crystal.Vec3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			w[i] += r[i][j] * v[j]
		}
	}
	return w
}

func maxDiff(a, b []crystal.Vec3) float64 {
	d := 0.0
	for i := range a {
		d = math.Max(d, a[i].Sub(b[i]).Norm())
	}
	return d
}

// TestInvariance checks that the energy is unchanged, and forces and stress
// transform as vectors and tensors, under a rotation and a translation of
// the whole system; and that permuting the atoms permutes the forces (for
// the paper's indexing exactly; matgl's depends on the bond order, which a
// permutation changes, so there the change is reported and bounded).
func TestInvariance(t *testing.T) {
	base := testModel(t)
	rng := rand.New(rand.NewPCG(3, 4))
	cases := fdCases()
	for _, ci := range []int{2, 4, 6} {
		c := cases[ci]
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, ix := range []Indexing{IndexMatgl, IndexPaper} {
				m := base.WithIndexing(ix)
				ws := NewWorkspace()
				var r0, r1 Result
				if err := m.Evaluate(ws, c.sys, &r0); err != nil {
					t.Fatal(err)
				}
				scale := 1e-9 * math.Max(1, math.Abs(r0.Energy))

				// Rotation and translation together.
				rot := rotation(crystal.Vec3{rng.Float64(), rng.Float64() - 0.5, 0.3}, 1.1)
				shift := crystal.Vec3{0.7, -2.3, 5.1}
				moved := c.sys.Copy()
				for i := range moved.Cell {
					moved.Cell[i] = apply(rot, moved.Cell[i])
				}
				for i := range moved.Pos {
					moved.Pos[i] = apply(rot, moved.Pos[i]).Add(shift)
				}
				if err := m.Evaluate(ws, moved, &r1); err != nil {
					t.Fatal(err)
				}
				want := make([]crystal.Vec3, len(r0.Forces))
				for i, f := range r0.Forces {
					want[i] = apply(rot, f)
				}
				// σ' = R σ Rᵀ.
				var ws0 [3][3]float64
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						for k := 0; k < 3; k++ {
							for l := 0; l < 3; l++ {
								ws0[i][j] += rot[i][k] * r0.Stress[k][l] * rot[j][l]
							}
						}
					}
				}
				ds := 0.0
				for i := 0; i < 3; i++ {
					for j := 0; j < 3; j++ {
						ds = math.Max(ds, math.Abs(ws0[i][j]-r1.Stress[i][j]))
					}
				}
				dE, dF := math.Abs(r1.Energy-r0.Energy), maxDiff(want, r1.Forces)
				t.Logf("indexing %d: rotated and translated: ΔE %.2g eV, ΔF %.2g eV/Å, Δσ %.2g GPa", ix, dE, dF, ds)
				if dE > scale || dF > 1e-8 || ds > 1e-7 {
					t.Errorf("indexing %d: not invariant under rotation and translation", ix)
				}

				// Permutation.
				perm := rng.Perm(len(c.sys.Pos))
				p := c.sys.Copy()
				for i, j := range perm {
					p.Pos[i], p.Species[i] = c.sys.Pos[j], c.sys.Species[j]
				}
				if err := m.Evaluate(ws, p, &r1); err != nil {
					t.Fatal(err)
				}
				for i, j := range perm {
					want[i] = r0.Forces[j]
				}
				dE, dF = math.Abs(r1.Energy-r0.Energy), maxDiff(want, r1.Forces)
				t.Logf("indexing %d: permuted: ΔE %.2g eV, ΔF %.2g eV/Å", ix, dE, dF)
				limE, limF := scale, 1e-8
				if ix == IndexMatgl {
					limE, limF = 1e-3, 0.05
				}
				if dE > limE || dF > limF {
					t.Errorf("indexing %d: permuting the atoms changed the energy by %.2g eV and the forces by %.2g eV/Å", ix, dE, dF)
				}
			}
		})
	}
}

// TestMolecule checks the molecule of the golden set (no cell): forces
// against central differences, zero net force, and zero stress.
func TestMolecule(t *testing.T) {
	m := testModel(t)
	var mol *System
	for _, c := range goldenCases(t) {
		if !c.Periodic {
			mol = c.system(t)
		}
	}
	if mol == nil {
		t.Fatal("no molecule in the golden set")
	}
	ws := NewWorkspace()
	var res Result
	if err := m.Evaluate(ws, mol, &res); err != nil {
		t.Fatal(err)
	}
	var net crystal.Vec3
	fmax := 0.0
	for _, f := range res.Forces {
		net = net.Add(f)
		fmax = math.Max(fmax, f.Norm())
	}
	if net.Norm() > 1e-9 {
		t.Errorf("net force %v eV/Å, want 0", net)
	}
	if res.Stress != ([3][3]float64{}) {
		t.Errorf("stress %v for a molecule, want 0", res.Stress)
	}
	const h = 1e-4
	errF := 0.0
	for _, i := range []int{0, 7, 21, 41} {
		for k := 0; k < 3; k++ {
			p, q := mol.Copy(), mol.Copy()
			p.Pos[i][k] += h
			q.Pos[i][k] -= h
			ep, err := m.Energy(ws, p)
			if err != nil {
				t.Fatal(err)
			}
			eq, _ := m.Energy(ws, q)
			errF = math.Max(errF, math.Abs(-(ep-eq)/(2*h)-res.Forces[i][k]))
		}
	}
	t.Logf("molecule: E %.6f eV, max |F| %.3g eV/Å, FD error %.2g (rel %.2g)", res.Energy, fmax, errF, errF/fmax)
	if errF/fmax > 1e-5 {
		t.Errorf("forces differ from central differences by %.2g relative", errF/fmax)
	}
}

// TestEvaluateAll checks the parallel batch against one-by-one evaluation,
// and that bad input is reported per system.
func TestEvaluateAll(t *testing.T) {
	m := testModel(t)
	cases := fdCases()[:6]
	var systems []*System
	for _, c := range cases {
		systems = append(systems, c.sys)
	}
	bad := cases[1].sys.Copy()
	bad.Species[0] = crystal.MustElement("Po") // not among the 89
	systems = append(systems, bad)
	res, errs := m.EvaluateAll(systems, 2)
	ws := NewWorkspace()
	for i, c := range cases {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		var r Result
		if err := m.Evaluate(ws, c.sys, &r); err != nil {
			t.Fatal(err)
		}
		if r.Energy != res[i].Energy || maxDiff(r.Forces, res[i].Forces) != 0 {
			t.Errorf("%s: batch result differs from a single evaluation", c.name)
		}
	}
	if errs[len(cases)] == nil {
		t.Error("an element outside the potential was accepted")
	}
}

// TestBadInput checks that malformed systems are rejected with ErrInput.
func TestBadInput(t *testing.T) {
	m := testModel(t)
	good := fdCases()[2].sys
	cases := map[string]func(s *System){
		"no atoms":         func(s *System) { s.Species, s.Pos = nil, nil },
		"count mismatch":   func(s *System) { s.Pos = s.Pos[:1] },
		"NaN position":     func(s *System) { s.Pos[0][1] = math.NaN() },
		"coincident atoms": func(s *System) { s.Pos[1] = s.Pos[0] },
		"flat cell":        func(s *System) { s.Cell[2] = s.Cell[1] },
		"unknown element":  func(s *System) { s.Species[0] = crystal.MustElement("Rn") },
	}
	for name, mutate := range cases {
		s := good.Copy()
		mutate(s)
		var r Result
		if err := m.Evaluate(NewWorkspace(), s, &r); !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", name, err)
		}
	}
}
