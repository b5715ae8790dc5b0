package hull

import (
	"fmt"
	"math"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// FuzzDiagram builds diagrams from arbitrary bytes — four elements, amounts
// 0–3, energies on a 1/16 eV grid in ±8 eV/atom (many exact ties and
// coplanar points) — and checks that nothing panics, no entry is below the
// hull, stable entries are on it, and adding the entries one by one gives
// the same diagram.
func FuzzDiagram(f *testing.F) {
	f.Add([]byte{1, 1, 0, 0, 200, 0, 1, 1, 0, 180, 2, 1, 0, 1, 170})
	f.Add([]byte{3, 3, 3, 3, 0, 1, 2, 3, 0, 128, 2, 2, 2, 2, 127, 1, 0, 0, 1, 255})
	f.Add([]byte{0, 0, 0, 0, 0})
	els := []crystal.Element{crystal.MustElement("Li"), crystal.MustElement("O"), crystal.MustElement("Fe"), crystal.MustElement("P")}
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []Entry
		for i := 0; i+5 <= len(data) && len(entries) < 60; i += 5 {
			var items []crystal.ElementAmount
			for k, el := range els {
				if a := data[i+k] % 4; a > 0 {
					items = append(items, crystal.ElementAmount{Element: el, Amount: float64(a)})
				}
			}
			if len(items) == 0 {
				continue
			}
			c, err := crystal.NewComposition(items...)
			if err != nil {
				t.Fatal(err)
			}
			e := float64(int8(data[i+4])) / 16
			entries = append(entries, Entry{ID: fmt.Sprint(len(entries)), Composition: c, EnergyPerAtom: e})
		}
		d, err := New(entries, WithElements(els...))
		if err != nil {
			t.Fatal(err)
		}
		results, err := d.Results()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.EAboveHull < 0 || (r.Stable && r.EAboveHull != 0) || math.IsNaN(r.HullEnergy) {
				t.Fatalf("%s (%s, %v): e_above_hull %v, hull %v, stable %v", r.ID, r.Composition, r.EnergyPerAtom, r.EAboveHull, r.HullEnergy, r.Stable)
			}
			checkDecomposition(t, d, r.Composition, r.Result)
		}
		inc, err := New(nil, WithElements(els...))
		if err != nil {
			t.Fatal(err)
		}
		if err := inc.Add(entries...); err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			got, err := inc.Result(r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got.EAboveHull-r.EAboveHull) > propTol {
				t.Fatalf("%s: incremental e_above_hull %v, built at once %v", r.ID, got.EAboveHull, r.EAboveHull)
			}
		}
	})
}
