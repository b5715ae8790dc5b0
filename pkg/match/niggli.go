package match

import "math"

// maxReductionSteps bounds the iterations of the lattice reductions; a
// cell that needs more is degenerate beyond use.
const maxReductionSteps = 1000

// niggliEps is the relative tolerance of the Niggli conditions: ε =
// niggliEps·V^(1/3), as pymatgen's get_niggli_reduced_lattice (tol 1e-5).
const niggliEps = 1e-5

// sizeReduce shortens a basis greedily: while some vector gets shorter by
// subtracting an integer multiple of another, it does. This is the
// pairwise (Lagrange–Gauss) reduction applied to every pair, a cheap first
// step that spares the Niggli iteration thousands of small steps on a very
// skewed cell (pymatgen starts from an LLL-reduced basis for the same
// reason). t accumulates the change: rows of the result are t · m.
func sizeReduce(m mat3) (mat3, imat3) {
	t := identity
	for step := 0; step < maxReductionSteps; step++ {
		changed := false
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				if i == j {
					continue
				}
				q := math.Round(dot(m[i], m[j]) / dot(m[j], m[j]))
				if q == 0 {
					continue
				}
				v := sub(m[i], scale(q, m[j]))
				if dot(v, v) < dot(m[i], m[i])*(1-1e-12) {
					m[i] = v
					n := int(q)
					for k := 0; k < 3; k++ {
						t[i][k] -= n * t[j][k]
					}
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	return m, t
}

// niggli reduces a lattice (rows) to its Niggli cell by the algorithm of
// Křivý & Gruber (Acta Cryst. A32, 297 (1976)) with the tolerant
// comparisons of Grosse-Kunstleve, Sauter & Adams (Acta Cryst. A60, 1
// (2004)), ε = 1e-5·V^(1/3) Å², as pymatgen does. It works on the
// metric (A = a·a, B = b·b, C = c·c, ξ = 2b·c, η = 2a·c, ζ = 2a·b) and
// tracks the integer change of basis, so the reduced vectors are exact
// integer combinations of the input: rows of the result are t · m. The
// result is right-handed (all vectors negated when it is not, as pymatgen
// does). The tolerant comparisons can cycle between two cells that differ
// by less than ε (a hexagonal cell whose right angles are off by 1e-5°);
// the iteration then stops after maxReductionSteps with the current cell,
// which is reduced to within ε (pymatgen stops after 100). ok is false
// only for a lattice whose metric is not finite.
func niggli(m mat3) (mat3, imat3, bool) {
	m0 := m
	red, t := sizeReduce(m)
	vol := math.Abs(det(m0))
	if !(vol > 0) || math.IsInf(vol, 0) {
		return mat3{}, imat3{}, false
	}
	e := niggliEps * math.Cbrt(vol)
	// apply changes the basis by the columns of c: new vector k is
	// Σ_j c[j][k]·old vector j (the metric becomes cᵀ G c).
	apply := func(c imat3) {
		var nt imat3
		for k := 0; k < 3; k++ {
			for j := 0; j < 3; j++ {
				for l := 0; l < 3; l++ {
					nt[k][l] += c[j][k] * t[j][l]
				}
			}
		}
		t = nt
		red = matMul(toFloat(t), m0)
	}
	metric := func() (A, B, C, xi, eta, zeta float64) {
		return dot(red[0], red[0]), dot(red[1], red[1]), dot(red[2], red[2]),
			2 * dot(red[1], red[2]), 2 * dot(red[0], red[2]), 2 * dot(red[0], red[1])
	}
	sgn := func(x float64) int {
		if math.Abs(x) < e {
			return 0
		}
		if x > 0 {
			return 1
		}
		return -1
	}
	for step := 0; step < maxReductionSteps; step++ {
		A, B, C, xi, eta, zeta := metric()
		// N1: A ≤ B, and |ξ| ≤ |η| when A = B.
		if A > B+e || (math.Abs(A-B) < e && math.Abs(xi) > math.Abs(eta)+e) {
			apply(imat3{{0, -1, 0}, {-1, 0, 0}, {0, 0, -1}})
			A, B, C, xi, eta, zeta = metric()
		}
		// N2: B ≤ C, and |η| ≤ |ζ| when B = C.
		if B > C+e || (math.Abs(B-C) < e && math.Abs(eta) > math.Abs(zeta)+e) {
			apply(imat3{{-1, 0, 0}, {0, 0, -1}, {0, -1, 0}})
			continue
		}
		// N3/N4: the three angles all acute or all non-acute.
		l, mm, n := sgn(xi), sgn(eta), sgn(zeta)
		if l*mm*n == 1 {
			i, j, k := 1, 1, 1
			if l == -1 {
				i = -1
			}
			if mm == -1 {
				j = -1
			}
			if n == -1 {
				k = -1
			}
			apply(imat3{{i, 0, 0}, {0, j, 0}, {0, 0, k}})
		} else {
			i, j, k := 1, 1, 1
			if l == 1 {
				i = -1
			}
			if mm == 1 {
				j = -1
			}
			if n == 1 {
				k = -1
			}
			if i*j*k == -1 {
				switch {
				case n == 0:
					k = -1
				case mm == 0:
					j = -1
				case l == 0:
					i = -1
				}
			}
			apply(imat3{{i, 0, 0}, {0, j, 0}, {0, 0, k}})
		}
		A, B, C, xi, eta, zeta = metric()
		_ = C
		// N5–N8: the off-diagonal terms as small as the diagonal allows.
		sign := func(x float64) int {
			if x > 0 {
				return 1
			}
			return -1
		}
		if math.Abs(xi) > B+e || (math.Abs(xi-B) < e && 2*eta < zeta-e) || (math.Abs(xi+B) < e && zeta < -e) {
			apply(imat3{{1, 0, 0}, {0, 1, -sign(xi)}, {0, 0, 1}})
			continue
		}
		if math.Abs(eta) > A+e || (math.Abs(A-eta) < e && 2*xi < zeta-e) || (math.Abs(A+eta) < e && zeta < -e) {
			apply(imat3{{1, 0, -sign(eta)}, {0, 1, 0}, {0, 0, 1}})
			continue
		}
		if math.Abs(zeta) > A+e || (math.Abs(A-zeta) < e && 2*xi < eta-e) || (math.Abs(A+zeta) < e && eta < -e) {
			apply(imat3{{1, -sign(zeta), 0}, {0, 1, 0}, {0, 0, 1}})
			continue
		}
		if s := xi + eta + zeta + A + B; s < -e || (math.Abs(s) < e && 2*(A+eta)+zeta > e) {
			apply(imat3{{1, 0, 1}, {0, 1, 1}, {0, 0, 1}})
			continue
		}
		break
	}
	if det(red) < 0 {
		for i := range t {
			for j := range t[i] {
				t[i][j] = -t[i][j]
			}
		}
		red = matMul(toFloat(t), m0)
	}
	return red, t, true
}
