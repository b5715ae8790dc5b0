package surrogate

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Errors of featurisation: an input the descriptors are not defined for.
var (
	// ErrUnsupportedElement: an element without the elemental data the
	// descriptors need (He, Ne, Ar have no electronegativity).
	ErrUnsupportedElement = errors.New("element not supported by the surrogate descriptors")
	// ErrNeedsStructure: the model uses structure descriptors and was given
	// a composition only.
	ErrNeedsStructure = errors.New("the surrogate needs a structure")
	// ErrMissingInput: the model needs another property as input (the
	// band gap for the dielectric constant) and it was not given.
	ErrMissingInput = errors.New("missing input property")
	// ErrIsolatedSite: a site has no neighbour within NeighborCutoff, so
	// its coordination is undefined.
	ErrIsolatedSite = errors.New("site without neighbours")
	// ErrBadInput: an empty composition, or a non-finite input.
	ErrBadInput = errors.New("bad surrogate input")
)

// Feature groups. A model's features are the concatenation of the groups
// it was trained with, in this order.
const (
	// GroupMagpie: composition statistics of elemental properties (Ward
	// et al., npj Comput. Mater. 2, 16028 (2016)): for each property of
	// elementProps the fraction-weighted mean, mean absolute deviation,
	// minimum, maximum, range and the value of the most abundant element;
	// the stoichiometric Lp norms (p = 0, 2, 3, 5, 7, 10); the fractions
	// of valence electrons in s, p, d and f orbitals; and the maximum and
	// mean ionic character 1 − exp(−(Δχ)²/4) (Pauling) over element pairs.
	GroupMagpie = "magpie"
	// GroupOxidation: charge descriptors from oxidation states. With the
	// best charge-neutral assignment over ICSD states (mixed valence
	// allowed; crystal.AssignOxidationStates): whether one exists, the
	// fraction-weighted mean and the maximum cation charge, the mean anion
	// charge, the mean Shannon radii of cations and anions in those states
	// (six-fold coordination) and their ratio. Without an assignment
	// (intermetallics, doped formulas) those are 0 and the flag says so.
	// Always: the charge imbalance Σ xᵢqᵢ / Σ xᵢ|qᵢ| with each element in
	// its common state (an off-stoichiometric or doped formula is
	// unbalanced), the number and total atomic fraction of minor elements
	// (fraction < 0.05, dopants) and the atomic fraction of metals.
	GroupOxidation = "oxidation"
	// GroupStructure: descriptors of the structure.
	//   - Density (g/cm³), volume per atom (Å³), packing fraction of
	//     covalent spheres.
	//   - Per site, over its NeighborCount nearest neighbours with Hoppe's
	//     weights wⱼ (Z. Kristallogr. 150, 23 (1979)): the effective
	//     coordination number ECN = Σⱼ wⱼ (mean, standard deviation,
	//     minimum, maximum over sites); the first moment of the bond
	//     directions |Σⱼ wⱼ r̂ᵢⱼ| / Σⱼ wⱼ (mean, maximum) and the norm of
	//     the third moment |Σⱼ wⱼ r̂ᵢⱼ⊗r̂ᵢⱼ⊗r̂ᵢⱼ| / Σⱼ wⱼ (mean, maximum).
	//     Both vanish for a site at an inversion centre of its shell; the
	//     first also vanishes for a regular tetrahedron, the third does not,
	//     and the piezoelectric tensor is itself an odd (rank-3) tensor.
	//   - The cell's net first and third moments, the per-site moments
	//     summed with weights (χ̄ − χᵢ) — cations and anions with opposite
	//     signs, since the two ends of a bond see opposite directions —
	//     per site: they cancel when the acentric motifs are arranged
	//     antipolarly and add when they are aligned.
	//   - The weighted fraction of bonds to another element and their mean
	//     |Δχ|; the nearest-neighbour distance over the sum of covalent
	//     radii (mean, minimum); Hoppe's mean bond length over the sum of
	//     the Shannon radii of the site and its nearest neighbour in their
	//     common states (mean, maximum; above 1 an ion rattles in its cage,
	//     the soft polar modes of large ionic dielectric responses); the
	//     valence plasmon energy ħω_p (eV, see plasmonEnergy), the scale of
	//     the electronic polarisability in Penn's model (Phys. Rev. 128,
	//     2093 (1962)).
	GroupStructure = "structure"
	// GroupBandGap: the band gap (eV), an input property.
	GroupBandGap = "band_gap"
)

