package spacegroup

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkDetect times Detect (symprec 0.01 Å) on crystals built from
// general-position orbits: P2_1/c with 1 to 25 atoms per asymmetric unit
// (4 to 100 atoms), Pnma (32 atoms), P6_3/mmc (48), and Fd-3m (192 atoms in
// the conventional cell).
func BenchmarkDetect(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ number, types int }{{14, 1}, {14, 4}, {14, 25}, {62, 4}, {194, 2}, {227, 1}} {
		s, _ := ByNumber(c.number)
		pos, types := expand(s, rng, c.types)
		lat := latticeFor(s)
		frac := make([][3]float64, len(pos))
		for i := range pos {
			frac[i] = pos[i]
		}
		b.Run(fmt.Sprintf("%s/%d_atoms", s.Short, len(pos)), func(b *testing.B) {
			for b.Loop() {
				ds, err := Detect(lat, frac, types, Options{})
				if err != nil || ds.Number != c.number {
					b.Fatalf("%v, %v", ds, err)
				}
			}
		})
	}
}
