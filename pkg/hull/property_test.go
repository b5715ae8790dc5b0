package hull

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// propTol is the agreement asked of energies and fractions computed two
// ways.
const propTol = 1e-9

// energyModels shape the synthetic energies: independent random energies
// (most entries far above the hull), energies on a grid of 0.25 eV/atom
// (exact ties, entries on facets, coplanar vertices), and energies on a
// convex surface (every composition a vertex) with a random spread above it.
var energyModels = []struct {
	name  string
	apply func(rng *rand.Rand, e *Entry)
}{
	{"uniform", func(*rand.Rand, *Entry) {}},
	{"grid", func(rng *rand.Rand, e *Entry) {
		e.EnergyPerAtom = -0.25 * float64(rng.IntN(9))
		if e.Composition.Len() == 1 {
			e.EnergyPerAtom = 0
		}
	}},
	{"convex", func(rng *rand.Rand, e *Entry) {
		s := -1.0
		for _, el := range e.Composition.Elements() {
			f := e.Composition.AtomicFraction(el)
			s += f * f
		}
		if rng.IntN(2) == 0 {
			s += 0.3 * rng.Float64()
		}
		e.EnergyPerAtom = s
	}},
}

// randomSystems yields small synthetic diagrams of 2 to 5 elements under
// every energy model.
func randomSystems(t *testing.T, n int, f func(t *testing.T, entries []Entry)) {
	for _, m := range energyModels {
		for dim := 2; dim <= 5; dim++ {
			for seed := uint64(1); seed <= 3; seed++ {
				t.Run(fmt.Sprintf("%s/elements=%d/seed=%d", m.name, dim, seed), func(t *testing.T) {
					entries := synthetic(t, dim, n, 4, seed)
					rng := rand.New(rand.NewPCG(seed, 7))
					for i := range entries {
						m.apply(rng, &entries[i])
					}
					f(t, entries)
				})
			}
		}
	}
}

// fractions returns the atomic fractions of c over the diagram's elements.
func fractions(d *Diagram, c crystal.Composition) []float64 {
	x := make([]float64, len(d.elems))
	for _, el := range c.Elements() {
		x[d.index[el]] = c.AtomicFraction(el)
	}
	return x
}

// checkDecomposition asserts that a result is a mixture of stable entries
// with the composition c: positive fractions summing to 1, the right amount
// of every element, and the hull energy as its energy.
func checkDecomposition(t *testing.T, d *Diagram, c crystal.Composition, r Result) {
	t.Helper()
	x := fractions(d, c)
	sum, energy := 0.0, 0.0
	got := make([]float64, len(x))
	for _, p := range r.Decomposition {
		if p.Fraction <= 0 {
			t.Errorf("%s: phase %s with fraction %v", c, p.ID, p.Fraction)
		}
		if ok, err := d.IsStable(p.ID); err != nil || !ok {
			t.Errorf("%s: phase %s is not stable (%v)", c, p.ID, err)
		}
		sum += p.Fraction
		energy += p.Fraction * p.EnergyPerAtom
		for k, v := range fractions(d, p.Composition) {
			got[k] += p.Fraction * v
		}
	}
	if math.Abs(sum-1) > propTol {
		t.Errorf("%s: fractions sum to %v", c, sum)
	}
	if math.Abs(energy-r.HullEnergy) > propTol {
		t.Errorf("%s: decomposition energy %v, hull energy %v", c, energy, r.HullEnergy)
	}
	for k := range x {
		if math.Abs(got[k]-x[k]) > propTol {
			t.Errorf("%s: decomposition has %v of %s, want %v", c, got[k], d.elems[k].Symbol(), x[k])
		}
	}
}

// oracleHull solves the hull programme at x with gonum's simplex over every
// entry of the diagram within x's subsystem except skip (a composition
// group, or −1): an independent implementation over all entries rather than
// the stable ones.
func oracleHull(t *testing.T, d *Diagram, x []float64, skip int) float64 {
	t.Helper()
	var rows []int
	var mask uint64
	for k, v := range x {
		if v > 0 {
			rows = append(rows, k)
			mask |= 1 << k
		}
	}
	var cols []int
	for j := range d.entries {
		if d.pts.mask[j]&^mask == 0 && d.group[j] != skip {
			cols = append(cols, j)
		}
	}
	a := mat.NewDense(len(rows), len(cols), nil)
	c := make([]float64, len(cols))
	b := make([]float64, len(rows))
	var basic []int
	// gonum's simplex can cycle at a degenerate vertex (x equal to an
	// entry's composition has a basis with zero variables); moving x by
	// 1e-12 per element into the interior of its face removes the
	// degeneracy and changes the hull energy by far less than propTol.
	for i, k := range rows {
		b[i] = x[k] + 1e-12*float64(1+i%3)
	}
	for jj, j := range cols {
		c[jj] = d.pts.e[j]
		for i, k := range rows {
			a.Set(i, jj, d.pts.coord(j, k))
		}
	}
	for _, k := range rows {
		for jj, j := range cols {
			if j == d.refs[k] {
				basic = append(basic, jj)
			}
		}
	}
	if len(basic) != len(rows) {
		t.Fatalf("oracle: references missing from the columns")
	}
	f, _, err := lp.Simplex(c, a, b, 1e-13, basic)
	if err != nil {
		t.Fatalf("gonum simplex: %v", err)
	}
	return f
}

