package surrogate

import (
	"errors"
	"fmt"
	"math"
)

// ErrDij reports inputs the piezoelectric strain estimate cannot use.
var ErrDij = errors.New("cannot estimate d_ij")

// IsotropicCompliance returns the elastic compliance matrix s (Voigt
// notation, engineering shear strains, 1/GPa) of an isotropic solid with
// bulk modulus K and shear modulus G (GPa): s₁₁ = 1/E, s₁₂ = −ν/E,
// s₄₄ = 1/G, with Young's modulus E = 9KG/(3K+G) and Poisson's ratio
// ν = (3K−2G)/(2(3K+G)) (Nye, Physical Properties of Crystals (1957),
// ch. VIII).
func IsotropicCompliance(K, G float64) [6][6]float64 {
	E := 9 * K * G / (3*K + G)
	nu := (3*K - 2*G) / (2 * (3*K + G))
	var s [6][6]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			if i == j {
				s[i][j] = 1 / E
			} else {
				s[i][j] = -nu / E
			}
		}
		s[i+3][i+3] = 1 / G
	}
	return s
}

// StrainCoefficients converts the piezoelectric stress tensor e (C/m²,
// 3×6 Voigt) into the strain tensor d = e·s (pC/N) with the compliance s
// (1/GPa, Voigt with engineering shear strains): d_ij = Σ_k e_ik s_kj
// (Nye ch. VII; IEEE Std 176-1987 eq. 14). 1 C/m² · 1/GPa = 1000 pC/N.
func StrainCoefficients(e [3][6]float64, s [6][6]float64) [3][6]float64 {
	var d [3][6]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 6; j++ {
			for k := 0; k < 6; k++ {
				d[i][j] += e[i][k] * s[k][j]
			}
			d[i][j] *= 1000
		}
	}
	return d
}

// maxAbs is the largest |x_ij|.
func maxAbs(d [3][6]float64) float64 {
	m := 0.0
	for _, row := range d {
		for _, v := range row {
			m = max(m, math.Abs(v))
		}
	}
	return m
}

// youngs is Young's modulus E = 9KG/(3K+G) of an isotropic solid.
func youngs(K, G float64) float64 { return 9 * K * G / (3*K + G) }

// Estimate is a value with its uncertainty (one standard deviation, or
// the 68 % half-width of a calibrated interval), in one unit.
type Estimate struct {
	Value       float64 `json:"value"`
	Uncertainty float64 `json:"uncertainty"`
}

// Calibration of EstimateDij on the 656 compounds of the piezoelectric
// set (de Jong et al. 2015) that have reference bulk and shear moduli: for
// each, d_iso is the largest |d_ij| of its full DFPT e tensor times the
// isotropic compliance of its moduli (StrainCoefficients,
// IsotropicCompliance), and r = d_iso / (1000 · eij_max / E).
// TestDijCalibration recomputes both from the data.
const (
	// DijFactor is the median of r.
	DijFactor = 3.637
	// DijLogSpread68 is the 68 % quantile of |ln(r / DijFactor)|: the
	// error of reducing the tensor product to one stiffness and one
	// coefficient.
	DijLogSpread68 = 0.772
)

// EstimateDij estimates the largest piezoelectric strain coefficient
// |d_ij| (pC/N, Voigt) from the largest longitudinal stress coefficient
// e (C/m²; piezo_max_eij, de Jong's eij_max: max over directions n of
// |e_ijk nᵢnⱼnₖ|) and the bulk and shear moduli K and G (GPa), each with
// its uncertainty:
//
//	d ≈ DijFactor · 1000 · e / E,   E = 9KG / (3K + G)  (Young's modulus).
//
// In an isotropic solid d = e·s exactly; with only the largest
// longitudinal e known, d_max = e/c up to a factor that depends on the
// shape of the tensor. Over the calibration set the scatter of that
// factor hardly depends on the stiffness c: the 68 % quantile of
// |ln(r/median r)| is 0.772 for E, 0.785 for √(EG), 0.795 for the
// longitudinal modulus K + 4G/3, 0.802 for G and 0.854 for K, while the
// ratio of the largest Voigt coefficient to eij_max alone scatters by
// 0.509. E is taken as the least scattered, and it carries both moduli.
// Its factor, 3.637, is about E/G ≈ 2.6 (the largest d of most
// piezoelectrics is a shear one, d₁₅ = e₁₅/G) times the ratio of the
// shear to the longitudinal coefficient (√3 for a zincblende crystal,
// where eij_max = e₁₄/√3).
//
// Uncertainty, to first order with independent inputs (relative errors
// add in quadrature):
//
//	(σ_d/d)² = (σ_e/e)² + (G/(3K+G) · σ_K/K)² + (3K/(3K+G) · σ_G/G)² + DijLogSpread68²,
//
// the moduli's terms being ∂ln E/∂ln K and ∂ln E/∂ln G. The last term is
// the error of the scalar reduction within the isotropic approximation;
// the anisotropy of real crystals and the soft-mode enhancement of
// ferroelectrics near a phase transition are not in it (see the
// comparison with measured d in docs). An estimate, not a d_ij computed
// from an elastic tensor.
func EstimateDij(e, K, G Estimate) (Estimate, error) {
	for _, x := range []struct {
		name string
		v    Estimate
	}{{"e", e}, {"K", K}, {"G", G}} {
		if math.IsNaN(x.v.Value) || math.IsInf(x.v.Value, 0) || math.IsNaN(x.v.Uncertainty) || math.IsInf(x.v.Uncertainty, 0) || x.v.Uncertainty < 0 {
			return Estimate{}, fmt.Errorf("%w: %s = %v ± %v", ErrDij, x.name, x.v.Value, x.v.Uncertainty)
		}
	}
	if e.Value < 0 {
		return Estimate{}, fmt.Errorf("%w: e = %v must be a magnitude", ErrDij, e.Value)
	}
	if !(K.Value > 0) || !(G.Value > 0) {
		return Estimate{}, fmt.Errorf("%w: moduli K = %v, G = %v GPa must be positive", ErrDij, K.Value, G.Value)
	}
	E := youngs(K.Value, G.Value)
	d := DijFactor * 1000 * e.Value / E
	if e.Value == 0 {
		// Zero by symmetry: nothing to propagate but e's own error.
		return Estimate{Value: 0, Uncertainty: DijFactor * 1000 * e.Uncertainty / E}, nil
	}
	re := e.Uncertainty / e.Value
	rk := G.Value / (3*K.Value + G.Value) * K.Uncertainty / K.Value
	rg := 3 * K.Value / (3*K.Value + G.Value) * G.Uncertainty / G.Value
	rel := math.Sqrt(re*re + rk*rk + rg*rg + DijLogSpread68*DijLogSpread68)
	return Estimate{Value: d, Uncertainty: d * rel}, nil
}