// Neighbour search of the structure descriptors.
const (
	// NeighborCount is how many nearest neighbours of each site enter its
	// ECN; Hoppe's weight at 1.5 times the mean bond length is 3e−5, so 16
	// covers any first shell with margin.
	NeighborCount = 16
	// NeighborCutoff (Å) bounds the search, CGCNN's radius.
	NeighborCutoff = 8.0
	// minorFraction is the atomic fraction below which an element counts
	// as minor (a dopant).
	minorFraction = 0.05
)

// Input is what a surrogate predicts from: a structure, or a composition
// for a composition-only model, and the other properties it needs (by
// canonical name, e.g. "band_gap" in eV).
type Input struct {
	Structure   *crystal.Structure
	Composition crystal.Composition
	Properties  map[string]float64
}

// composition returns the input's composition: the structure's when there
// is one.
func (in Input) composition() crystal.Composition {
	if in.Structure != nil {
		return in.Structure.Composition()
	}
	return in.Composition
}

// bandGap returns the input's band gap.
func (in Input) bandGap() (float64, error) {
	gap, ok := in.Properties["band_gap"]
	if !ok {
		return 0, fmt.Errorf("%w: band_gap", ErrMissingInput)
	}
	if math.IsNaN(gap) || math.IsInf(gap, 0) {
		return 0, fmt.Errorf("%w: band_gap %v", ErrBadInput, gap)
	}
	return gap, nil
}

var magpieStats = []string{"mean", "avg_dev", "min", "max", "range", "mode"}

// FeatureNames lists the names of the features of the given groups, in
// order. An unknown group is an error.
func FeatureNames(groups []string) ([]string, error) {
	var names []string
	for _, g := range groups {
		switch g {
		case GroupMagpie:
			for _, p := range elementProps {
				for _, s := range magpieStats {
					names = append(names, p.name+"_"+s)
				}
			}
			names = append(names, "n_elements", "stoich_l2", "stoich_l3", "stoich_l5", "stoich_l7", "stoich_l10",
				"frac_s_valence", "frac_p_valence", "frac_d_valence", "frac_f_valence",
				"ionic_char_max", "ionic_char_mean")
		case GroupOxidation:
			names = append(names, "ox_neutral", "ox_cation_mean", "ox_cation_max", "ox_anion_mean",
				"ox_cation_radius", "ox_anion_radius", "ox_radius_ratio",
				"charge_imbalance", "n_minor", "minor_fraction", "metal_fraction")
		case GroupStructure:
			names = append(names, "density", "volume_per_atom", "packing_fraction",
				"ecn_mean", "ecn_std", "ecn_min", "ecn_max", "asymmetry_mean", "asymmetry_max",
				"octupole_mean", "octupole_max", "net_dipole", "net_octupole",
				"hetero_bond_fraction", "bond_delta_x", "rel_bond_mean", "rel_bond_min",
				"ionic_bond_mean", "ionic_bond_max", "plasmon_energy")
		case GroupBandGap:
			names = append(names, "band_gap")
		default:
			return nil, fmt.Errorf("unknown feature group %q", g)
		}
	}
	return names, nil
}

// Featurize computes the features of the given groups for one input.
func Featurize(groups []string, in Input) ([]float64, error) {
	comp := in.composition()
	if comp.IsEmpty() {
		return nil, fmt.Errorf("%w: empty composition", ErrBadInput)
	}
	for _, e := range comp.Elements() {
		if !supported(e) {
			return nil, fmt.Errorf("%w: %s", ErrUnsupportedElement, e)
		}
	}
	var x []float64
	for _, g := range groups {
		switch g {
		case GroupMagpie:
			x = magpie(x, comp)
		case GroupOxidation:
			x = oxidation(x, comp)
		case GroupStructure:
			if in.Structure == nil {
				return nil, ErrNeedsStructure
			}
			var err error
			if x, err = structureFeatures(x, in.Structure); err != nil {
				return nil, err
			}
		case GroupBandGap:
			gap, err := in.bandGap()
			if err != nil {
				return nil, err
			}
			x = append(x, gap)
		default:
			return nil, fmt.Errorf("unknown feature group %q", g)
		}
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%w: feature %d of %s is %v", ErrBadInput, i, comp.ReducedFormula(), v)
		}
		x[i] = quantize(v)
	}
	return x, nil
}

// fractions returns the elements of c and their atomic fractions.
func fractions(c crystal.Composition) ([]crystal.Element, []float64) {
	items := c.Items()
	total := c.NumAtoms()
	els := make([]crystal.Element, len(items))
	xs := make([]float64, len(items))
	for i, it := range items {
		els[i], xs[i] = it.Element, it.Amount/total
	}
	return els, xs
}

