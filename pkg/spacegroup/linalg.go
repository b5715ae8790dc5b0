package spacegroup

import "math"

// Small dense 3×3 helpers. Vectors are columns unless said otherwise;
// a lattice is a matrix whose rows are the cell vectors in Cartesian Å.

type mat3 = [3][3]float64
type vec3 = [3]float64

func matMul(a, b mat3) mat3 {
	var c mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return c
}

func matVec(a mat3, v vec3) vec3 {
	return vec3{
		a[0][0]*v[0] + a[0][1]*v[1] + a[0][2]*v[2],
		a[1][0]*v[0] + a[1][1]*v[1] + a[1][2]*v[2],
		a[2][0]*v[0] + a[2][1]*v[1] + a[2][2]*v[2],
	}
}

// vecMat returns the row vector v·a.
func vecMat(v vec3, a mat3) vec3 {
	return vec3{
		v[0]*a[0][0] + v[1]*a[1][0] + v[2]*a[2][0],
		v[0]*a[0][1] + v[1]*a[1][1] + v[2]*a[2][1],
		v[0]*a[0][2] + v[1]*a[1][2] + v[2]*a[2][2],
	}
}

func transpose(a mat3) mat3 {
	var t mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			t[i][j] = a[j][i]
		}
	}
	return t
}

func det(a mat3) float64 {
	return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
		a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
}

// inverse returns a⁻¹; ok is false for a (nearly) singular matrix.
func inverse(a mat3) (mat3, bool) {
	d := det(a)
	scale := 0.0
	for i := range a {
		for j := range a[i] {
			scale = math.Max(scale, math.Abs(a[i][j]))
		}
	}
	if d == 0 || math.IsNaN(d) || math.Abs(d) < 1e-12*scale*scale*scale {
		return mat3{}, false
	}
	var inv mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			i1, i2 := (j+1)%3, (j+2)%3
			j1, j2 := (i+1)%3, (i+2)%3
			inv[i][j] = (a[i1][j1]*a[i2][j2] - a[i1][j2]*a[i2][j1]) / d
		}
	}
	return inv, true
}

func toFloat(m [3][3]int) mat3 {
	var f mat3
	for i := range m {
		for j := range m[i] {
			f[i][j] = float64(m[i][j])
		}
	}
	return f
}

// roundInt returns m rounded to integers and whether every entry was
// within eps of an integer.
func roundInt(m mat3, eps float64) ([3][3]int, bool) {
	var r [3][3]int
	for i := range m {
		for j := range m[i] {
			x := math.Round(m[i][j])
			if math.Abs(m[i][j]-x) > eps {
				return r, false
			}
			r[i][j] = int(x)
		}
	}
	return r, true
}

func imatMul(a, b [3][3]int) [3][3]int {
	var c [3][3]int
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return c
}

func imatVec(a [3][3]int, v [3]int) [3]int {
	return [3]int{
		a[0][0]*v[0] + a[0][1]*v[1] + a[0][2]*v[2],
		a[1][0]*v[0] + a[1][1]*v[1] + a[1][2]*v[2],
		a[2][0]*v[0] + a[2][1]*v[1] + a[2][2]*v[2],
	}
}

func dot(a, b vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func add(a, b vec3) vec3 { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

func sub(a, b vec3) vec3 { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

func norm(a vec3) float64 { return math.Sqrt(dot(a, a)) }

func cross(a, b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

// wrapDiff returns d with each component reduced to [-1/2, 1/2].
func wrapDiff(d vec3) vec3 {
	for i := range d {
		d[i] -= math.Round(d[i])
	}
	return d
}

// wrap01 returns x reduced to [0, 1).
func wrap01(x float64) float64 {
	x -= math.Floor(x)
	if x >= 1 {
		x = 0
	}
	return x
}
