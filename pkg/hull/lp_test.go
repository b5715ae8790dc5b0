package hull

import (
	"math"
	"testing"
)

// TestBland solves the hull programme at every composition of random
// diagrams twice, with Dantzig's rule (switching to Bland's after degenerate
// pivots) and with Bland's rule throughout: the optimum is unique, so both
// must agree, also on the degenerate grid energies.
func TestBland(t *testing.T) {
	randomSystems(t, 150, func(t *testing.T, entries []Entry) {
		d, err := New(entries)
		if err != nil {
			t.Fatal(err)
		}
		var dantzig, bland work
		bland.s.blandOnly = true
		dim := d.pts.dim
		for _, j := range d.reps {
			mask := d.pts.mask[j]
			x := d.pts.x[j*dim : (j+1)*dim]
			dantzig.setTarget(d, x, mask)
			bland.setTarget(d, x, mask)
			h1, err := d.solve(&dantzig, mask, j)
			if err != nil {
				t.Fatal(err)
			}
			h2, err := d.solve(&bland, mask, j)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(h1-h2) > propTol {
				t.Errorf("%s: Dantzig %.15g, Bland %.15g", d.entries[j].Composition, h1, h2)
			}
		}
	})
}