// magpie appends the GroupMagpie features of c to x.
func magpie(x []float64, c crystal.Composition) []float64 {
	els, xs := fractions(c)
	// The most abundant element; ties go to the lighter one, so the mode
	// does not depend on the order the formula was written in.
	modeIdx := 0
	for i := range els {
		if xs[i] > xs[modeIdx]+1e-12 || (math.Abs(xs[i]-xs[modeIdx]) <= 1e-12 && els[i] < els[modeIdx]) {
			modeIdx = i
		}
	}
	for p := range elementProps {
		mean, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
		for i, e := range els {
			v := elementTableCache[e][p]
			mean += xs[i] * v
			lo, hi = min(lo, v), max(hi, v)
		}
		dev := 0.0
		for i, e := range els {
			dev += xs[i] * math.Abs(elementTableCache[e][p]-mean)
		}
		x = append(x, mean, dev, lo, hi, hi-lo, elementTableCache[els[modeIdx]][p])
	}
	x = append(x, float64(len(els)))
	for _, p := range []float64{2, 3, 5, 7, 10} {
		s := 0.0
		for _, f := range xs {
			s += math.Pow(f, p)
		}
		x = append(x, math.Pow(s, 1/p))
	}
	var vs, vp, vd, vf, vt float64
	for i, e := range els {
		v := ValenceOf(e)
		vs += xs[i] * float64(v.S)
		vp += xs[i] * float64(v.P)
		vd += xs[i] * float64(v.D)
		vf += xs[i] * float64(v.F)
		vt += xs[i] * float64(v.Total())
	}
	x = append(x, vs/vt, vp/vt, vd/vt, vf/vt)
	icMax, icMean := 0.0, 0.0
	for i := range els {
		for j := i + 1; j < len(els); j++ {
			d := els[i].X() - els[j].X()
			ic := 1 - math.Exp(-d*d/4)
			icMax = max(icMax, ic)
			icMean += 2 * xs[i] * xs[j] * ic
		}
	}
	return append(x, icMax, icMean)
}

// oxidation appends the GroupOxidation features of c to x.
func oxidation(x []float64, c crystal.Composition) []float64 {
	els, xs := fractions(c)
	var neutral, catMean, catMax, anMean, catR, anR, ratio float64
	an, err := crystal.AssignOxidationStates(c, crystal.OxidationOptions{States: crystal.ICSDStates, MixedValence: true})
	if best, ok := bestAssignment(an, err); ok {
		neutral = 1
		var catX, anX, catRX, anRX float64
		for i, e := range els {
			q, _ := best.State(e)
			r := ionRadius(e, q)
			switch {
			case q > 0:
				catMean += xs[i] * q
				catMax = max(catMax, q)
				catX += xs[i]
				catRX += xs[i] * r
			case q < 0:
				anMean += xs[i] * -q
				anX += xs[i]
				anRX += xs[i] * r
			}
		}
		if catX > 0 {
			catMean /= catX
			catR = catRX / catX
		}
		if anX > 0 {
			anMean /= anX
			anR = anRX / anX
		}
		if anR > 0 {
			ratio = catR / anR
		}
	}
	var charge, absCharge, minor, minorX, metal float64
	for i, e := range els {
		q := float64(commonOxidation(e))
		charge += xs[i] * q
		absCharge += xs[i] * math.Abs(q)
		if xs[i] < minorFraction {
			minor++
			minorX += xs[i]
		}
		if e.IsMetal() {
			metal += xs[i]
		}
	}
	imbalance := 0.0
	if absCharge > 0 {
		imbalance = charge / absCharge
	}
	return append(x, neutral, catMean, catMax, anMean, catR, anR, ratio, imbalance, minor, minorX, metal)
}

// bestAssignment returns the best neutral assignment of an analysis, if the
// analysis succeeded and found one.
func bestAssignment(an *crystal.OxidationAnalysis, err error) (crystal.OxidationAssignment, bool) {
	if err != nil || an == nil || !an.Neutral {
		return crystal.OxidationAssignment{}, false
	}
	return an.Best()
}

// ionRadius is Shannon's radius of e in (mean) state q at six-fold
// coordination, the state rounded to the nearest integer; the covalent
// radius when no positive radius is tabulated.
func ionRadius(e crystal.Element, q float64) float64 {
	if r, ok := e.IonicRadius(int(math.Round(q)), "VI"); ok && q != 0 && r > 0 {
		return r
	}
	return e.CovalentRadius()
}

