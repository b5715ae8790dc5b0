package match

import "math"

// mat3 holds three lattice vectors as rows (Å), as crystal.Lattice does:
// a Cartesian point is frac · m.
type mat3 = [3][3]float64

// vec3 is a fractional or Cartesian 3-vector.
type vec3 = [3]float64

// imat3 is an integer basis change; its rows are new vectors in the
// coordinates of the old basis.
type imat3 = [3][3]int

func dot(a, b vec3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func sub(a, b vec3) vec3 { return vec3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }

func add(a, b vec3) vec3 { return vec3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }

func scale(f float64, a vec3) vec3 { return vec3{f * a[0], f * a[1], f * a[2]} }

func cross(a, b vec3) vec3 {
	return vec3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

func norm(a vec3) float64 { return math.Sqrt(dot(a, a)) }

// rowTimes is v · m (fractional to Cartesian when m holds lattice rows).
func rowTimes(v vec3, m mat3) vec3 {
	return vec3{
		v[0]*m[0][0] + v[1]*m[1][0] + v[2]*m[2][0],
		v[0]*m[0][1] + v[1]*m[1][1] + v[2]*m[2][1],
		v[0]*m[0][2] + v[1]*m[1][2] + v[2]*m[2][2],
	}
}

func matMul(a, b mat3) mat3 {
	var c mat3
	for i := 0; i < 3; i++ {
		c[i] = rowTimes(a[i], b)
	}
	return c
}

func det(m mat3) float64 { return dot(m[0], cross(m[1], m[2])) }

// inverse returns m⁻¹ by cofactors; ok is false for a singular matrix.
func inverse(m mat3) (mat3, bool) {
	d := det(m)
	if d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return mat3{}, false
	}
	// Columns of m⁻¹ are (b×c, c×a, a×b)/det for rows a, b, c.
	bc, ca, ab := cross(m[1], m[2]), cross(m[2], m[0]), cross(m[0], m[1])
	var inv mat3
	for i := 0; i < 3; i++ {
		inv[i] = vec3{bc[i] / d, ca[i] / d, ab[i] / d}
	}
	return inv, true
}

func toFloat(t imat3) mat3 {
	var m mat3
	for i := range t {
		for j := range t[i] {
			m[i][j] = float64(t[i][j])
		}
	}
	return m
}

func imatMul(a, b imat3) imat3 {
	var c imat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c[i][j] = a[i][0]*b[0][j] + a[i][1]*b[1][j] + a[i][2]*b[2][j]
		}
	}
	return c
}

func idet(t imat3) int {
	return t[0][0]*(t[1][1]*t[2][2]-t[1][2]*t[2][1]) -
		t[0][1]*(t[1][0]*t[2][2]-t[1][2]*t[2][0]) +
		t[0][2]*(t[1][0]*t[2][1]-t[1][1]*t[2][0])
}

// unimodularInverse is the exact inverse of an integer matrix of
// determinant ±1 (its adjugate times the determinant).
func unimodularInverse(t imat3) imat3 {
	d := idet(t)
	var inv imat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			// Cofactor of t[j][i].
			r0, r1 := (j+1)%3, (j+2)%3
			c0, c1 := (i+1)%3, (i+2)%3
			inv[i][j] = d * (t[r0][c0]*t[r1][c1] - t[r0][c1]*t[r1][c0])
		}
	}
	return inv
}

var identity = imat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

// parameters returns a, b, c (Å) and α, β, γ (degrees) of lattice rows.
func parameters(m mat3) [6]float64 {
	a, b, c := norm(m[0]), norm(m[1]), norm(m[2])
	angle := func(u, v vec3, nu, nv float64) float64 {
		x := math.Max(-1, math.Min(1, dot(u, v)/(nu*nv)))
		return math.Acos(x) * 180 / math.Pi
	}
	return [6]float64{a, b, c, angle(m[1], m[2], b, c), angle(m[0], m[2], a, c), angle(m[0], m[1], a, b)}
}

// fromParameters builds lattice rows from a, b, c, α, β, γ in pymatgen's
// orientation (c along z, a in the xz plane), the orientation of
// crystal.LatticeFromParameters. Only the metric matters here.
func fromParameters(p [6]float64) mat3 {
	rad := math.Pi / 180
	sa, ca := math.Sincos(p[3] * rad)
	sb, cb := math.Sincos(p[4] * rad)
	cg := math.Cos(p[5] * rad)
	v := math.Max(-1, math.Min(1, (ca*cb-cg)/(sa*sb)))
	gs := math.Acos(v)
	sgs, cgs := math.Sincos(gs)
	return mat3{
		{p[0] * sb, 0, p[0] * cb},
		{-p[1] * sa * cgs, p[1] * sa * sgs, p[1] * ca},
		{0, 0, p[2]},
	}
}

// planeSpacings are the distances between the lattice planes spanned by
// (b, c), (c, a) and (a, b): V/|b×c|, V/|c×a|, V/|a×b|.
func planeSpacings(m mat3) vec3 {
	v := math.Abs(det(m))
	return vec3{v / norm(cross(m[1], m[2])), v / norm(cross(m[2], m[0])), v / norm(cross(m[0], m[1]))}
}

// wrap01 maps x into [0, 1).
func wrap01(x float64) float64 {
	x -= math.Floor(x)
	if x >= 1 {
		x = 0
	}
	return x
}

// wrapHalf maps each component of a fractional difference into [−½, ½].
func wrapHalf(d vec3) vec3 {
	for k := range d {
		d[k] -= math.Round(d[k])
	}
	return d
}

// shortestImage returns the shortest Cartesian vector among the periodic
// images of the fractional difference d in a reduced lattice m: the image
// nearest in fractional terms and its 26 neighbours. In a Niggli-reduced
// cell the shortest image is among them.
func shortestImage(d vec3, m mat3) (vec3, float64) {
	d = wrapHalf(d)
	base := rowTimes(d, m)
	best, bestD2 := base, dot(base, base)
	for i := -1; i <= 1; i++ {
		for j := -1; j <= 1; j++ {
			for k := -1; k <= 1; k++ {
				if i == 0 && j == 0 && k == 0 {
					continue
				}
				v := base
				for r, n := range [3]int{i, j, k} {
					if n != 0 {
						f := float64(n)
						v[0] += f * m[r][0]
						v[1] += f * m[r][1]
						v[2] += f * m[r][2]
					}
				}
				if d2 := dot(v, v); d2 < bestD2 {
					best, bestD2 = v, d2
				}
			}
		}
	}
	return best, bestD2
}
