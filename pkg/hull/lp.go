package hull

import (
	"fmt"
	"math"
)

// Tolerances. Compositions are atomic fractions in [0, 1] and formation
// energies are a few eV/atom, so rounding errors in the linear programme are
// around 1e-15 eV/atom; the tolerances sit well above that and far below any
// physically meaningful energy.
const (
	// stableTol: an entry is a vertex of the hull (stable) only if it lies
	// more than stableTol eV/atom below the hull of all the other entries.
	stableTol = 1e-10
	// priceTol: a column enters the basis only if its reduced cost is below
	// −priceTol eV/atom, so the hull energy is optimal to about that.
	priceTol = 1e-12
	// pivotTol: the smallest pivot element accepted in the ratio test.
	pivotTol = 1e-11
	// fractionTol: phases with a smaller fraction are left out of a
	// decomposition (they are degenerate basic variables at zero).
	fractionTol = 1e-9
)

// points holds the atomic fractions and energies of a diagram's entries in
// flat arrays, dim coordinates per entry.
type points struct {
	dim  int
	x    []float64 // x[j*dim+k]: atomic fraction of element k in entry j
	e    []float64 // formation energy per atom of entry j
	mask []uint64  // bit k set when entry j contains element k
}

func (p *points) coord(j, k int) float64 { return p.x[j*p.dim+k] }

// simplex solves the linear programme that defines the lower convex hull at
// a composition x (the hull of Ong et al., Chem. Mater. 20, 1798 (2008),
// written as the programme it is):
//
//	minimise   Σ_j E_j λ_j
//	subject to Σ_j x_j λ_j = x,  λ ≥ 0,
//
// over the columns j (entries with atomic-fraction vectors x_j and formation
// energies per atom E_j). Because every x_j and x sum to one, Σ_j λ_j = 1:
// λ is a decomposition by atoms, and the optimum is the hull energy at x.
// The rows are the elements present in x only: an entry containing any other
// element cannot appear with λ > 0, so the caller passes only the columns
// whose elements are a subset of x's.
//
// The method is the revised primal simplex method (Dantzig) with an explicit
// k×k basis inverse, k ≤ the number of elements. The elemental references,
// whose columns are unit vectors, are a feasible starting basis (B = I,
// λ_B = x), so no phase one is needed. Entering columns are chosen by the
// most negative reduced cost, switching to Bland's rule (Bland, Math. Oper.
// Res. 2, 103 (1977)) after a run of degenerate pivots so that the method
// cannot cycle; the leaving row by Harris's two-pass ratio test. At
// optimality the basis is refactorised from scratch (Gaussian elimination
// with partial pivoting) and optimality is checked again with the fresh
// multipliers, so the answer carries no error accumulated over pivots. The
// multipliers μ = c_B B⁻¹ are the chemical potentials of the facet that
// holds x, a dual certificate: μ·x_j ≤ E_j for every column.
type simplex struct {
	k     int
	binv  []float64 // k×k, row-major: the inverse of the basis matrix
	basis []int     // entry index of the basic column of each row
	lam   []float64 // values of the basic variables
	mu    []float64 // simplex multipliers c_B B⁻¹, one per row
	w     []float64 // B⁻¹ a_q for the entering column q
	a     []float64 // scratch: the basis matrix, for refactorisation

	// blandOnly applies Bland's rule from the first pivot instead of after
	// a run of degenerate pivots; slower, for testing that path.
	blandOnly bool
}

func (s *simplex) reset(k int) {
	s.k = k
	grow := func(v []float64, n int) []float64 {
		if cap(v) < n {
			return make([]float64, n)
		}
		v = v[:n]
		clear(v)
		return v
	}
	s.binv = grow(s.binv, k*k)
	s.a = grow(s.a, k*k)
	s.lam = grow(s.lam, k)
	s.mu = grow(s.mu, k)
	s.w = grow(s.w, k)
	if cap(s.basis) < k {
		s.basis = make([]int, k)
	}
	s.basis = s.basis[:k]
}

// solve minimises the hull programme at target (the atomic fractions of the
// elements rows, in that order) over the entries cols, starting from the
// basis start (the elemental reference of each row, which must be among
// cols). It returns the hull energy; s.basis and s.lam then hold the
// decomposition and s.mu the chemical potentials.
func (s *simplex) solve(p *points, rows []int, target []float64, cols []int, start []int) (float64, error) {
	k := len(rows)
	s.reset(k)
	copy(s.basis, start)
	for i := 0; i < k; i++ {
		s.binv[i*k+i] = 1
		s.lam[i] = target[i]
	}
	bland := s.blandOnly
	degenerate := 0
	refactors := 0
	maxIter := 100*(len(cols)+k) + 1000
	for iter := 0; ; iter++ {
		if iter > maxIter {
			return 0, fmt.Errorf("%w after %d pivots over %d entries", ErrNumerical, iter, len(cols))
		}
		s.multipliers(p)
		q := s.price(p, rows, cols, bland)
		if q < 0 {
			// Optimal with the updated inverse: refactorise and check again,
			// so that the result does not depend on the pivot history.
			if refactors == 3 {
				break
			}
			refactors++
			if !s.refactor(p, rows, target) {
				return 0, fmt.Errorf("%w: singular basis", ErrNumerical)
			}
			s.multipliers(p)
			if q = s.price(p, rows, cols, bland); q < 0 {
				break
			}
		}
		// w = B⁻¹ a_q.
		for i := 0; i < k; i++ {
			sum := 0.0
			for r := 0; r < k; r++ {
				sum += s.binv[i*k+r] * p.coord(q, rows[r])
			}
			s.w[i] = sum
		}
		r := s.ratio(bland)
		if r < 0 {
			// Impossible in exact arithmetic: the entries of w sum to 1.
			return 0, fmt.Errorf("%w: no pivot row", ErrNumerical)
		}
		theta := math.Max(s.lam[r]/s.w[r], 0)
		if theta == 0 {
			degenerate++
			if degenerate > 2*k+10 {
				bland = true
			}
		} else {
			degenerate = 0
		}
		s.pivot(r, q, theta)
	}
	h := 0.0
	for i := 0; i < k; i++ {
		h += p.e[s.basis[i]] * s.lam[i]
	}
	return h, nil
}

