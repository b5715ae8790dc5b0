package relax

import "math"

// mat3 is a 3×3 matrix, row-major.
type mat3 = [3][3]float64

func mul3(a, b mat3) mat3 {
	var c mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}

func transpose3(a mat3) mat3 {
	var t mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			t[i][j] = a[j][i]
		}
	}
	return t
}

// inv3 is the inverse by cofactors; ok is false for a singular matrix.
func inv3(a mat3) (inv mat3, ok bool) {
	det := a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
		a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return inv, false
	}
	inv[0][0] = (a[1][1]*a[2][2] - a[1][2]*a[2][1]) / det
	inv[0][1] = (a[0][2]*a[2][1] - a[0][1]*a[2][2]) / det
	inv[0][2] = (a[0][1]*a[1][2] - a[0][2]*a[1][1]) / det
	inv[1][0] = (a[1][2]*a[2][0] - a[1][0]*a[2][2]) / det
	inv[1][1] = (a[0][0]*a[2][2] - a[0][2]*a[2][0]) / det
	inv[1][2] = (a[0][2]*a[1][0] - a[0][0]*a[1][2]) / det
	inv[2][0] = (a[1][0]*a[2][1] - a[1][1]*a[2][0]) / det
	inv[2][1] = (a[0][1]*a[2][0] - a[0][0]*a[2][1]) / det
	inv[2][2] = (a[0][0]*a[1][1] - a[0][1]*a[1][0]) / det
	return inv, true
}

// expm is the exponential of an n×n matrix (row-major) by scaling and
// squaring (Higham, "Functions of Matrices", SIAM 2008, §10.3): the matrix
// is halved s times until its 1-norm is below 1/2, its Taylor series summed
// to 24 terms (truncation below 1e-30 there), and the result squared s
// times. The matrices here are the 3×3 logarithm of a cell's deformation
// and the 6×6 block matrix of a Fréchet derivative, small and of small
// norm, for which this is accurate to rounding.
func expm(a []float64, n int) []float64 {
	norm := 0.0
	for j := 0; j < n; j++ {
		col := 0.0
		for i := 0; i < n; i++ {
			col += math.Abs(a[i*n+j])
		}
		norm = math.Max(norm, col)
	}
	s := 0
	if norm > 0.5 {
		s = int(math.Ceil(math.Log2(norm / 0.5)))
	}
	scale := math.Ldexp(1, -s)
	x := make([]float64, n*n)
	for i := range x {
		x[i] = a[i] * scale
	}
	sum := make([]float64, n*n)
	term := make([]float64, n*n)
	tmp := make([]float64, n*n)
	for i := 0; i < n; i++ {
		sum[i*n+i] = 1
		term[i*n+i] = 1
	}
	for k := 1; k <= 24; k++ {
		matmul(tmp, term, x, n)
		for i := range term {
			term[i] = tmp[i] / float64(k)
			sum[i] += term[i]
		}
	}
	for ; s > 0; s-- {
		matmul(tmp, sum, sum, n)
		copy(sum, tmp)
	}
	return sum
}

func matmul(c, a, b []float64, n int) {
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := 0.0
			for k := 0; k < n; k++ {
				v += a[i*n+k] * b[k*n+j]
			}
			c[i*n+j] = v
		}
	}
}

// expm3 is the exponential of a 3×3 matrix.
func expm3(a mat3) mat3 {
	var in [9]float64
	for i := 0; i < 3; i++ {
		copy(in[3*i:], a[i][:])
	}
	flat := expm(in[:], 3)
	var out mat3
	for i := 0; i < 3; i++ {
		copy(out[i][:], flat[3*i:3*i+3])
	}
	return out
}

// expmFrechet is L(A, E), the Fréchet derivative of the matrix exponential
// at A in the direction E: the upper right block of exp([[A, E], [0, A]])
// (Higham 2008, Eq. 10.43; Mathias 1996).
func expmFrechet(a, e mat3) mat3 {
	var b [36]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			b[i*6+j] = a[i][j]
			b[(i+3)*6+j+3] = a[i][j]
			b[i*6+j+3] = e[i][j]
		}
	}
	x := expm(b[:], 6)
	var out mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			out[i][j] = x[i*6+j+3]
		}
	}
	return out
}