// TestAgainstGonum compares hull energies, energies above the hull and the
// stable set with gonum's simplex method run over all entries.
func TestAgainstGonum(t *testing.T) {
	randomSystems(t, 80, func(t *testing.T, entries []Entry) {
		d, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		results, err := d.Results()
		if err != nil {
			t.Fatal(err)
		}
		for j, r := range results {
			x := d.pts.x[j*d.pts.dim : (j+1)*d.pts.dim]
			if h := oracleHull(t, d, x, -1); math.Abs(h-r.HullEnergy) > propTol {
				t.Errorf("%s (%s): hull %.15g, gonum %.15g", r.ID, r.Composition, r.HullEnergy, h)
			}
			checkDecomposition(t, d, r.Composition, r.Result)
			// Stable: the lowest of its composition and below the hull of
			// every other composition.
			if j != d.reps[d.group[j]] || bits.OnesCount64(d.pts.mask[j]) == 1 {
				continue
			}
			want := r.EnergyPerAtom < oracleHull(t, d, x, d.group[j])-stableTol
			if r.Stable != want {
				t.Errorf("%s (%s): stable %v, gonum says %v", r.ID, r.Composition, r.Stable, want)
			}
		}
		rng := rand.New(rand.NewPCG(11, 12))
		for _, q := range synthetic(t, len(d.elems), 30, 4, 99) {
			e := -3 * rng.Float64()
			r, err := d.Query(q.Composition, e)
			if err != nil {
				t.Fatal(err)
			}
			h := oracleHull(t, d, fractions(d, q.Composition), -1)
			if math.Abs(h-r.HullEnergy) > propTol || math.Abs(r.EAboveHull-(e-h)) > propTol {
				t.Errorf("query %s: hull %.15g, e_above_hull %.15g; gonum %.15g", q.Composition, r.HullEnergy, r.EAboveHull, h)
			}
			checkDecomposition(t, d, q.Composition, r)
		}
	})
}

// TestEAboveHullNonNegative: no entry of a diagram is below the hull built
// from them; the stable ones are on it.
func TestEAboveHullNonNegative(t *testing.T) {
	randomSystems(t, 300, func(t *testing.T, entries []Entry) {
		d, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		results, err := d.Results()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.EAboveHull < 0 || (r.Stable && r.EAboveHull != 0) {
				t.Errorf("%s (%s): e_above_hull %v, stable %v", r.ID, r.Composition, r.EAboveHull, r.Stable)
			}
		}
	})
}

// TestAddMonotone adds entries one at a time: the hull only goes down, so no
// energy above the hull ever decreases, no hull energy ever rises, and the
// end result is the diagram built from all the entries at once.
func TestAddMonotone(t *testing.T) {
	randomSystems(t, 120, func(t *testing.T, entries []Entry) {
		half := len(entries) / 4
		d, err := New(entries[:half], WithElements(elementsOf(entries)...))
		if err != nil {
			t.Fatal(err)
		}
		probes := synthetic(t, len(d.elems), 20, 4, 1234)
		prevE := map[string]float64{}
		prevH := make([]float64, len(probes))
		record := func() {
			results, err := d.Results()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if old, ok := prevE[r.ID]; ok && r.EAboveHull < old-propTol {
					t.Fatalf("%s: e_above_hull fell from %v to %v", r.ID, old, r.EAboveHull)
				}
				prevE[r.ID] = r.EAboveHull
			}
			for i, p := range probes {
				r, err := d.Query(p.Composition, 0)
				if err != nil {
					t.Fatal(err)
				}
				if i < len(prevH) && prevH[i] != 0 && r.HullEnergy > prevH[i]+propTol {
					t.Fatalf("%s: hull energy rose from %v to %v", p.Composition, prevH[i], r.HullEnergy)
				}
				prevH[i] = r.HullEnergy
			}
		}
		record()
		for _, e := range entries[half:] {
			if err := d.Add(e); err != nil {
				t.Fatal(err)
			}
			record()
		}
		sameDiagram(t, d, d.Entries())
	})
}

func elementsOf(entries []Entry) []crystal.Element {
	var out []crystal.Element
	seen := map[crystal.Element]bool{}
	for _, e := range entries {
		for _, el := range e.Composition.Elements() {
			if !seen[el] {
				seen[el] = true
				out = append(out, el)
			}
		}
	}
	return out
}

