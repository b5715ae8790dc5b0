package m3gnet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// randomCell returns a periodic system of n atoms drawn from elems in a
// strained, sheared cell of about vpa Å³ per atom, atoms at least dmin Å
// apart.
func randomCell(rng *rand.Rand, n int, elems []string, vpa, dmin float64) *System {
	a := math.Cbrt(vpa * float64(n))
	var cell [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			cell[i][j] = a * 0.12 * (rng.Float64() - 0.5)
		}
		cell[i][i] += a * (0.9 + 0.2*rng.Float64())
	}
	lat, err := crystal.NewLattice(cell)
	if err != nil {
		panic(err)
	}
	sys := &System{Cell: cell, Periodic: true}
	for len(sys.Pos) < n {
		p := lat.Cartesian(crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()})
		ok := true
		for _, q := range sys.Pos {
			f := lat.Fractional(p.Sub(q))
			for k := range f {
				f[k] -= math.Round(f[k])
			}
			if lat.Cartesian(f).Norm() < dmin {
				ok = false
				break
			}
		}
		if ok {
			sys.Pos = append(sys.Pos, p)
			sys.Species = append(sys.Species, crystal.MustElement(elems[len(sys.Pos)%len(elems)]))
		}
	}
	return sys
}

// fdCases are the systems of the finite-difference tests: 1 to 60 atoms of
// varied chemistry (metals, oxides, halides, a chalcogenide, a nitride),
// cells strained and sheared, positions random.
func fdCases() []struct {
	name string
	sys  *System
} {
	rng := rand.New(rand.NewPCG(7, 22))
	type spec struct {
		n     int
		elems []string
		vpa   float64
	}
	specs := []spec{
		{1, []string{"Cu"}, 12},
		{2, []string{"Na", "Cl"}, 22},
		{3, []string{"Fe", "Al", "Ni"}, 12},
		{5, []string{"Sr", "Ti", "O", "O", "O"}, 12},
		{8, []string{"Li", "Co", "O", "O"}, 10},
		{12, []string{"Ga", "N"}, 11},
		{16, []string{"Cs", "Pb", "I", "I", "I"}, 35},
		{24, []string{"Mo", "S", "S"}, 18},
		{36, []string{"Ca", "Si", "O", "O", "O", "Mg"}, 14},
		{60, []string{"Zn", "Se", "H", "C"}, 16},
	}
	var out []struct {
		name string
		sys  *System
	}
	for _, s := range specs {
		sys := randomCell(rng, s.n, s.elems, s.vpa, 1.7)
		out = append(out, struct {
			name string
			sys  *System
		}{fmt.Sprintf("%d-%s", s.n, s.elems[0]), sys})
	}
	return out
}

func strained(sys *System, eps [3][3]float64) *System {
	out := sys.Copy()
	def := func(v [3]float64) [3]float64 {
		var w [3]float64
		for j := 0; j < 3; j++ {
			w[j] = v[j]
			for k := 0; k < 3; k++ {
				w[j] += v[k] * eps[k][j]
			}
		}
		return w
	}
	for i := range out.Cell {
		out.Cell[i] = def(out.Cell[i])
	}
	for i := range out.Pos {
		out.Pos[i] = def(out.Pos[i])
	}
	return out
}

// fdAtoms are the atoms whose forces are checked: all of a small cell,
// four spread over a large one (each costs six energies).
func fdAtoms(n int) []int {
	if n <= 5 {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	return []int{0, n / 3, 2 * n / 3, n - 1}
}

func TestForcesStressFiniteDifferences(t *testing.T) {
	base := testModel(t)
	for _, ix := range []Indexing{IndexMatgl, IndexPaper} {
		m := base.WithIndexing(ix)
		for ci, c := range fdCases() {
			if ix == IndexPaper && ci%3 != 1 {
				continue // the paper's indexing on a few cells only
			}
			name := map[Indexing]string{IndexMatgl: "matgl", IndexPaper: "paper"}[ix]
			t.Run(name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				ws := NewWorkspace()
				var res Result
				if err := m.Evaluate(ws, c.sys, &res); err != nil {
					t.Fatal(err)
				}
				// With IndexMatgl the energy jumps where a bond crosses
				// either cutoff (see IndexMatgl); a difference across such
				// a change of the graph is no derivative, so it is skipped
				// (and counted).
				type graph struct{ bonds, kept int }
				var g0 graph
				energy := func(s *System) (float64, graph) {
					e, err := m.Energy(ws, s)
					if err != nil {
						t.Fatal(err)
					}
					return e, graph{len(ws.src), len(ws.kept)}
				}
				_, g0 = energy(c.sys)
				skipped, total := 0, 0
				diff := func(p, q *System, h float64) (float64, bool) {
					total++
					ep, gp := energy(p)
					eq, gq := energy(q)
					if gp != g0 || gq != g0 {
						skipped++
						return 0, false
					}
					return (ep - eq) / (2 * h), true
				}
				const h = 1e-4
				fmax, errF := 0.0, 0.0
				for _, i := range fdAtoms(len(c.sys.Pos)) {
					for k := 0; k < 3; k++ {
						p, q := c.sys.Copy(), c.sys.Copy()
						p.Pos[i][k] += h
						q.Pos[i][k] -= h
						fmax = math.Max(fmax, math.Abs(res.Forces[i][k]))
						if d, ok := diff(p, q, h); ok {
							errF = math.Max(errF, math.Abs(-d-res.Forces[i][k]))
						}
					}
				}
				vol := math.Abs(crystal.Vec3(c.sys.Cell[0]).Dot(crystal.Vec3(c.sys.Cell[1]).Cross(crystal.Vec3(c.sys.Cell[2]))))
				smax, errS := 0.0, 0.0
				for k := 0; k < 3; k++ {
					for j := 0; j < 3; j++ {
						var ep, em [3][3]float64
						ep[k][j], em[k][j] = h, -h
						smax = math.Max(smax, math.Abs(res.Stress[k][j]))
						if d, ok := diff(strained(c.sys, ep), strained(c.sys, em), h); ok {
							errS = math.Max(errS, math.Abs(d/vol*evPerA3ToGPa-res.Stress[k][j]))
						}
					}
				}
				if ix == IndexPaper && skipped > 0 || 2*skipped > total {
					t.Errorf("%d of %d differences straddle a change of the graph", skipped, total)
				}
				relF, relS := errF/math.Max(fmax, 1e-3), errS/math.Max(smax, 1e-2)
				t.Logf("%d of %d differences skipped; E %.6f eV; max |F| %.4g eV/Å, FD error %.2g (rel %.2g); max |σ| %.4g GPa, FD error %.2g (rel %.2g)", skipped, total, res.Energy, fmax, errF, relF, smax, errS, relS)
				if relF > 1e-5 || relS > 1e-5 {
					t.Errorf("forces or stress differ from central differences: relative errors %.2g, %.2g (limit 1e-5)", relF, relS)
				}
			})
		}
	}
}
