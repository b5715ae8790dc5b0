package m3gnet

import "math"

// besselBasis is the radial basis of M3GNet (matgl SphericalBesselFunction
// with smooth = false; Chen & Ong 2022, Methods, Eq. 7): for l < maxL and
// n < maxN,
//
//	g_ln(r) = sqrt(2/r_c³) / |j_{l+1}(z_ln)| · j_l(z_ln r / r_c),
//
// j_l the spherical Bessel function of the first kind, z_ln its n-th
// positive root, r_c the graph cutoff; r is clamped to r_c. Every g_ln
// vanishes at r_c. Column k = l·maxN + n, as matgl concatenates them.
type besselBasis struct {
	rc    float64
	root  [maxL][maxN]float64
	coef  [maxL][maxN]float64 // sqrt(2/r_c³)/|j_{l+1}(z_ln)|
	scale [maxL][maxN]float64 // z_ln/r_c
}

func newBesselBasis(rc float64) besselBasis {
	b := besselBasis{rc: rc}
	norm := math.Sqrt(2 / (rc * rc * rc))
	roots := besselRoots()
	for l := 0; l < maxL; l++ {
		for n := 0; n < maxN; n++ {
			z := roots[l][n]
			b.root[l][n] = z
			b.scale[l][n] = z / rc
			b.coef[l][n] = norm / math.Abs(sphericalJ(l+1, z))
		}
	}
	return b
}

// eval writes g_ln(r) to v and dg_ln/dr to dv (nBasis each).
func (b *besselBasis) eval(r float64, v, dv []float64) {
	clamped := r > b.rc
	if clamped {
		r = b.rc
	}
	for l := 0; l < maxL; l++ {
		for n := 0; n < maxN; n++ {
			x := b.scale[l][n] * r
			j, dj := sphericalJD(l, x)
			k := l*maxN + n
			v[k] = b.coef[l][n] * j
			if clamped {
				dv[k] = 0
			} else {
				dv[k] = b.coef[l][n] * b.scale[l][n] * dj
			}
		}
	}
}

// besselRoots returns the first maxN positive roots of j_l for l < maxL.
// The roots of j_0 are nπ; those of j_l interlace those of j_{l−1}, so
// each lies between two consecutive roots of the previous order (the
// bracketing matgl's spherical_bessel_roots uses), where bisection finds
// it to the last bit.
func besselRoots() [maxL][maxN]float64 {
	var out [maxL][maxN]float64
	m := maxN + maxL
	prev := make([]float64, m)
	for i := range prev {
		prev[i] = float64(i+1) * math.Pi
	}
	copy(out[0][:], prev)
	for l := 1; l < maxL; l++ {
		cur := make([]float64, 0, m)
		for j := 0; j+1 < len(prev); j++ {
			lo, hi := prev[j], prev[j+1]
			flo := sphericalJ(l, lo)
			for it := 0; it < 200 && hi-lo > 0; it++ {
				mid := 0.5 * (lo + hi)
				if mid == lo || mid == hi {
					break
				}
				fm := sphericalJ(l, mid)
				if (fm < 0) == (flo < 0) {
					lo, flo = mid, fm
				} else {
					hi = mid
				}
			}
			cur = append(cur, 0.5*(lo+hi))
		}
		copy(out[l][:], cur)
		prev = cur
	}
	return out
}

// sphericalJ is j_l(x) for l ≤ 4, by Rayleigh's closed forms (as sympy
// expands them for matgl), or by the power series where those cancel.
func sphericalJ(l int, x float64) float64 {
	if x < seriesBelow {
		return sphericalJSeries(l, x)
	}
	s, c := math.Sincos(x)
	switch l {
	case 0:
		return s / x
	case 1:
		return s/(x*x) - c/x
	case 2:
		return (3/(x*x*x)-1/x)*s - 3*c/(x*x)
	case 3:
		return (15/(x*x*x*x)-6/(x*x))*s - (15/(x*x*x)-1/x)*c
	case 4:
		x2 := x * x
		return (105/(x2*x2*x)-45/(x2*x)+1/x)*s - (105/(x2*x2)-10/x2)*c
	}
	panic("m3gnet: spherical Bessel order out of range")
}

// seriesBelow is where sphericalJ switches to the series; below it the
// closed forms of j_2 lose more than about 1e-11 to cancellation.
const seriesBelow = 0.05

// sphericalJSeries is j_l(x) = x^l/(2l+1)!! · Σ_k (−x²/2)^k / (k! (2l+3)(2l+5)…(2l+2k+1)).
func sphericalJSeries(l int, x float64) float64 {
	pre := 1.0
	for k := 1; k <= l; k++ {
		pre *= x / float64(2*k+1)
	}
	sum, term := 1.0, 1.0
	for k := 1; k < 8; k++ {
		term *= -x * x / (2 * float64(k) * float64(2*l+2*k+1))
		sum += term
	}
	return pre * sum
}

// sphericalJD returns j_l(x) and its derivative, from j_0' = −j_1 and
// j_l' = j_{l−1} − (l+1) j_l / x.
func sphericalJD(l int, x float64) (j, dj float64) {
	j = sphericalJ(l, x)
	if l == 0 {
		return j, -sphericalJ(1, x)
	}
	if x < seriesBelow {
		// Differentiate the series: d/dx of x^l Σ a_k x^{2k}.
		h := 1e-6 * math.Max(x, 1e-3)
		return j, (sphericalJSeries(l, x+h) - sphericalJSeries(l, x-h)) / (2 * h)
	}
	return j, sphericalJ(l-1, x) - float64(l+1)*j/x
}

// Real spherical harmonics Y_l^0(θ) for l < 3 as functions of cos θ (matgl
// SphericalHarmonicsFunction with use_phi = false).
var (
	y00 = 0.5 / math.Sqrt(math.Pi)
	y10 = math.Sqrt(3 / (4 * math.Pi))
	y20 = math.Sqrt(5 / (16 * math.Pi))
)

// legendre writes Y_l^0(c) and dY_l^0/dc for l = 0, 1, 2.
func legendre(c float64, y, dy *[maxL]float64) {
	y[0], dy[0] = y00, 0
	y[1], dy[1] = y10*c, y10
	y[2], dy[2] = y20*(3*c*c-1), y20*6*c
}

// cosClamp bounds cos θ away from ±1 as matgl does (clamp to
// [−1 + 1e-7, 1 − 1e-7]); the derivative is zero where it clamps.
const cosClamp = 1e-7

// polyCutoff is matgl's polynomial_cutoff with exponent 3, the envelope of
// Klicpera et al. (DimeNet, arXiv:2003.03123) with p = 3:
// f(r) = 1 − 10 x³ + 15 x⁴ − 6 x⁵, x = r/r_c, for r ≤ r_c, else 0. It and
// its first two derivatives vanish at r_c. Returns f and df/dr.
func polyCutoff(r, rc float64) (f, df float64) {
	if r > rc {
		return 0, 0
	}
	x := r / rc
	x2 := x * x
	x3 := x2 * x
	f = 1 - 10*x3 + 15*x3*x - 6*x3*x2
	df = (-30*x2 + 60*x3 - 30*x3*x) / rc
	return f, df
}
