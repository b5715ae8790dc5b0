package evolve

import (
	"math"
	"slices"
	"strconv"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Recipes name what a move builds, so that a Generator can remember what
// building it gave (see move.recipe). A recipe lists everything the build
// reads: the prototype and composition for crystal.Build; the parent's
// structure (by its analysis uid), composition and substitutions for a
// parent's cell; the cell and the sites each element takes for partial
// substitutions.

// appendComposition writes c's elements and amounts, in c's order (Build
// and Fit read the composition as given).
func appendComposition(b []byte, c crystal.Composition) []byte {
	for _, it := range c.Items() {
		b = strconv.AppendInt(b, int64(it.Element), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, math.Float64bits(it.Amount), 36)
		b = append(b, ',')
	}
	return b
}

// buildRecipe names crystal.Build(p, comp). Build reads comp as its
// reduced integer formula (elements in any order, amounts in any
// multiple), so a composition of integer amounts is named by its elements
// in atomic-number order with the amounts divided by their common factor;
// any other as given.
func buildRecipe(p *crystal.Prototype, comp crystal.Composition) string {
	b := append(make([]byte, 0, 64), "build|"...)
	b = append(b, p.Name...)
	b = append(b, '|')
	items := comp.Items()
	g := 0
	for _, it := range items {
		n := int(it.Amount)
		if float64(n) != it.Amount || n < 1 {
			return string(appendComposition(b, comp))
		}
		g = crystal.GCD(g, n)
	}
	slices.SortFunc(items, func(x, y crystal.ElementAmount) int { return int(x.Element) - int(y.Element) })
	for _, it := range items {
		b = strconv.AppendInt(b, int64(it.Element), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(it.Amount)/int64(g), 10)
		b = append(b, ',')
	}
	return string(b)
}

// replaceRecipe names parent p's structure with from[i] replaced by to[i]
// (composition comp), as p.replacing builds it.
func replaceRecipe(p *parentInfo, comp crystal.Composition, from, to []crystal.Element) string {
	b := append(make([]byte, 0, 64), "replace|"...)
	b = strconv.AppendUint(b, p.uid, 10)
	b = append(b, '|')
	b = appendComposition(b, comp)
	for i := range from {
		b = append(b, '|')
		b = strconv.AppendInt(b, int64(from[i]), 10)
		b = append(b, '>')
		b = strconv.AppendInt(b, int64(to[i]), 10)
	}
	return string(b)
}

// siteDraw is the random part of a move that puts elements on some sites of
// a parent's cell: the candidate sites are shuffled by a permutation drawn
// from the generation's RNG, and the first counts[0] of them take els[0],
// the next counts[1] els[1], and so on. Moves of one group share a
// permutation (the group's index into moveList.draws).
type siteDraw struct {
	group  int
	cell   *crystal.Structure
	cellID string // names cell: the parent's uid and supercell
	sites  []int
	counts []int
	els    []crystal.Element
}

// complete sets m's build and recipe from the permutation perm of the
// candidate sites.
func (d *siteDraw) complete(m *move, perm []int) {
	chosen := make([][]int, len(d.els))
	k := 0
	for i, n := range d.counts {
		chosen[i] = make([]int, n)
		for j := range chosen[i] {
			chosen[i][j] = d.sites[perm[k]]
			k++
		}
		slices.Sort(chosen[i])
	}
	b := append(make([]byte, 0, 64), "sites|"...)
	b = append(b, d.cellID...)
	for i, e := range d.els {
		b = append(b, '|')
		b = strconv.AppendInt(b, int64(e), 10)
		for _, site := range chosen[i] {
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(site), 10)
		}
	}
	m.recipe = string(b)
	cell, els := d.cell, d.els
	m.build = func() (*crystal.Structure, error) {
		s := cell
		for i, e := range els {
			var err error
			if s, err = crystal.SubstituteSites(s, chosen[i], e); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
}
