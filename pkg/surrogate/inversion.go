package surrogate

import (
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// InversionTolerance is the default distance (Å) within which an inverted
// site must fall on a site of its element for Centrosymmetric. On the
// Materials Project structures of the dielectric and piezoelectric sets,
// whose space groups MP assigned with spglib, 0.05 Å calls none of the
// 1,200 acentric structures centrosymmetric and misses one of the 797
// centrosymmetric ones; 0.1 Å misses none but calls one acentric
// structure centrosymmetric, and 0.2 Å calls 28 of the 941 piezoelectric
// ones so. Wrongly calling a structure centrosymmetric is the costlier
// error here (its piezoelectric response would be set to zero).
const InversionTolerance = 0.05

// Centrosymmetric reports whether the structure has an inversion centre:
// some point c such that every site r, inverted to 2c − r, lands within
// tol Å of a site of the same element, modulo the lattice. A crystal with
// an inversion centre has no piezoelectric effect, every component of an
// odd-rank polar tensor vanishing by symmetry (Nye, Physical Properties of
// Crystals (1957), ch. VII).
//
// If c is a centre, the site r₀ of the rarest element maps to a site rⱼ
// of that element, so 2c ≡ r₀ + rⱼ: the candidates are these (the centres
// c + t/2 for lattice vectors t give the same 2c modulo the lattice and
// need no separate test). Each candidate costs O(n²) distance checks.
func Centrosymmetric(s *crystal.Structure, tol float64) bool {
	n := s.NumSites()
	count := map[crystal.Element]int{}
	for _, e := range s.Species {
		count[e]++
	}
	anchor := 0
	for i, e := range s.Species {
		if count[e] < count[s.Species[anchor]] {
			anchor = i
		}
	}
	r0 := s.Frac[anchor]
	for j := 0; j < n; j++ {
		if s.Species[j] != s.Species[anchor] {
			continue
		}
		twoC := r0.Add(s.Frac[j])
		ok := true
		for i := 0; i < n && ok; i++ {
			img := twoC.Sub(s.Frac[i])
			ok = false
			for k := 0; k < n; k++ {
				if s.Species[k] == s.Species[i] && periodicDistance(s.Lattice, img.Sub(s.Frac[k])) <= tol {
					ok = true
					break
				}
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// periodicDistance is the length of the fractional difference d reduced
// to [−½, ½) in each coordinate, in Å: the minimum-image distance for the
// small differences the symmetry test compares with its tolerance.
func periodicDistance(l crystal.Lattice, d crystal.Vec3) float64 {
	for k := range d {
		d[k] -= math.Round(d[k])
	}
	return l.Cartesian(d).Norm()
}
