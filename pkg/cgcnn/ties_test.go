package cgcnn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// shells returns sorted distances: counts[k] copies of d[k].
func shells(d []float64, counts []int) []float64 {
	var out []float64
	for k, n := range counts {
		for range n {
			out = append(out, d[k])
		}
	}
	return out
}

func TestCutWeights(t *testing.T) {
	const tol, ramp = TieTolerance, TieRamp
	ones := func(n int) []float64 { return shells([]float64{1}, []int{n}) }
	for _, tc := range []struct {
		name string
		d    []float64
		want []float64
	}{
		{"no tie", shells([]float64{2, 3}, []int{12, 3}), append(ones(12), 0, 0, 0)},
		{"shell ends at the cut", shells([]float64{2, 3, 3.5}, []int{6, 6, 8}), append(ones(12), make([]float64, 8)...)},
		{"rock salt: 6 slots for 12", shells([]float64{2.82, 3.99}, []int{6, 12}), append(ones(6), shells([]float64{0.5}, []int{12})...)},
		{"perovskite O: 10 slots for 12", shells([]float64{1.95, 2.76}, []int{2, 12}), append(ones(2), shells([]float64{10.0 / 12}, []int{12})...)},
		{"rounding within the tolerance", []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2 - 4e-16, 2, 2 + 9e-7},
			append(ones(11), 1.0/3, 1.0/3, 1.0/3)},
		{"on the ramp", append(ones(11), 2, 2+tol+ramp/2), append(ones(11), 0.75, 0.25)},
		{"end of the ramp", append(ones(11), 2, 2+tol+ramp), append(ones(12), 0)},
		{"ramp below the cut", append(ones(10), 2-tol-ramp/2, 2, 2), append(ones(10), 1, 0.5, 0.5)},
		// Σ (c − x_j)/ramp + ½ = 2 over x = −ramp/8, 0, ramp/2: c = 7·ramp/24.
		{"ramp both sides", append(ones(10), 2-tol-ramp/8, 2, 2+tol+ramp/2), append(ones(10), 22.0/24, 19.0/24, 7.0/24)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := make([]float64, len(tc.d))
			cutWeights(tc.d, MaxNeighbors, w)
			if !slices.EqualFunc(w, tc.want, func(x, y float64) bool { return math.Abs(x-y) < 1e-10 }) {
				t.Errorf("weights %v, want %v", w, tc.want)
			}
		})
	}
}

// TestCutWeightsProperties checks, on random distances clustered so that
// ties and near-ties are common, that the weights lie in [0, 1], sum to
// MaxNeighbors, do not increase with the distance, are equal for equal
// distances and exactly 1 up to the twelfth when the next neighbour is
// beyond the ramp; and that they are a continuous function of the
// distances: moving one distance by δ changes no weight by more than
// about 2δ/TieRamp.
func TestCutWeightsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	scales := []float64{0, 1e-16, 1e-7, 3e-6, 1e-5, 1e-4, 0.1}
	for it := range 20000 {
		n := MaxNeighbors + 1 + rng.IntN(12)
		d := make([]float64, n)
		x := 2.0
		for j := range d {
			x += scales[rng.IntN(len(scales))] * rng.Float64()
			d[j] = x
		}
		w := make([]float64, n)
		cutWeights(d, MaxNeighbors, w)
		sum := 0.0
		for j, wj := range w {
			sum += wj
			if !(wj >= 0 && wj <= 1) || (j > 0 && wj > w[j-1]+1e-12) || (j > 0 && d[j] == d[j-1] && wj != w[j-1]) {
				t.Fatalf("case %d: distances %v, weights %v", it, d, w)
			}
		}
		if math.Abs(sum-MaxNeighbors) > 1e-9 {
			t.Fatalf("case %d: weights sum to %v: distances %v, weights %v", it, sum, d, w)
		}
		if d[MaxNeighbors]-d[MaxNeighbors-1] > TieTolerance+TieRamp {
			for j, wj := range w {
				if want := float64(min(1, max(0, MaxNeighbors-j))); wj != want {
					t.Fatalf("case %d: no near-tie, but weight %d is %v: distances %v", it, j, wj, d)
				}
			}
		}
		// Continuity: perturb one distance, keeping the order.
		j := rng.IntN(n)
		delta := 1e-9 * (rng.Float64() - 0.5)
		e := slices.Clone(d)
		e[j] += delta
		if (j > 0 && e[j] < e[j-1]) || (j < n-1 && e[j] > e[j+1]) {
			continue
		}
		v := make([]float64, n)
		cutWeights(e, MaxNeighbors, v)
		for k := range w {
			if math.Abs(v[k]-w[k]) > 2*math.Abs(delta)/TieRamp+1e-12 {
				t.Fatalf("case %d: moving distance %d by %.2g moves weight %d from %v to %v", it, j, delta, k, w[k], v[k])
			}
		}
	}
}