// structureFeatures appends the GroupStructure features of s to x.
func structureFeatures(x []float64, s *crystal.Structure) ([]float64, error) {
	// Beyond the NeighborCount nearest, enough to see the whole shell that
	// the count may cut (see tieShare).
	nl, err := s.NearestNeighbors(4*NeighborCount, NeighborCutoff)
	if err != nil {
		return nil, fmt.Errorf("neighbours: %w", err)
	}
	n := s.NumSites()
	packed := 0.0
	for _, e := range s.Species {
		r := e.CovalentRadius()
		packed += 4 * math.Pi / 3 * r * r * r
	}
	ecn := make([]float64, n)
	var asymMean, asymMax, octMean, octMax, hetero, dx, relMean, ionMean, ionMax float64
	var net1 crystal.Vec3
	var net3 [27]float64
	xbar := 0.0
	for _, e := range s.Species {
		xbar += e.X() / float64(n)
	}
	relMin := math.Inf(1)
	var w []float64
	// Per site: the Hoppe mean bond length over the sum of Shannon radii of
	// the site and its nearest neighbour in their common states
	// (elementProps' ionic_radius); above 1 an ion rattles in its cage,
	// the soft polar modes that make a large ionic dielectric response.
	for i := 0; i < n; i++ {
		nb, mult := tieShare(nl.Of(i), NeighborCount)
		if len(nb) == 0 {
			return nil, fmt.Errorf("%w: site %d (%s) within %g Å", ErrIsolatedSite, i, s.Species[i], NeighborCutoff)
		}
		lav := hoppeMeanBond(nb, mult)
		w = slices.Grow(w[:0], len(nb))[:len(nb)]
		ci := s.Cartesian(i)
		var sumW, het, delta float64
		var dir crystal.Vec3
		var oct [27]float64
		for j, m := range nb {
			w[j] = mult[j] * hoppeWeight(m.Distance, lav)
			sumW += w[j]
			ej := s.Species[m.Index]
			if ej != s.Species[i] {
				het += w[j]
			}
			delta += w[j] * math.Abs(ej.X()-s.Species[i].X())
			f := s.Frac[m.Index]
			pos := s.Lattice.Cartesian(crystal.Vec3{f[0] + float64(m.Image[0]), f[1] + float64(m.Image[1]), f[2] + float64(m.Image[2])})
			u := pos.Sub(ci).Scale(1 / m.Distance)
			dir = dir.Add(u.Scale(w[j]))
			addOuter3(&oct, u, w[j])
		}
		ecn[i] = sumW
		a := dir.Norm() / sumW
		asymMean += a / float64(n)
		asymMax = max(asymMax, a)
		o := norm27(&oct) / sumW
		octMean += o / float64(n)
		octMax = max(octMax, o)
		// Cations (below the mean electronegativity) and anions weighted
		// with opposite signs: the two ends of a bond see opposite
		// directions, so their odd moments add instead of cancelling.
		q := (xbar - s.Species[i].X()) / sumW
		net1 = net1.Add(dir.Scale(q))
		for k := range oct {
			net3[k] += q * oct[k]
		}
		hetero += het / sumW / float64(n)
		dx += delta / sumW / float64(n)
		// The nearest neighbour's radii, averaged over the neighbours tied
		// with it, so the site order does not choose among them.
		var rNear, ionNear float64
		near := 0
		for _, m := range nb {
			if m.Distance-nb[0].Distance > tieTolerance {
				break
			}
			rNear += s.Species[m.Index].CovalentRadius()
			ionNear += elementTableCache[s.Species[m.Index]][ionicRadiusProp]
			near++
		}
		rNear, ionNear = rNear/float64(near), ionNear/float64(near)
		rel := nb[0].Distance / (s.Species[i].CovalentRadius() + rNear)
		relMean += rel / float64(n)
		relMin = min(relMin, rel)
		ion := lav / (elementTableCache[s.Species[i]][ionicRadiusProp] + ionNear)
		ionMean += ion / float64(n)
		ionMax = max(ionMax, ion)
	}
	mean, std := meanStd(ecn)
	x = append(x, s.Density(), s.VolumePerAtom(), packed/s.Volume(),
		mean, std, slices.Min(ecn), slices.Max(ecn), asymMean, asymMax,
		octMean, octMax, net1.Norm()/float64(n), norm27(&net3)/float64(n),
		hetero, dx, relMean, relMin, ionMean, ionMax, plasmonEnergy(s))
	return x, nil
}

