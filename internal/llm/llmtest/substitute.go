package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

var (
	demoLine = regexp.MustCompile(`(?m)^\s*(\{"formula":.*\})\s*$`)
	askN     = regexp.MustCompile(`Propose (\d+) new candidate`)
)

// Demonstrations returns the structures shown in a prompt (the candidate
// JSON lines under its successes and failures), in order.
func Demonstrations(prompt string) []*crystal.Structure {
	var out []*crystal.Structure
	for _, m := range demoLine.FindAllStringSubmatch(prompt, -1) {
		if _, s, err := crystal.ParseCandidateJSON([]byte(m[1])); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// Asked returns how many candidates a prompt asks for (1 when it does
// not say).
func Asked(prompt string) int {
	if m := askN.FindStringSubmatch(prompt); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			return n
		}
	}
	return 1
}

// Substitute is an answerer standing in for a model: it reads the
// demonstrations of the prompt and answers with as many candidates as the
// prompt asks for, each a demonstration with one element replaced by its
// neighbour in the same group (LLEMA's rule 1), the cell scaled by the
// change of atomic volume. Its choices are a function of seed and the
// prompt. A prompt without demonstrations gets rock-salt MgO. Usage is
// not reported, so the client's estimates are what gets counted.
func Substitute(seed uint64) func(Request) Reply {
	return func(req Request) Reply {
		h := fnv.New64a()
		fmt.Fprint(h, seed, req.User)
		rng := rand.New(rand.NewPCG(h.Sum64(), seed))
		demos := Demonstrations(req.User)
		var cands []map[string]any
		taken := map[string]bool{}
		for k := 0; k < Asked(req.User); k++ {
			if len(demos) == 0 {
				cands = append(cands, rockSalt())
				continue
			}
			// Like a model that reads its prompt, prefer a formula the
			// prompt does not mention yet (a few tries).
			var best *crystal.Structure
			var why string
			for try := 0; try < 12; try++ {
				parent := demos[rng.IntN(len(demos))]
				s, from, to, ok := substitute(parent, rng)
				if !ok {
					continue
				}
				reason := fmt.Sprintf("%s with %s in place of %s", parent.Composition().ReducedFormula(), to.Symbol(), from.Symbol())
				if try%2 == 1 {
					// A second substitution reaches further.
					if s2, from2, to2, ok := substitute(s, rng); ok && to2 != from {
						s = s2
						reason += fmt.Sprintf(", and %s in place of %s", to2.Symbol(), from2.Symbol())
					}
				}
				f := s.Composition().ReducedFormula()
				if best == nil || !taken[f] && !mentions(req.User, f) {
					best, why = s, reason
				}
				if !taken[f] && !mentions(req.User, f) {
					break
				}
			}
			if best == nil {
				continue
			}
			c := crystal.CandidateFromStructure(best)
			taken[c.Formula] = true
			p := c.Lattice.Parameters
			coords := make([][3]float64, len(c.Coords))
			for i, x := range c.Coords {
				coords[i] = [3]float64{round(x[0]), round(x[1]), round(x[2])}
			}
			cands = append(cands, map[string]any{
				"formula": c.Formula,
				"lattice": map[string]float64{"a": round(p.A), "b": round(p.B), "c": round(p.C),
					"alpha": round(p.Alpha), "beta": round(p.Beta), "gamma": round(p.Gamma)},
				"species": c.Species, "coords": coords, "rationale": why,
				"rule": "1. Same-group elemental substitution",
			})
		}
		data, _ := json.Marshal(map[string]any{"candidates": cands})
		return Reply{Content: string(data), NoUsage: true}
	}
}

// substitute replaces every site of one element of s by a same-group
// neighbour (one period up or down).
func substitute(s *crystal.Structure, rng *rand.Rand) (*crystal.Structure, crystal.Element, crystal.Element, bool) {
	elems := s.Composition().Elements()
	for _, i := range rng.Perm(len(elems)) {
		from := elems[i]
		var options []crystal.Element
		for _, e := range crystal.Elements() {
			if e.Group() == from.Group() && from.Group() > 0 && (e.Period() == from.Period()+1 || e.Period() == from.Period()-1) && e.Period() <= 6 {
				options = append(options, e)
			}
		}
		if len(options) == 0 {
			continue
		}
		to := options[rng.IntN(len(options))]
		out := s.Copy()
		for j, sp := range out.Species {
			if sp == from {
				out.Species[j] = to
			}
		}
		r0, r1 := from.CovalentRadius(), to.CovalentRadius()
		if r0 > 0 && r1 > 0 {
			n := s.Composition().Amount(from)
			total := float64(len(s.Species))
			f := 1 + n/total*(math.Pow(r1/r0, 3)-1)
			if scaled, err := out.ScaledToVolume(s.Volume() * f); err == nil {
				out = scaled
			}
		}
		return out, from, to, true
	}
	return nil, 0, 0, false
}

// mentions reports whether the prompt names formula as a candidate
// ("- BaF2:" or "formula":"BaF2").
func mentions(prompt, formula string) bool {
	return strings.Contains(prompt, "- "+formula+":") || strings.Contains(prompt, "- "+formula+" (") ||
		strings.Contains(prompt, `"formula":"`+formula+`"`)
}

// round keeps 4 decimals, as a model writes numbers.
func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func rockSalt() map[string]any {
	a := 4.21
	return map[string]any{
		"formula": "MgO", "lattice": map[string]float64{"a": a, "b": a, "c": a, "alpha": 90, "beta": 90, "gamma": 90},
		"species":   strings.Split("Mg Mg Mg Mg O O O O", " "),
		"coords":    [][3]float64{{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0}, {.5, .5, .5}, {.5, 0, 0}, {0, .5, 0}, {0, 0, .5}},
		"rationale": "rock-salt MgO", "rule": "none",
	}
}
