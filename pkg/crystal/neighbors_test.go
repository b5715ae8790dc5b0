package crystal

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// bruteNeighbors lists every image within cutoff by looping over enough
// lattice translations: the slow, obviously correct reference.
func bruteNeighbors(s *Structure, cutoff float64) [][]Neighbor {
	sp := s.Lattice.PlaneSpacings()
	var n [3]int
	for a := 0; a < 3; a++ {
		n[a] = int(math.Ceil(cutoff/sp[a])) + 4 // stored coordinates lie in [-1, 2)
	}
	out := make([][]Neighbor, s.NumSites())
	for i := range s.Species {
		ci := s.Cartesian(i)
		for j := range s.Species {
			for x := -n[0]; x <= n[0]; x++ {
				for y := -n[1]; y <= n[1]; y++ {
					for z := -n[2]; z <= n[2]; z++ {
						if i == j && x == 0 && y == 0 && z == 0 {
							continue
						}
						p := s.Lattice.Cartesian(s.Frac[j].Add(Vec3{float64(x), float64(y), float64(z)}))
						if d := p.Sub(ci).Norm(); d <= cutoff {
							out[i] = append(out[i], Neighbor{Index: j, Distance: d, Image: [3]int{x, y, z}})
						}
					}
				}
			}
		}
		slices.SortFunc(out[i], compareNeighbors)
	}
	return out
}

func randomStructure(t *testing.T, rng *rand.Rand, natoms int, a, b, c, alpha, beta, gamma float64) *Structure {
	t.Helper()
	l, err := LatticeFromParameters(a, b, c, alpha, beta, gamma)
	if err != nil {
		t.Fatal(err)
	}
	species := make([]Element, natoms)
	frac := make([]Vec3, natoms)
	for i := range species {
		species[i] = Element(1 + rng.IntN(MaxZ))
		// Deliberately outside [0, 1) sometimes: images are relative to the
		// stored coordinates.
		frac[i] = Vec3{rng.Float64()*3 - 1, rng.Float64(), rng.Float64()*1.5 - 0.25}
	}
	s, err := NewStructure(l, species, frac)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNeighborsMatchBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name                      string
		natoms                    int
		a, b, c, alpha, beta, gam float64
		cutoff                    float64
	}{
		{"one atom, cutoff ≫ cell", 1, 2.5, 2.5, 2.5, 90, 90, 90, 8},
		{"small triclinic", 2, 3.1, 4.2, 3.7, 70, 100, 115, 8},
		{"very skewed", 3, 3, 3, 9, 30, 35, 40, 6.1},
		{"thin slab", 4, 20, 3, 3.5, 90, 95, 120, 7.3},
		{"medium cubic", 40, 9, 9, 9, 90, 90, 90, 6},
		{"medium monoclinic", 60, 10, 11, 9.5, 90, 104, 90, 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := randomStructure(t, rng, tc.natoms, tc.a, tc.b, tc.c, tc.alpha, tc.beta, tc.gam)
			want := bruteNeighbors(s, tc.cutoff)
			all, err := s.Neighbors(tc.cutoff)
			if err != nil {
				t.Fatal(err)
			}
			near, err := s.NearestNeighbors(12, tc.cutoff)
			if err != nil {
				t.Fatal(err)
			}
			for i := range s.Species {
				got := slices.Clone(all.Of(i))
				if len(got) != len(want[i]) {
					t.Fatalf("site %d: %d neighbours, brute force %d", i, len(got), len(want[i]))
				}
				// Equal distances may differ in the last bit between the two
				// methods, so compare as sets keyed by (index, image).
				byKey := func(a, b Neighbor) int {
					return compareNeighbors(Neighbor{Index: a.Index, Image: a.Image}, Neighbor{Index: b.Index, Image: b.Image})
				}
				slices.SortFunc(got, byKey)
				slices.SortFunc(want[i], byKey)
				for k := range got {
					if got[k].Index != want[i][k].Index || got[k].Image != want[i][k].Image ||
						math.Abs(got[k].Distance-want[i][k].Distance) > 1e-9 {
						t.Fatalf("site %d neighbour %d: got %+v, want %+v", i, k, got[k], want[i][k])
					}
				}
				slices.SortFunc(want[i], compareNeighbors)
				n := near.Of(i)
				if len(n) != min(12, len(want[i])) {
					t.Fatalf("site %d: %d nearest, want %d", i, len(n), min(12, len(want[i])))
				}
				for k := range n {
					if math.Abs(n[k].Distance-want[i][k].Distance) > 1e-9 {
						t.Fatalf("site %d nearest %d: %v, want %v", i, k, n[k].Distance, want[i][k].Distance)
					}
					// The image reproduces the distance from the stored coordinates.
					p := s.Lattice.Cartesian(s.Frac[n[k].Index].Add(Vec3{float64(n[k].Image[0]), float64(n[k].Image[1]), float64(n[k].Image[2])}))
					if d := p.Sub(s.Cartesian(i)).Norm(); math.Abs(d-n[k].Distance) > 1e-9 {
						t.Fatalf("site %d nearest %d: image %v gives %v Å, list says %v", i, k, n[k].Image, d, n[k].Distance)
					}
				}
			}
		})
	}
}

