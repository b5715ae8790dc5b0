package crystal

import (
	"fmt"
	"math"
	"slices"
)

// Substitute returns a copy of s with every site of element from replaced
// by to and the cell rescaled as SubstituteSites describes. It is an error
// for from to be absent or to not to be an element.
func Substitute(s *Structure, from, to Element) (*Structure, error) {
	if s == nil {
		return nil, fmt.Errorf("substitute: %w: nil structure", ErrBadStructure)
	}
	var sites []int
	for i, e := range s.Species {
		if e == from {
			sites = append(sites, i)
		}
	}
	if len(sites) == 0 {
		return nil, fmt.Errorf("substitute %s→%s: %w: no %s site in %s", from, to, ErrBadStructure, from, s.Composition().ReducedFormula())
	}
	return SubstituteSites(s, sites, to)
}

// SubstituteSites returns a copy of s with the given sites occupied by to,
// fractional coordinates kept and the cell scaled isotropically so that its
// volume follows the sum of atomic volumes, a Vegard-like rule:
//
//	V′ = V · Σᵢ r′ᵢ³ / Σᵢ rᵢ³
//
// over all sites, with rᵢ the radius of the site's element before and r′ᵢ
// after. Substituting a minority element therefore changes the volume in
// proportion to its share (Sr→Ba in SrTiO3: a 3.905 → 4.01 Å, BaTiO3
// 4.00 Å), where rescaling by the cube of the radius ratio alone would
// overshoot (4.37 Å). The radii are Shannon radii at coordination VI when
// the original composition has a neutral assignment of common (else ICSD)
// oxidation states and every element, the incoming ones taking the state
// of the site they replace, has a radius for its state; metallic radii for
// compositions of metals only before and after; Cordero covalent radii
// otherwise (for all sites, before and after alike). The input is not
// modified.
func SubstituteSites(s *Structure, sites []int, to Element) (*Structure, error) {
	if s == nil || len(s.Species) == 0 || len(s.Species) != len(s.Frac) {
		return nil, fmt.Errorf("substitute sites: %w: empty or malformed structure", ErrBadStructure)
	}
	if !to.Valid() {
		return nil, fmt.Errorf("substitute sites: %w: atomic number %d", ErrUnknownElement, int(to))
	}
	out := s.Copy()
	for _, i := range sites {
		if i < 0 || i >= len(out.Species) {
			return nil, fmt.Errorf("substitute sites: %w: site %d outside 0–%d", ErrBadStructure, i, len(out.Species)-1)
		}
		out.Species[i] = to
	}
	if slices.Equal(out.Species, s.Species) {
		return out, nil
	}
	before, after := substitutionRadii(s, out)
	num, den := 0.0, 0.0
	for i := range s.Species {
		num += math.Pow(after[i], 3)
		den += math.Pow(before[i], 3)
	}
	if !(num > 0 && den > 0) {
		return out, nil
	}
	scaled, err := out.ScaledToVolume(s.Volume() * num / den)
	if err != nil {
		return nil, fmt.Errorf("substitute sites: %w", err)
	}
	return scaled, nil
}

// substitutionRadii returns the radius of every site before and after a
// substitution, by the rule of SubstituteSites.
func substitutionRadii(s, t *Structure) (before, after []float64) {
	n := len(s.Species)
	before, after = make([]float64, n), make([]float64, n)
	radius := func(e Element) float64 { return e.CovalentRadius() }
	fill := func() {
		for i := range s.Species {
			before[i], after[i] = radius(s.Species[i]), radius(t.Species[i])
		}
	}
	if allMetals(s.Composition().Elements()) && allMetals(t.Composition().Elements()) {
		radius = func(e Element) float64 {
			if r, ok := e.MetallicRadius(); ok {
				return r
			}
			return e.CovalentRadius()
		}
		fill()
		return before, after
	}
	if a, ok := bestIonicAssignment(s.Composition()); ok {
		ok := true
		for i := range s.Species {
			q, _ := a.State(s.Species[i])
			rb, okb := s.Species[i].IonicRadius(int(q), "VI")
			ra, oka := t.Species[i].IonicRadius(int(q), "VI")
			if !okb || !oka || rb <= 0 || ra <= 0 {
				ok = false
				break
			}
			before[i], after[i] = rb, ra
		}
		if ok {
			return before, after
		}
	}
	fill()
	return before, after
}