// featureZero is the magnitude below which a feature is 0.
const featureZero = 1e-9

// quantize rounds a feature to 9 significant digits, and to 0 below
// featureZero. A feature computed from the same structure in another
// orientation, site order or file carries rounding noise of a few units
// in the last place (a vanishing moment or a charge-balanced mean comes
// out as 1e-16), and trees split between the values of their training
// structures, where such noise decides the branch; rounded, it does not.
func quantize(v float64) float64 {
	a := math.Abs(v)
	if a < featureZero {
		return 0
	}
	q := math.Pow(10, math.Floor(math.Log10(a))-8)
	return math.Round(v/q) * q
}

// plasmonEnergy is the free-electron plasmon energy ħω_p = ħ√(n e²/ε₀mₑ)
// = 37.13 eV · √(n/Å⁻³) of the structure's valence electrons: s and p
// electrons outside the noble-gas core and the d and f electrons of open
// shells (filled d¹⁰ and f¹⁴ shells are core-like and left out).
func plasmonEnergy(s *crystal.Structure) float64 {
	ne := 0
	for _, e := range s.Species {
		v := ValenceOf(e)
		ne += v.S + v.P
		if v.D < 10 {
			ne += v.D
		}
		if v.F < 14 {
			ne += v.F
		}
	}
	return 37.13 * math.Sqrt(float64(ne)/s.Volume())
}

// addOuter3 adds w·u⊗u⊗u to the rank-3 tensor t (row-major 3×3×3).
func addOuter3(t *[27]float64, u crystal.Vec3, w float64) {
	for a := 0; a < 3; a++ {
		for b := 0; b < 3; b++ {
			wab := w * u[a] * u[b]
			for c := 0; c < 3; c++ {
				t[9*a+3*b+c] += wab * u[c]
			}
		}
	}
}

// norm27 is the Frobenius norm of a rank-3 tensor, invariant under
// rotations.
func norm27(t *[27]float64) float64 {
	s := 0.0
	for _, v := range t {
		s += v * v
	}
	return math.Sqrt(s)
}

// hoppeMeanBond is Hoppe's weighted mean bond length of a site with the
// given neighbours (sorted by distance): l₀ = the shortest distance and
// lₖ₊₁ = Σ lⱼ wⱼ / Σ wⱼ with wⱼ = exp(1 − (lⱼ/lₖ)⁶), iterated to
// convergence (Hoppe, Z. Kristallogr. 150, 23 (1979), eq. 3).
func hoppeMeanBond(nb []crystal.Neighbor, mult []float64) float64 {
	lav := nb[0].Distance
	for iter := 0; iter < 100; iter++ {
		var num, den float64
		for j, m := range nb {
			w := mult[j] * hoppeWeight(m.Distance, lav)
			num += w * m.Distance
			den += w
		}
		next := num / den
		if math.Abs(next-lav) < 1e-10*lav {
			return next
		}
		lav = next
	}
	return lav
}

// tieTolerance (Å) is how close two neighbour distances must be to count
// as tied.
const tieTolerance = 1e-3

// tieShare returns the k nearest of a site's neighbours (sorted by
// distance) with their multiplicities: 1 for those closer than the k-th,
// and, where the k-th distance is shared by neighbours on both sides of
// the cut, the remaining slots shared evenly among all of them. The
// features then depend on the structure alone, not on which of the tied
// neighbours a site order or orientation puts first (CGCNN's rule, see
// pkg/cgcnn).
func tieShare(all []crystal.Neighbor, k int) ([]crystal.Neighbor, []float64) {
	if len(all) <= k {
		mult := make([]float64, len(all))
		for j := range mult {
			mult[j] = 1
		}
		return all, mult
	}
	dk := all[k-1].Distance
	closer := 0
	for closer < len(all) && all[closer].Distance < dk-tieTolerance {
		closer++
	}
	end := closer
	for end < len(all) && all[end].Distance <= dk+tieTolerance {
		end++
	}
	mult := make([]float64, end)
	for j := range mult {
		if j < closer {
			mult[j] = 1
		} else {
			mult[j] = float64(k-closer) / float64(end-closer)
		}
	}
	return all[:end], mult
}

// hoppeWeight is the weight exp(1 − (l/lav)⁶) of a bond of length l in the
// effective coordination number.
func hoppeWeight(l, lav float64) float64 {
	r := l / lav
	r3 := r * r * r
	return math.Exp(1 - r3*r3)
}

// meanStd returns the mean and the population standard deviation of v.
func meanStd(v []float64) (mean, std float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(v)))
}