// tieGraph is a hand-made graph: one atom per group, each with full
// edges of weight 1 and then fractional edges on neighbours of the given
// elements with the given total weight.
func tieGraph(groups [][]crystal.Element, full []int) *Graph {
	g := &Graph{}
	for i, els := range groups {
		g.start = append(g.start, int32(len(g.weight)))
		for range full[i] {
			g.weight = append(g.weight, 1)
			g.mult = append(g.mult, 1)
			g.nbrEl = append(g.nbrEl, 0)
		}
		g.split = append(g.split, int32(len(g.weight)))
		slots := float64(MaxNeighbors - full[i])
		for _, e := range els {
			g.weight = append(g.weight, slots/float64(len(els)))
			g.mult = append(g.mult, 1)
			g.nbrEl = append(g.nbrEl, e)
		}
	}
	g.start = append(g.start, int32(len(g.weight)))
	return g
}

func TestTieChoices(t *testing.T) {
	ba, o, ti, sr := crystal.MustElement("Ba"), crystal.MustElement("O"), crystal.MustElement("Ti"), crystal.MustElement("Sr")
	perovskiteO := append(shells([]float64{float64(ba)}, []int{4}), shells([]float64{float64(o)}, []int{8})...)
	group := func(z []float64) []crystal.Element {
		out := make([]crystal.Element, len(z))
		for i, x := range z {
			out[i] = crystal.Element(x)
		}
		return out
	}
	oGroup := group(perovskiteO)
	tiGroup := slices.Repeat([]crystal.Element{ba}, 8) // one element: no choice
	for _, tc := range []struct {
		name    string
		groups  [][]crystal.Element
		full    []int
		choices int
	}{
		{"single element", [][]crystal.Element{tiGroup}, []int{6}, 0},
		{"one perovskite X: 2, 3 or 4 A", [][]crystal.Element{oGroup}, []int{2}, 3},
		{"perovskite: B and three X", [][]crystal.Element{tiGroup, oGroup, oGroup, oGroup}, []int{6, 2, 2, 2}, 3},
		// 4 slots for 2 + 2 + 2 of three elements: 6 compositions.
		{"three elements", [][]crystal.Element{{ba, ba, sr, sr, ti, ti}}, []int{8}, 6},
		// Ranks scaled: the first atom's 6 compositions, the second's 3.
		{"three and two elements", [][]crystal.Element{{ba, ba, sr, sr, ti, ti}, oGroup}, []int{8, 2}, 6},
		// 11 compositions (10 slots for 10 + 10): the first, the last and
		// six between.
		{"more compositions than choices", [][]crystal.Element{append(slices.Repeat([]crystal.Element{ba}, 10), slices.Repeat([]crystal.Element{o}, 10)...)}, []int{2}, maxTieChoices},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := tieGraph(tc.groups, tc.full)
			g.setTieChoices()
			if len(g.alts) != tc.choices {
				t.Fatalf("%d choices, want %d", len(g.alts), tc.choices)
			}
			for c, w := range g.alts {
				for i := range tc.groups {
					lo, split, hi := g.start[i], g.split[i], g.start[i+1]
					sum := 0.0
					byEl := map[crystal.Element][]float64{}
					for e := lo; e < hi; e++ {
						sum += w[e]
						if e < split && w[e] != 1 {
							t.Fatalf("choice %d atom %d: full edge %d weighs %v", c, i, e, w[e])
						}
						if e >= split {
							byEl[g.nbrEl[e]] = append(byEl[g.nbrEl[e]], w[e])
						}
					}
					if math.Abs(sum-MaxNeighbors) > 1e-12 {
						t.Fatalf("choice %d atom %d: weights sum to %v", c, i, sum)
					}
					for el, ws := range byEl {
						if slices.Min(ws) != slices.Max(ws) || ws[0] < 0 || ws[0] > 1 {
							t.Fatalf("choice %d atom %d: weights of %v: %v", c, i, el, ws)
						}
						if k := ws[0] * float64(len(ws)); math.Abs(k-math.Round(k)) > 1e-12 {
							t.Fatalf("choice %d atom %d: %v neighbours of %v kept", c, i, k, el)
						}
					}
				}
			}
			// The first and last choices keep the fewest and the most
			// neighbours of the lightest element at every atom.
			if tc.choices > 0 {
				for i := range tc.groups {
					light := slices.Min(tc.groups[i])
					first, last := kept(g, g.alts[0], i, light), kept(g, g.alts[len(g.alts)-1], i, light)
					slots := float64(MaxNeighbors - tc.full[i])
					n := 0.0
					for _, e := range tc.groups[i] {
						if e == light {
							n++
						}
					}
					if first != max(0, slots-float64(len(tc.groups[i]))+n) || last != min(n, slots) {
						t.Errorf("atom %d keeps %v to %v of its %v neighbours of %v", i, first, last, n, light)
					}
				}
			}
			// Every choice is different.
			for a := range g.alts {
				for b := range a {
					if slices.Equal(g.alts[a], g.alts[b]) {
						t.Fatalf("choices %d and %d are the same", a, b)
					}
				}
			}
		})
	}
}

