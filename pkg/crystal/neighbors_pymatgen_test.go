package crystal

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pymatgenTies is testdata/pymatgen_ties.json: structures with equidistant
// 12th and 13th neighbours and the neighbours pymatgen 2022.11.7 lets
// CGCNN keep (see testdata/pymatgen_ties.py).
type pymatgenTies struct {
	Structures []struct {
		Name string     `json:"name"`
		CIF  string     `json:"cif"`
		Kept [][]string `json:"kept"` // per site, "index:i,j,k" sorted
	} `json:"structures"`
}

// keptSets runs a 12-nearest search with the given tie order and returns,
// per site, the kept neighbours in the test file's notation.
func keptSets(t *testing.T, s *Structure, ties TieOrder) [][]string {
	t.Helper()
	f := NeighborFinder{Ties: ties}
	var nl NeighborList
	if err := f.Find(s, 8, 12, &nl); err != nil {
		t.Fatal(err)
	}
	out := make([][]string, nl.NumSites())
	for i := range out {
		for _, nb := range nl.Of(i) {
			out[i] = append(out[i], fmt.Sprintf("%d:%d,%d,%d", nb.Index, nb.Image[0], nb.Image[1], nb.Image[2]))
		}
		slices.Sort(out[i])
	}
	return out
}

// TestTiesAsPymatgen checks that the pymatgen tie order keeps, at every
// site of 60 structures with equidistant 12th and 13th neighbours, exactly
// the neighbours pymatgen lets CGCNN keep, and that the choice is not
// trivial: the index order keeps others at some sites.
func TestTiesAsPymatgen(t *testing.T) {
	var doc pymatgenTies
	if err := json.Unmarshal(readTestdata(t, "pymatgen_ties.json"), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Structures) < 50 {
		t.Fatalf("only %d structures in the test file", len(doc.Structures))
	}
	sites, differByIndex := 0, 0
	for _, st := range doc.Structures {
		s, err := ParseCIF([]byte(st.CIF))
		if err != nil {
			t.Fatalf("%s: %v", st.Name, err)
		}
		if len(st.Kept) != len(s.Species) {
			t.Fatalf("%s: %d sites, file lists %d", st.Name, len(s.Species), len(st.Kept))
		}
		got := keptSets(t, s, TiesAsPymatgen)
		byIndex := keptSets(t, s, TiesByIndex)
		for i, want := range st.Kept {
			sites++
			if !slices.Equal(got[i], want) {
				t.Errorf("%s site %d: kept %v, pymatgen keeps %v", st.Name, i, got[i], want)
			}
			if !slices.Equal(byIndex[i], want) {
				differByIndex++
			}
		}
	}
	if differByIndex == 0 {
		t.Error("the index order keeps pymatgen's neighbours everywhere: the test file does not exercise the tie order")
	}
	t.Logf("%d sites; the index order keeps other neighbours than pymatgen at %d", sites, differByIndex)
}

// TestLatticeFromParametersRightAngles checks a cubic cell to the bit
// against pymatgen's Lattice.from_parameters(4, 4, 4, 90, 90, 90): the
// off-diagonal elements are ±4·cos(fl(π/2)), not zero.
func TestLatticeFromParametersRightAngles(t *testing.T) {
	l, err := LatticeFromParameters(4, 4, 4, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	const e = 2.4492935982947064e-16
	want := [3][3]float64{{4, 0, e}, {-e, 4, e}, {0, 0, 4}}
	if got := l.Matrix(); got != want {
		t.Errorf("matrix %v, pymatgen's %v", got, want)
	}
}

// TestSinCos checks sinCos against math.Sincos over (0, π] (within 2 ulp
// of the larger of the two values, math's own accuracy) and its last-bit
// value at the right angle.
func TestSinCos(t *testing.T) {
	if s, c := sinCos(math.Pi / 2); s != 1 || c != 6.123233995736766e-17 {
		t.Errorf("sinCos(π/2) = %v, %v; want 1, 6.123233995736766e-17", s, c)
	}
	for deg := 0.5; deg <= 180; deg += 0.25 {
		x := deg * math.Pi / 180
		s, c := sinCos(x)
		ws, wc := math.Sincos(x)
		tol := 2 * (math.Nextafter(1, 2) - 1)
		if math.Abs(s-ws) > tol || math.Abs(c-wc) > tol {
			t.Errorf("sinCos(%v°) = %v, %v; math.Sincos %v, %v", deg, s, c, ws, wc)
		}
	}
}

// TestTiesAsPymatgenChangesOnlyTies checks, on cells with many
// equidistant neighbours (atoms on a grid, right and oblique angles), that
// the pymatgen tie order keeps k neighbours per site, in order of distance,
// at the same distances as the index order: only which of equidistant
// neighbours are kept may differ.
func TestTiesAsPymatgenChangesOnlyTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cells := [][6]float64{
		{4, 4, 4, 90, 90, 90}, {3.9, 3.9, 6, 90, 90, 120}, {4, 4.4, 5.2, 90, 105.5, 90},
		{4, 4.4, 4.8, 80, 95, 75.25}, {2.5, 2.5, 2.5, 90, 90, 90},
	}
	for c, p := range cells {
		lat, err := LatticeFromParameters(p[0], p[1], p[2], p[3], p[4], p[5])
		if err != nil {
			t.Fatal(err)
		}
		for trial := range 20 {
			seen := map[Vec3]bool{}
			var species []Element
			var frac []Vec3
			for range 1 + rng.IntN(6) {
				x := Vec3{float64(rng.IntN(4)) / 4, float64(rng.IntN(4)) / 4, float64(rng.IntN(4)) / 4}
				if !seen[x] {
					seen[x] = true
					frac = append(frac, x)
					species = append(species, Element(1+rng.IntN(3)))
				}
			}
			s, err := NewStructure(lat, species, frac)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 6, 12} {
				byIndex, pmg := NeighborFinder{}, NeighborFinder{Ties: TiesAsPymatgen}
				var a, b NeighborList
				if err := byIndex.Find(s, 8, k, &a); err != nil {
					t.Fatal(err)
				}
				if err := pmg.Find(s, 8, k, &b); err != nil {
					t.Fatal(err)
				}
				for i := range s.Species {
					x, y := a.Of(i), b.Of(i)
					if len(x) != len(y) {
						t.Fatalf("cell %d trial %d k %d site %d: %d neighbours, index order %d", c, trial, k, i, len(y), len(x))
					}
					for j := range x {
						if math.Abs(x[j].Distance-y[j].Distance) > 1e-9 || (j > 0 && y[j].Distance < y[j-1].Distance-1e-9) {
							t.Fatalf("cell %d trial %d k %d site %d: distances %v, index order %v", c, trial, k, i, y, x)
						}
					}
				}
			}
		}
	}
}
