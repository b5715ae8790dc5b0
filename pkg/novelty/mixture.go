package novelty

import (
	"cmp"
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
)

// MixtureReason says why a candidate is, or is not, an ordered mixture of
// known phases.
type MixtureReason string

const (
	// IsMixture: above the hull, inside the facet of its isovalent end
	// members.
	IsMixture MixtureReason = "ordered mixture of known phases"
	// NotAboveHull: E_hull ≤ 0, so the candidate is not unstable with
	// respect to anything, end members included.
	NotAboveHull MixtureReason = "not above the hull"
	// NoOxidationStates: no charge-neutral assignment of oxidation states
	// (or an intermetallic, all states zero), so isovalence is undefined.
	NoOxidationStates MixtureReason = "no oxidation states"
	// NoSwap: no two elements share a charge (within the radius limit),
	// so the candidate has no isovalent end members.
	NoSwap MixtureReason = "no isovalent ions to swap"
	// OtherPhases: the hull below the candidate is not made of its
	// isovalent end members only (a known ternary at that composition, or
	// other phases).
	OtherPhases MixtureReason = "decomposes into phases that are not its isovalent end members"
)

// Mixture is the outcome of OrderedMixture.
type Mixture struct {
	// Mixture is true when the candidate is an ordered mixture of known
	// phases: Reason is then IsMixture.
	Mixture bool
	Reason  MixtureReason
	// Swaps are the sets of interchangeable ions: elements of the
	// candidate that share one oxidation state (two or more per set).
	Swaps [][]crystal.Ion
	// RadiusRatio is the largest ratio of Shannon radii (coordination VI)
	// between ions of one set (0 when a radius is not tabulated).
	RadiusRatio float64
	// EndMembers are the hull phases the candidate decomposes into, with
	// their fractions of the atoms (when Mixture: its isovalent end
	// members, e.g. NaF and LiF for NaLiF2).
	EndMembers []hull.Phase
}

// MixtureOptions tune OrderedMixture.
type MixtureOptions struct {
	// Oxidation are the options of the oxidation-state assignment (the
	// zero value: common states, one per element).
	Oxidation crystal.OxidationOptions
	// MaxRadiusRatio, when positive, admits two ions of one charge as a
	// swap only when the ratio of their Shannon radii is at most this.
	// Zero admits any: the mixtures the rule is for include immiscible
	// pairs (K⁺/Li⁺ in KLiCl2, a ratio of 1.82), and the hull decides
	// whether the candidate is above its end members.
	MaxRadiusRatio float64
}

// OrderedMixture decides whether a candidate of composition c whose place
// relative to the hull of known phases is h (its energy above the hull and
// the decomposition of its composition) is an ordered mixture of known
// phases: E_hull > 0 and the hull facet below it is spanned by its
// isovalent end members.
//
// The candidate's ions come from the best charge-neutral assignment of
// oxidation states (crystal.AssignOxidationStates). Elements with the same
// non-zero state form a swap set (Na⁺ and Li⁺ in NaLiF2; Cl⁻ and Br⁻ in
// Na2ClBr). An isovalent end member puts one element of each set on all
// of that set's sites: NaF and LiF for NaLiF2, KCl and LiCl for KLiCl2,
// BaF2 and CaF2 for BaCaF4. The candidate is a mixture when every phase of
// its decomposition is such an end member (and there are at least two):
// its composition then lies inside their facet of the hull, and E_hull > 0
// says it is unstable towards them. A real compound at that composition
// (on the hull) makes the decomposition that compound itself, so it is not
// called a mixture; nor are BaTiO3 (Ba²⁺, Ti⁴⁺) and MgAl2O4 (Mg²⁺, Al³⁺),
// whose cations do not share a charge, even above the hull of BaO + TiO2
// or MgO + Al2O3.
func OrderedMixture(c crystal.Composition, h hull.Result, opt MixtureOptions) Mixture {
	m := Mixture{EndMembers: h.Decomposition}
	if !(h.EAboveHull > 0) {
		m.Reason = NotAboveHull
		return m
	}
	an, err := crystal.AssignOxidationStates(c, opt.Oxidation)
	if err != nil {
		m.Reason = NoOxidationStates
		return m
	}
	best, ok := an.Best()
	if !ok {
		m.Reason = NoOxidationStates
		return m
	}
	// Elements by charge; an element of mixed valence is on its own.
	set := map[crystal.Element]int{} // element → swap set index
	byCharge := map[int][]crystal.Ion{}
	for _, e := range c.Elements() {
		q, ok := best.State(e)
		if !ok || q != math.Trunc(q) || q == 0 {
			continue
		}
		byCharge[int(q)] = append(byCharge[int(q)], crystal.Ion{Element: e, State: int(q)})
	}
	charges := make([]int, 0, len(byCharge))
	for q := range byCharge {
		charges = append(charges, q)
	}
	slices.Sort(charges)
	for _, q := range charges {
		ions := byCharge[q]
		if len(ions) < 2 {
			continue
		}
		slices.SortFunc(ions, func(a, b crystal.Ion) int { return cmp.Compare(a.Element, b.Element) })
		ratio := radiusRatio(ions)
		if opt.MaxRadiusRatio > 0 && !(ratio > 0 && ratio <= opt.MaxRadiusRatio) {
			continue
		}
		m.RadiusRatio = math.Max(m.RadiusRatio, ratio)
		for _, ion := range ions {
			set[ion.Element] = len(m.Swaps)
		}
		m.Swaps = append(m.Swaps, ions)
	}
	if len(m.Swaps) == 0 {
		m.Reason = NoSwap
		return m
	}
	if len(h.Decomposition) < 2 {
		m.Reason = OtherPhases
		return m
	}
	for _, p := range h.Decomposition {
		if !endMember(c, p.Composition, set, len(m.Swaps)) {
			m.Reason = OtherPhases
			return m
		}
	}
	m.Mixture, m.Reason = true, IsMixture
	return m
}

// endMember reports whether phase is an isovalent end member of c: it
// holds exactly one element of each swap set, no element c lacks, and its
// reduced composition is c's with every element of a set replaced by that
// one.
func endMember(c, phase crystal.Composition, set map[crystal.Element]int, nsets int) bool {
	rep := make([]crystal.Element, nsets)
	for _, e := range phase.Elements() {
		if !c.Contains(e) {
			return false
		}
		k, ok := set[e]
		if !ok {
			continue
		}
		if rep[k] != 0 {
			return false // two elements of one set
		}
		rep[k] = e
	}
	for _, r := range rep {
		if r == 0 {
			return false
		}
	}
	amounts := map[crystal.Element]float64{}
	for _, it := range c.Items() {
		e := it.Element
		if k, ok := set[e]; ok {
			e = rep[k]
		}
		amounts[e] += it.Amount
	}
	items := make([]crystal.ElementAmount, 0, len(amounts))
	for e, a := range amounts {
		items = append(items, crystal.ElementAmount{Element: e, Amount: a})
	}
	want, err := crystal.NewComposition(items...)
	if err != nil {
		return false
	}
	return want.SameReduced(phase)
}

// radiusRatio is the ratio of the largest to the smallest Shannon radius
// (coordination VI, or the nearest tabulated) of the ions; 0 when one is
// not tabulated.
func radiusRatio(ions []crystal.Ion) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, ion := range ions {
		r, ok := ion.Element.IonicRadius(ion.State, "VI")
		if !ok || !(r > 0) {
			return 0
		}
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	return hi / lo
}
