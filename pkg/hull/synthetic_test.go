package hull

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// syntheticElements are the elements of the synthetic systems, in order: a
// system of n elements uses the first n.
var syntheticElements = []string{"Li", "O", "Fe", "Mn", "P", "Ni", "Co", "Ti", "Zr", "Sr"}

// synthetic returns n random entries in a system of the first dim
// syntheticElements, seeded: each entry has 1 to maxParts elements (at most
// dim) with integer amounts 1–8 and a random negative formation energy
// uniform in (−3, 0) eV/atom, like a materials database in which most
// entries are binaries to quaternaries. The elemental references are not
// included (New adds them).
func synthetic(tb testing.TB, dim, n, maxParts int, seed uint64) []Entry {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	els := make([]crystal.Element, dim)
	for i := range els {
		els[i] = crystal.MustElement(syntheticElements[i])
	}
	if maxParts > dim {
		maxParts = dim
	}
	out := make([]Entry, 0, n)
	for len(out) < n {
		parts := 1 + rng.IntN(maxParts)
		perm := rng.Perm(dim)[:parts]
		items := make([]crystal.ElementAmount, parts)
		for i, k := range perm {
			items[i] = crystal.ElementAmount{Element: els[k], Amount: float64(1 + rng.IntN(8))}
		}
		c, err := crystal.NewComposition(items...)
		if err != nil {
			tb.Fatal(err)
		}
		e := -3 * rng.Float64()
		if parts == 1 {
			e = 0.2 * rng.Float64() // elemental polymorphs above the reference
		}
		out = append(out, Entry{ID: fmt.Sprintf("syn-%d", len(out)), Composition: c, EnergyPerAtom: e})
	}
	return out
}