// edgeKey is a shell of neighbours as the crystal sees it: their element
// and distance, rounded far below any real difference, and their total
// weight.
type edgeKey struct {
	el   crystal.Element
	d, w float64
}

// atomEdges returns atom i's neighbour shells, sorted, for comparison
// across featurisations of the same crystal (which may merge images into
// edges differently).
func atomEdges(g *Graph, s *crystal.Structure, i int) []edgeKey {
	idx, dist := g.Neighbors(i)
	w := g.Weights(i)
	var out []edgeKey
	for k := range idx {
		key := edgeKey{s.Species[idx[k]], math.Round(dist[k]*1e9) / 1e9, 0}
		j := slices.IndexFunc(out, func(e edgeKey) bool { return e.el == key.el && e.d == key.d })
		if j < 0 {
			out = append(out, key)
			j = len(out) - 1
		}
		out[j].w += w[k]
	}
	for j := range out {
		out[j].w = math.Round(out[j].w*1e9) / 1e9
	}
	slices.SortFunc(out, func(a, b edgeKey) int {
		if a.el != b.el {
			return int(a.el) - int(b.el)
		}
		if a.d != b.d {
			return cmpFloat(a.d, b.d)
		}
		return cmpFloat(a.w, b.w)
	})
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestFeaturizeInvariant checks that the graph of a crystal with ties
// at the cut (a perovskite arrangement of H and O: each X site has 2 B
// neighbours, then 4 A and 8 X tied for 10 slots) is the same however the
// crystal is written down: every atom has the same edges (element,
// distance, weight) after a rotation, a change of origin and a
// permutation of the sites, and the graph the same tie choices.
func TestFeaturizeInvariant(t *testing.T) {
	h, o := crystal.MustElement("H"), crystal.MustElement("O")
	base := cubic(t, 3.9, []crystal.Element{h, o, o, o, o},
		[]crystal.Vec3{{0.5, 0.5, 0.5}, {0, 0, 0}, {0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}})
	f := NewFeaturizer(smallTable(t))
	var g0 Graph
	if err := f.Featurize(base, &g0); err != nil {
		t.Fatal(err)
	}
	if g0.TiedAtoms() != 4 || g0.TieChoices() != 3 {
		t.Fatalf("%d tied atoms, %d tie choices; want 4 and 3", g0.TiedAtoms(), g0.TieChoices())
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for it := range 20 {
		// Rotate the cell, shuffle the sites and move the origin.
		rot := crystaltest.Rotated(t, base, crystaltest.RandomRotation(rng))
		perm := rng.Perm(base.NumSites())
		shift := crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()}
		moved := crystaltest.Translated(crystaltest.Permuted(rot, perm), shift, false)
		var g Graph
		if err := f.Featurize(moved, &g); err != nil {
			t.Fatal(err)
		}
		if g.TiedAtoms() != g0.TiedAtoms() || g.TieChoices() != g0.TieChoices() {
			t.Fatalf("case %d: %d tied atoms, %d choices; want %d, %d", it, g.TiedAtoms(), g.TieChoices(), g0.TiedAtoms(), g0.TieChoices())
		}
		for i, p := range perm {
			if got, want := atomEdges(&g, moved, i), atomEdges(&g0, base, p); !slices.Equal(got, want) {
				t.Fatalf("case %d, atom %d (originally %d): edges %v, want %v", it, i, p, got, want)
			}
		}
	}
}

// kept is the number of neighbours of element e atom i keeps under
// weights w.
func kept(g *Graph, w []float64, i int, e crystal.Element) float64 {
	n := 0.0
	for p := g.split[i]; p < g.start[i+1]; p++ {
		if g.nbrEl[p] == e {
			n += w[p]
		}
	}
	return math.Round(n*1e9) / 1e9
}

// TestFeaturizeRadiusTolerance: neighbours at exactly Radius in exact
// arithmetic are inside whatever the rounding. In a simple cubic cell of
// edge Radius the atom's only neighbours are its six images at Radius; in
// rotated cells some of those distances round above it.
func TestFeaturizeRadiusTolerance(t *testing.T) {
	o := crystal.MustElement("O")
	base := cubic(t, Radius, []crystal.Element{o}, []crystal.Vec3{{0, 0, 0}})
	f := NewFeaturizer(smallTable(t))
	rng := rand.New(rand.NewPCG(9, 10))
	above := 0
	for it := range 200 {
		// A rotation about a random axis (Rodrigues).
		ax := crystal.Vec3{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		ax = ax.Scale(1 / ax.Norm())
		psi := 2 * math.Pi * rng.Float64()
		c, s := math.Cos(psi), math.Sin(psi)
		m := base.Lattice.Matrix()
		var rm [3][3]float64
		for i, v := range m {
			vec := crystal.Vec3(v)
			r := vec.Scale(c).Add(ax.Cross(vec).Scale(s)).Add(ax.Scale(ax.Dot(vec) * (1 - c)))
			rm[i] = r
		}
		lat, err := crystal.NewLattice(rm)
		if err != nil {
			t.Fatal(err)
		}
		moved, err := crystal.NewStructure(lat, base.Species, base.Frac)
		if err != nil {
			t.Fatal(err)
		}
		var g Graph
		if err := f.Featurize(moved, &g); err != nil {
			t.Fatalf("rotation %d: %v", it, err)
		}
		_, d := g.Neighbors(0)
		w := g.Weights(0)
		real := 0.0
		for k := range d {
			if d[k] < padDistance {
				real += w[k]
				if d[k] > Radius {
					above++
				}
			}
		}
		if real != 6 || g.Padded() != 6 {
			t.Fatalf("rotation %d: %v neighbours within the radius, %d padded slots; want 6 and 6", it, real, g.Padded())
		}
	}
	if above == 0 {
		t.Error("no rotation put a neighbour beyond Radius: the test does not exercise the tolerance")
	}
}
