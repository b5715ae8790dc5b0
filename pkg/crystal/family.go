package crystal

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// ErrUnknownFamily is returned for a structure family Crucible cannot
// recognise.
var ErrUnknownFamily = errors.New("unknown structure family")

// Structure families a task may require (see InFamily).
const (
	FamilyPerovskite = "perovskite"
)

// Families lists the structure families InFamily recognises.
func Families() []string { return []string{FamilyPerovskite} }

// Family parameters of the perovskite test.
const (
	// perovskiteShell: an anion belongs to a B cation's first shell when
	// it is within this factor of the B cation's nearest anion. The
	// octahedron's bonds spread by at most ~15 % in distorted perovskites
	// (GdFeO3-type, Jahn–Teller LaMnO3), while the next anions of a
	// corner-sharing network are √5 ≈ 2.2 times farther.
	perovskiteShell = 1.3
	// perovskiteMinAngle (degrees): the smallest B–X–B angle of corner
	// sharing. Octahedra tilted as in CaTiO3 or GdFeO3 keep 140–160°;
	// edge sharing gives about 90–100° (ilmenite, post-perovskite's
	// edges), face sharing about 80° (hexagonal perovskites).
	perovskiteMinAngle = 120.0
	// familyCutoff (Å) bounds the neighbour search; no cation–anion
	// bond is longer.
	familyCutoff = 5.0
)

// Anions returns the elements of c that are anions, in order of
// increasing electronegativity: those with a negative oxidation state in
// the best charge-balanced assignment over ICSD oxidation states
// (AssignOxidationStates). A single element or an intermetallic has none;
// a composition that cannot be charge balanced has its most
// electronegative element.
func Anions(c Composition) []Element {
	if c.Len() < 2 {
		return nil
	}
	an, err := AssignOxidationStates(c, OxidationOptions{States: ICSDStates, MixedValence: true})
	if err == nil && an.Alloy {
		return nil
	}
	var out []Element
	if err == nil {
		if best, ok := an.Best(); ok {
			for _, e := range c.Elements() {
				if q, ok := best.State(e); ok && q < 0 {
					out = append(out, e)
				}
			}
		}
	}
	if len(out) == 0 {
		els := c.Elements()
		most := els[0]
		for _, e := range els[1:] {
			if e.X() > most.X() {
				most = e
			}
		}
		out = []Element{most}
	}
	slices.SortFunc(out, func(a, b Element) int {
		switch {
		case a.X() < b.X():
			return -1
		case a.X() > b.X():
			return 1
		}
		return int(a) - int(b)
	})
	return out
}

// InFamily returns nil when s belongs to the structure family, else an
// error saying why not (wrapping ErrUnknownFamily for a family it does not
// know). Families:
//
//   - perovskite: the composition is ABX3 with X its anion and A, B
//     cations, and the structure is a three-dimensional network of
//     corner-sharing BX6 octahedra (Goldschmidt's perovskite, Pm-3m, and
//     its tilted and distorted variants: every B cation has six X
//     neighbours within 1.3 times its shortest B–X distance, every X is
//     shared by exactly two such octahedra, and every B–X–B angle is at
//     least 120°, which excludes edge sharing such as ilmenite's and face
//     sharing such as the hexagonal perovskites'). Either cation may be B.
func InFamily(s *Structure, family string) error {
	switch family {
	case FamilyPerovskite:
		return perovskite(s)
	}
	return fmt.Errorf("%w %q (known: %s)", ErrUnknownFamily, family, strings.Join(Families(), ", "))
}

// perovskite implements InFamily's perovskite test.
func perovskite(s *Structure) error {
	comp := s.Composition()
	red := comp.ReducedComposition()
	if red.Len() != 3 {
		return fmt.Errorf("not a perovskite: %s is not ABX3", comp.ReducedFormula())
	}
	var x Element
	var cations []Element
	for _, it := range red.Items() {
		switch {
		case math.Abs(it.Amount-3) < amountTolerance:
			x = it.Element
		case math.Abs(it.Amount-1) < amountTolerance:
			cations = append(cations, it.Element)
		}
	}
	if x == 0 || len(cations) != 2 {
		return fmt.Errorf("not a perovskite: %s is not ABX3", comp.ReducedFormula())
	}
	if an := Anions(comp); len(an) != 1 || an[0] != x {
		return fmt.Errorf("not a perovskite: in %s, %s is not the only anion", comp.ReducedFormula(), x)
	}
	nl, err := s.Neighbors(familyCutoff)
	if err != nil {
		return fmt.Errorf("not a perovskite: %w", err)
	}
	var why []string
	for _, b := range cations {
		reason := cornerSharingOctahedra(s, nl, b, x)
		if reason == "" {
			return nil
		}
		why = append(why, reason)
	}
	return fmt.Errorf("not a perovskite: no corner-sharing %s network (%s)", x.Symbol()+"6 octahedra", strings.Join(why, "; "))
}

// bond is a B–X bond: the X site and the vector from B to X.
type bond struct {
	x int
	v Vec3
}

// cornerSharingOctahedra returns "" when every b site has an octahedron
// of x neighbours and the octahedra share corners only, else why not.
func cornerSharingOctahedra(s *Structure, nl *NeighborList, b, x Element) string {
	// perX collects, for every x site, the vectors from it to the b
	// sites whose first shell holds it.
	perX := make(map[int][]Vec3)
	for i, e := range s.Species {
		if e != b {
			continue
		}
		var bonds []bond
		shortest := math.Inf(1)
		for _, n := range nl.Of(i) {
			if s.Species[n.Index] == x && n.Distance < shortest {
				shortest = n.Distance
			}
		}
		for _, n := range nl.Of(i) {
			if s.Species[n.Index] != x || n.Distance > perovskiteShell*shortest {
				continue
			}
			f := s.Frac[n.Index].Add(Vec3{float64(n.Image[0]), float64(n.Image[1]), float64(n.Image[2])}).Sub(s.Frac[i])
			bonds = append(bonds, bond{n.Index, s.Lattice.Cartesian(f)})
		}
		if len(bonds) != 6 {
			return fmt.Sprintf("%s has %d %s neighbours, not 6", b.Symbol(), len(bonds), x.Symbol())
		}
		for _, bd := range bonds {
			perX[bd.x] = append(perX[bd.x], bd.v.Scale(-1))
		}
	}
	for j, e := range s.Species {
		if e != x {
			continue
		}
		vs := perX[j]
		if len(vs) != 2 {
			return fmt.Sprintf("%s is shared by %d %s octahedra, not 2", x.Symbol(), len(vs), b.Symbol())
		}
		cos := vs[0].Dot(vs[1]) / (vs[0].Norm() * vs[1].Norm())
		angle := math.Acos(math.Max(-1, math.Min(1, cos))) * 180 / math.Pi
		if angle < perovskiteMinAngle {
			return fmt.Sprintf("a %s–%s–%s angle of %.0f° (edge or face sharing, below %.0f°)", b.Symbol(), x.Symbol(), b.Symbol(), angle, perovskiteMinAngle)
		}
	}
	return ""
}