// multipliers sets μ = c_B B⁻¹.
func (s *simplex) multipliers(p *points) {
	k := s.k
	for r := 0; r < k; r++ {
		s.mu[r] = 0
	}
	for i := 0; i < k; i++ {
		c := p.e[s.basis[i]]
		if c == 0 {
			continue
		}
		row := s.binv[i*k : i*k+k]
		for r := 0; r < k; r++ {
			s.mu[r] += c * row[r]
		}
	}
}

// price returns the entering column: the most negative reduced cost
// E_j − μ·x_j below −priceTol (Dantzig), or with bland the first such
// column; −1 when the basis is optimal. Ties go to the earlier column, so
// the choice is deterministic.
func (s *simplex) price(p *points, rows []int, cols []int, bland bool) int {
	best, bestR := -1, -priceTol
	for _, j := range cols {
		r := p.e[j]
		base := j * p.dim
		for i, el := range rows {
			r -= s.mu[i] * p.x[base+el]
		}
		if r < bestR {
			best, bestR = j, r
			if bland {
				return best
			}
		}
	}
	return best
}

// ratio chooses the leaving row for the direction w: among rows with
// w_i > pivotTol, the smallest λ_i / w_i. Harris's two passes allow a
// violation of feasibility of 1e-12 in order to choose the largest pivot
// among nearly tied rows; under Bland's rule exact ties go to the lowest
// entry index instead.
func (s *simplex) ratio(bland bool) int {
	const slack = 1e-12
	bound := math.Inf(1)
	for i := 0; i < s.k; i++ {
		if s.w[i] > pivotTol {
			bound = math.Min(bound, (s.lam[i]+slack)/s.w[i])
		}
	}
	if math.IsInf(bound, 1) {
		return -1
	}
	if bland {
		best, bestT := -1, math.Inf(1)
		for i := 0; i < s.k; i++ {
			if s.w[i] <= pivotTol {
				continue
			}
			t := s.lam[i] / s.w[i]
			if t < bestT || (t == bestT && s.basis[i] < s.basis[best]) {
				best, bestT = i, t
			}
		}
		return best
	}
	best := -1
	for i := 0; i < s.k; i++ {
		if s.w[i] > pivotTol && s.lam[i]/s.w[i] <= bound && (best < 0 || s.w[i] > s.w[best]) {
			best = i
		}
	}
	return best
}

// pivot replaces the basic variable of row r by column q at level theta.
func (s *simplex) pivot(r, q int, theta float64) {
	k := s.k
	for i := 0; i < k; i++ {
		if i != r {
			s.lam[i] -= theta * s.w[i]
			if s.lam[i] < 0 {
				s.lam[i] = 0
			}
		}
	}
	s.lam[r] = theta
	s.basis[r] = q
	pr := s.binv[r*k : r*k+k]
	inv := 1 / s.w[r]
	for c := range pr {
		pr[c] *= inv
	}
	for i := 0; i < k; i++ {
		if i == r || s.w[i] == 0 {
			continue
		}
		f := s.w[i]
		row := s.binv[i*k : i*k+k]
		for c := range row {
			row[c] -= f * pr[c]
		}
	}
}

// refactor recomputes B⁻¹ and λ_B = B⁻¹ x from the basic columns by
// Gauss–Jordan elimination with partial pivoting. It reports false for a
// singular basis.
func (s *simplex) refactor(p *points, rows []int, target []float64) bool {
	k := s.k
	a, inv := s.a, s.binv
	for i := 0; i < k; i++ {
		for c := 0; c < k; c++ {
			a[i*k+c] = p.coord(s.basis[c], rows[i])
			inv[i*k+c] = 0
		}
		inv[i*k+i] = 1
	}
	for c := 0; c < k; c++ {
		piv := c
		for i := c + 1; i < k; i++ {
			if math.Abs(a[i*k+c]) > math.Abs(a[piv*k+c]) {
				piv = i
			}
		}
		if math.Abs(a[piv*k+c]) < 1e-14 {
			return false
		}
		if piv != c {
			for j := 0; j < k; j++ {
				a[c*k+j], a[piv*k+j] = a[piv*k+j], a[c*k+j]
				inv[c*k+j], inv[piv*k+j] = inv[piv*k+j], inv[c*k+j]
			}
		}
		f := 1 / a[c*k+c]
		for j := 0; j < k; j++ {
			a[c*k+j] *= f
			inv[c*k+j] *= f
		}
		for i := 0; i < k; i++ {
			if i == c || a[i*k+c] == 0 {
				continue
			}
			g := a[i*k+c]
			for j := 0; j < k; j++ {
				a[i*k+j] -= g * a[c*k+j]
				inv[i*k+j] -= g * inv[c*k+j]
			}
		}
	}
	// Row operations on [B | I] have turned it into [I | B⁻¹].
	for c := 0; c < k; c++ {
		sum := 0.0
		for i := 0; i < k; i++ {
			sum += inv[c*k+i] * target[i]
		}
		if sum < 0 {
			sum = 0
		}
		s.lam[c] = sum
	}
	return true
}