// sameDiagram asserts that d (built incrementally) equals New(entries), with
// entries in the order d received them: the same stable ids (ties go to the
// first given either way) and the same energies above the hull.
func sameDiagram(t *testing.T, d *Diagram, entries []Entry) {
	t.Helper()
	full, err := New(entries, WithElements(d.Elements()...))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range full.Stable() {
		want[e.ID] = true
	}
	got := d.Stable()
	if len(got) != len(want) {
		t.Errorf("incremental: %d stable, built at once: %d", len(got), len(want))
	}
	for _, e := range got {
		if !want[e.ID] {
			t.Errorf("incremental: %s stable, not when built at once", e.ID)
		}
	}
	fr, err := full.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fr {
		e, err := d.EAboveHull(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(e-r.EAboveHull) > propTol {
			t.Errorf("%s: incremental e_above_hull %v, built at once %v", r.ID, e, r.EAboveHull)
		}
	}
}

// TestConvexCombinations: a convex combination of the phases of any
// decomposition lies on the hull (distance 0); a convex combination of any
// stable phases is never below it.
func TestConvexCombinations(t *testing.T) {
	randomSystems(t, 200, func(t *testing.T, entries []Entry) {
		d, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		stable := d.Stable()
		rng := rand.New(rand.NewPCG(5, 6))
		for trial, p := range synthetic(t, len(d.elems), 40, 4, 77) {
			r, err := d.Query(p.Composition, 0)
			if err != nil {
				t.Fatal(err)
			}
			phases := make([]Entry, len(r.Decomposition))
			for i, ph := range r.Decomposition {
				phases[i] = ph.Entry
			}
			c, e := mixture(t, rng, phases)
			if r, err := d.Query(c, e); err != nil || math.Abs(r.EAboveHull) > propTol {
				t.Errorf("mixture of %s's decomposition %s at %v: e_above_hull %v (%v)", p.Composition, c, e, r.EAboveHull, err)
			}
			some := make([]Entry, 1+rng.IntN(min(4, len(stable))))
			for i := range some {
				some[i] = stable[rng.IntN(len(stable))]
			}
			c, e = mixture(t, rng, some)
			if r, err := d.Query(c, e); err != nil || r.EAboveHull < -propTol {
				t.Errorf("trial %d: mixture of stable phases %s at %v: e_above_hull %v (%v)", trial, c, e, r.EAboveHull, err)
			}
		}
	})
}

// mixture returns a random convex combination of phases by atoms: its
// composition (one atom in total) and energy per atom.
func mixture(t *testing.T, rng *rand.Rand, phases []Entry) (crystal.Composition, float64) {
	t.Helper()
	w := make([]float64, len(phases))
	sum := 0.0
	for i := range w {
		w[i] = 0.05 + rng.Float64()
		sum += w[i]
	}
	amounts := map[crystal.Element]float64{}
	e := 0.0
	for i, p := range phases {
		f := w[i] / sum
		e += f * p.EnergyPerAtom
		for _, el := range p.Composition.Elements() {
			amounts[el] += f * p.Composition.AtomicFraction(el)
		}
	}
	items := make([]crystal.ElementAmount, 0, len(amounts))
	for el, a := range amounts {
		items = append(items, crystal.ElementAmount{Element: el, Amount: a})
	}
	c, err := crystal.NewComposition(items...)
	if err != nil {
		t.Fatal(err)
	}
	return c, e
}

// TestAgainstGonumEightElements checks every fifth entry of 8-element
// synthetic diagrams — compositions of up to 4 and up to 8 elements, and
// energies on a convex surface where every composition is a vertex —
// against gonum's simplex over all entries.
func TestAgainstGonumEightElements(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxParts int
		convex   bool
	}{{"up to 4 elements", 4, false}, {"up to 8 elements", 8, false}, {"convex", 4, true}} {
		t.Run(tc.name, func(t *testing.T) {
			entries := synthetic(t, 8, 2000, tc.maxParts, 5)
			if tc.convex {
				rng := rand.New(rand.NewPCG(1, 2))
				for i := range entries {
					energyModels[2].apply(rng, &entries[i])
				}
			}
			d, err := New(entries)
			if err != nil {
				t.Fatal(err)
			}
			results, err := d.Results()
			if err != nil {
				t.Fatal(err)
			}
			stable := 0
			for j := 0; j < len(results); j += 5 {
				r := results[j]
				x := d.pts.x[j*d.pts.dim : (j+1)*d.pts.dim]
				if h := oracleHull(t, d, x, -1); math.Abs(h-r.HullEnergy) > propTol {
					t.Errorf("%s (%s): hull %.15g, gonum %.15g", r.ID, r.Composition, r.HullEnergy, h)
				}
				if j != d.reps[d.group[j]] || bits.OnesCount64(d.pts.mask[j]) == 1 {
					continue
				}
				want := r.EnergyPerAtom < oracleHull(t, d, x, d.group[j])-stableTol
				if r.Stable != want {
					t.Errorf("%s (%s): stable %v, gonum says %v", r.ID, r.Composition, r.Stable, want)
				}
				if want {
					stable++
				}
			}
			if stable == 0 {
				t.Error("no stable entry among those checked: the test checks nothing")
			}
		})
	}
}
