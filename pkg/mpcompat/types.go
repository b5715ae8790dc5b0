package mpcompat

import (
	"bytes"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// OxideType classifies the oxygen of a structure as pymatgen's oxide_type
// does (pymatgen.entries.compatibility, OxideType.parse_oxide): "hydroxide"
// if some O–H distance is below 0.93·rc, else "superoxide" if some O–O
// distance is below 1.35·rc ("ozonide" if an O has two such neighbours),
// "peroxide" below 1.49·rc, else "oxide"; "None" without O or for pure
// oxygen. rc is the relative cutoff (1.05 in MP's corrections).
func OxideType(st *crystal.Structure, rc float64) string {
	comp := st.Composition()
	o, h := crystal.MustElement("O"), crystal.MustElement("H")
	if comp.Amount(o) == 0 || comp.Len() < 2 {
		return "None"
	}
	nl, err := st.Neighbors(1.49 * rc)
	if err != nil {
		return "oxide"
	}
	hydroxide := false
	superBonds := map[int]int{}
	peroxide := false
	for i, e := range st.Species {
		if e != o {
			continue
		}
		for _, nb := range nl.Of(i) {
			switch st.Species[nb.Index] {
			case h:
				if nb.Distance < 0.93*rc {
					hydroxide = true
				}
			case o:
				if nb.Distance < 1.35*rc {
					superBonds[i]++
				} else {
					peroxide = true
				}
			}
		}
	}
	switch {
	case hydroxide:
		return "hydroxide"
	case len(superBonds) > 0:
		for _, n := range superBonds {
			if n > 1 {
				return "ozonide"
			}
		}
		return "superoxide"
	case peroxide:
		return "peroxide"
	}
	return "oxide"
}

// SulfideType classifies the sulfur of a structure as pymatgen's
// sulfide_type does: for each S, the (up to four) neighbours within 0.4 Å of
// its nearest; if their mean electronegativity exceeds sulfur's the
// compound is a sulfate (""), if it equals it with S among them a
// polysulfide, otherwise a sulfide. Any sulfate site makes the whole a
// sulfate; else any polysulfide site a polysulfide.
func SulfideType(st *crystal.Structure) string {
	s := crystal.MustElement("S")
	comp := st.Composition()
	if comp.Amount(s) == 0 || comp.Len() < 2 {
		return ""
	}
	xs := s.X()
	types := map[string]bool{}
	for i, e := range st.Species {
		if e != s {
			continue
		}
		var nbrs []crystal.Neighbor
		for r := 4.0; len(nbrs) == 0 && r < 64; r *= 2 {
			nl, err := st.Neighbors(r)
			if err != nil {
				return "sulfide"
			}
			nbrs = nl.Of(i)
		}
		if len(nbrs) == 0 {
			types["sulfide"] = true
			continue
		}
		d0 := nbrs[0].Distance
		sum, n, hasS := 0.0, 0, false
		for _, nb := range nbrs {
			if nb.Distance >= d0+0.4 || n == 4 {
				break
			}
			el := st.Species[nb.Index]
			sum += el.X()
			hasS = hasS || el == s
			n++
		}
		avg := sum / float64(n)
		switch {
		case avg > xs:
			types["sulfate"] = true
		case math.Abs(avg-xs) < 1e-12 && hasS:
			types["polysulfide"] = true
		default:
			types["sulfide"] = true
		}
	}
	switch {
	case types["sulfate"]:
		return ""
	case types["polysulfide"]:
		return "polysulfide"
	}
	return "sulfide"
}