func TestNeighborsRockSalt(t *testing.T) {
	l, err := LatticeFromParameters(5.64, 5.64, 5.64, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	na, cl := MustElement("Na"), MustElement("Cl")
	s, err := NewStructure(l, []Element{na, na, na, na, cl, cl, cl, cl}, []Vec3{
		{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0},
		{.5, .5, .5}, {.5, 0, 0}, {0, .5, 0}, {0, 0, .5},
	})
	if err != nil {
		t.Fatal(err)
	}
	nl, err := s.NearestNeighbors(6, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Species {
		for _, n := range nl.Of(i) {
			if math.Abs(n.Distance-2.82) > 1e-12 {
				t.Errorf("site %d: nearest neighbour at %v Å, want 2.82", i, n.Distance)
			}
			if s.Species[n.Index] == s.Species[i] {
				t.Errorf("site %d: nearest neighbour of the same species", i)
			}
		}
	}
}

// TestNeighborsMargin checks that a k-nearest search with a margin keeps
// exactly the neighbours within the margin of the k-th distance: the whole
// shell the k-th belongs to in high-symmetry cells, the brute force's list
// up to that distance in random ones.
func TestNeighborsMargin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sc, err := LatticeFromParameters(3, 3, 3, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	cubic, err := NewStructure(sc, []Element{MustElement("Po")}, []Vec3{{0.1, 0.2, 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		s      *Structure
		k      int
		margin float64
		cutoff float64
	}{
		// Simple cubic: 6 at a, 12 at a√2, 8 at a√3.
		{"simple cubic, cut in the second shell", cubic, 8, 1e-6, 8},
		{"simple cubic, cut at a shell's end", cubic, 18, 1e-6, 8},
		{"simple cubic, margin reaching the next shell", cubic, 18, 1.2, 8},
		{"simple cubic, cutoff inside the margin", cubic, 8, 1e-6, 4.242640687},
		{"random triclinic", randomStructure(t, rng, 5, 3.1, 4.2, 3.7, 70, 100, 115), 12, 0.05, 8},
		{"random, no margin", randomStructure(t, rng, 7, 5, 6, 7, 80, 95, 100), 12, 0, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := bruteNeighbors(tc.s, tc.cutoff)
			f := NeighborFinder{Margin: tc.margin}
			var nl NeighborList
			if err := f.Find(tc.s, tc.cutoff, tc.k, &nl); err != nil {
				t.Fatal(err)
			}
			for i := range tc.s.Species {
				w := want[i]
				n := len(w)
				if n > tc.k {
					n = tc.k
					for n < len(w) && w[n].Distance <= w[tc.k-1].Distance+tc.margin {
						n++
					}
				}
				got := nl.Of(i)
				if len(got) != n {
					t.Fatalf("site %d: %d neighbours, want %d (k = %d, margin %g Å)", i, len(got), n, tc.k, tc.margin)
				}
				for j := range got {
					if math.Abs(got[j].Distance-w[j].Distance) > 1e-9 || (j > 0 && compareNeighbors(got[j-1], got[j]) > 0) {
						t.Fatalf("site %d neighbour %d: %+v, brute force %+v (or out of order)", i, j, got[j], w[j])
					}
				}
			}
		})
	}
	for _, m := range []float64{-1e-6, math.NaN(), math.Inf(1)} {
		f := NeighborFinder{Margin: m}
		var nl NeighborList
		if err := f.Find(cubic, 8, 12, &nl); !errors.Is(err, ErrBadCutoff) {
			t.Errorf("margin %v: error %v, want ErrBadCutoff", m, err)
		}
	}
}

func TestNeighborsBadInput(t *testing.T) {
	l, _ := LatticeFromParameters(3, 3, 3, 90, 90, 90)
	s, _ := NewStructure(l, []Element{MustElement("Fe")}, []Vec3{{0, 0, 0}})
	for _, cutoff := range []float64{0, -1, math.NaN(), math.Inf(1), 1e6} {
		if _, err := s.Neighbors(cutoff); err == nil {
			t.Errorf("cutoff %v: no error", cutoff)
		}
	}
	if _, err := s.NearestNeighbors(0, 5); err == nil {
		t.Error("k = 0: no error")
	}
}

func TestMinEigenSymmetric3(t *testing.T) {
	cases := []struct {
		m    [3][3]float64
		want float64
	}{
		{[3][3]float64{{1, 0, 0}, {0, 2, 0}, {0, 0, 3}}, 1},
		{[3][3]float64{{2, 1, 0}, {1, 2, 0}, {0, 0, 5}}, 1},
		{[3][3]float64{{1, .5, .5}, {.5, 1, .5}, {.5, .5, 1}}, .5},
	}
	for _, tc := range cases {
		if got := minEigenSymmetric3(tc.m); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%v: %v, want %v", tc.m, got, tc.want)
		}
	}
}

func BenchmarkNearestNeighbors(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{8, 100, 200} {
		// Typical inorganic density, ~12 Å³ per atom.
		a := math.Cbrt(12 * float64(n))
		l, _ := LatticeFromParameters(a, a*1.05, a*0.95, 85, 95, 100)
		species := make([]Element, n)
		frac := make([]Vec3, n)
		for i := range species {
			species[i] = Element(1 + rng.IntN(MaxZ))
			frac[i] = Vec3{rng.Float64(), rng.Float64(), rng.Float64()}
		}
		s, _ := NewStructure(l, species, frac)
		var f NeighborFinder
		var nl NeighborList
		b.Run("k12/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.Find(s, 8, 12, &nl); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("all8/"+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.Find(s, 8, 0, &nl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
