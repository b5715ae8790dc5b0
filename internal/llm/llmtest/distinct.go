package llmtest

import (
	"encoding/json"
	"fmt"
	"math"
	"sync"
)

// Distinct is an answerer standing in for a model whose every candidate is
// new to the campaign: rock-salt supercells (two conventional cells along
// a, eight cations and eight O) whose cations are a mix of Mg, Ca, Sr, Ba
// and Zn, each answer taking the next mixes in a fixed enumeration (495 of
// them, each a different reduced formula, hence a different fingerprint).
// Every cation is 2+, so the candidates are charge-balanced; the cell
// (a = 9.6, b = c = 4.8 Å) keeps atoms 2.4 Å apart. After the 495th mix it
// starts again (duplicates from then on). Safe for concurrent use.
func Distinct() func(Request) Reply {
	var mu sync.Mutex
	next := 0
	mixes := cationMixes(8, 5)
	return func(req Request) Reply {
		n := Asked(req.User)
		cands := make([]map[string]any, n)
		mu.Lock()
		for k := range cands {
			cands[k] = rockSaltMix(mixes[next%len(mixes)])
			next++
		}
		mu.Unlock()
		data, _ := json.Marshal(map[string]any{"candidates": cands})
		return Reply{Content: string(data), PromptTokens: 1000, CompletionTokens: 300}
	}
}

var distinctCations = []string{"Mg", "Ca", "Sr", "Ba", "Zn"}

// cationMixes enumerates the counts of k kinds of cation on n sites
// (every composition, C(n+k−1, k−1) of them).
func cationMixes(n, k int) [][]int {
	var out [][]int
	var rec func(prefix []int, left int)
	rec = func(prefix []int, left int) {
		if len(prefix) == k-1 {
			out = append(out, append(append([]int{}, prefix...), left))
			return
		}
		for c := 0; c <= left; c++ {
			rec(append(prefix, c), left-c)
		}
	}
	rec(nil, n)
	return out
}

// rockSaltMix writes a rock-salt supercell with the given cation counts.
func rockSaltMix(counts []int) map[string]any {
	fcc := [][3]float64{{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0}}
	var cations, anions [][3]float64
	for cell := 0; cell < 2; cell++ {
		for _, p := range fcc {
			cations = append(cations, [3]float64{(p[0] + float64(cell)) / 2, p[1], p[2]})
			q := [3]float64{math.Mod(p[0]+.5, 1), math.Mod(p[1]+.5, 1), math.Mod(p[2]+.5, 1)}
			anions = append(anions, [3]float64{(q[0] + float64(cell)) / 2, q[1], q[2]})
		}
	}
	var species []string
	coords := [][3]float64{}
	site := 0
	for i, c := range counts {
		for j := 0; j < c; j++ {
			species = append(species, distinctCations[i])
			coords = append(coords, cations[site])
			site++
		}
	}
	for _, p := range anions {
		species = append(species, "O")
		coords = append(coords, p)
	}
	formula := ""
	for i, c := range counts {
		if c > 0 {
			formula += fmt.Sprintf("%s%d", distinctCations[i], c)
		}
	}
	formula += "O8"
	return map[string]any{
		"formula": formula, "lattice": map[string]float64{"a": 9.6, "b": 4.8, "c": 4.8, "alpha": 90, "beta": 90, "gamma": 90},
		"species": species, "coords": coords, "rationale": "a rock-salt mix of divalent cations", "rule": "none",
	}
}
