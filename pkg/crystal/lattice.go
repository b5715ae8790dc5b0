package crystal

import (
	"errors"
	"fmt"
	"math"
)

// Vec3 is a 3-vector: fractional or Cartesian (Å) coordinates.
type Vec3 [3]float64

// Add returns v + w.
func (v Vec3) Add(w Vec3) Vec3 { return Vec3{v[0] + w[0], v[1] + w[1], v[2] + w[2]} }

// Sub returns v − w.
func (v Vec3) Sub(w Vec3) Vec3 { return Vec3{v[0] - w[0], v[1] - w[1], v[2] - w[2]} }

// Scale returns f·v.
func (v Vec3) Scale(f float64) Vec3 { return Vec3{f * v[0], f * v[1], f * v[2]} }

// Dot is the scalar product.
func (v Vec3) Dot(w Vec3) float64 { return v[0]*w[0] + v[1]*w[1] + v[2]*w[2] }

// Cross is the vector product v × w.
func (v Vec3) Cross(w Vec3) Vec3 {
	return Vec3{v[1]*w[2] - v[2]*w[1], v[2]*w[0] - v[0]*w[2], v[0]*w[1] - v[1]*w[0]}
}

// Norm is the Euclidean length.
func (v Vec3) Norm() float64 { return math.Sqrt(v.Dot(v)) }

// ErrBadLattice is returned for lattices that are singular, left-handed
// beyond repair, or not finite.
var ErrBadLattice = errors.New("bad lattice")

// minLatticeVolume is the smallest cell volume (Å³) accepted; anything
// smaller is a degenerate (coplanar) set of vectors.
const minLatticeVolume = 1e-6

// Lattice is a periodic cell. Its rows are the lattice vectors a, b, c in
// Cartesian coordinates (Å), as in pymatgen's Lattice.matrix: a Cartesian
// point is frac · M.
type Lattice struct {
	m   [3][3]float64
	inv [3][3]float64 // M⁻¹, so frac = cart · M⁻¹
	vol float64       // |det M|
}

// NewLattice builds a lattice from its three row vectors. The vectors must
// be finite and span a cell of positive volume; a left-handed set (negative
// determinant) is accepted, as CIF and pymatgen accept it.
func NewLattice(m [3][3]float64) (Lattice, error) {
	for i := range m {
		for j := range m[i] {
			if math.IsNaN(m[i][j]) || math.IsInf(m[i][j], 0) {
				return Lattice{}, fmt.Errorf("%w: matrix element [%d][%d] is %v", ErrBadLattice, i, j, m[i][j])
			}
		}
	}
	det := Vec3(m[0]).Dot(Vec3(m[1]).Cross(Vec3(m[2])))
	if math.IsNaN(det) || math.IsInf(det, 0) {
		return Lattice{}, fmt.Errorf("%w: cell volume overflows", ErrBadLattice)
	}
	if math.Abs(det) < minLatticeVolume {
		return Lattice{}, fmt.Errorf("%w: volume %.3g Å³ (vectors are coplanar)", ErrBadLattice, math.Abs(det))
	}
	l := Lattice{m: m, vol: math.Abs(det)}
	// Inverse by cofactors: rows of M⁻¹ᵀ are (b×c, c×a, a×b)/det.
	a, b, c := Vec3(m[0]), Vec3(m[1]), Vec3(m[2])
	bc, ca, ab := b.Cross(c), c.Cross(a), a.Cross(b)
	for i := 0; i < 3; i++ {
		l.inv[i][0] = bc[i] / det
		l.inv[i][1] = ca[i] / det
		l.inv[i][2] = ab[i] / det
	}
	return l, nil
}

// LatticeFromParameters builds a lattice from lengths (Å) and angles
// (degrees) in pymatgen's orientation (Lattice.from_parameters with
// vesta=False: c along z, a in the xz plane), so Cartesian coordinates agree
// with pymatgen's for the same CIF.
func LatticeFromParameters(a, b, c, alpha, beta, gamma float64) (Lattice, error) {
	for _, p := range []struct {
		name string
		v    float64
	}{{"a", a}, {"b", b}, {"c", c}} {
		if !(p.v > 0) || math.IsInf(p.v, 0) {
			return Lattice{}, fmt.Errorf("%w: length %s = %v must be positive", ErrBadLattice, p.name, p.v)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"alpha", alpha}, {"beta", beta}, {"gamma", gamma}} {
		if !(p.v > 0 && p.v < 180) {
			return Lattice{}, fmt.Errorf("%w: angle %s = %v must be in (0, 180) degrees", ErrBadLattice, p.name, p.v)
		}
	}
	rad := math.Pi / 180
	sa, ca := sinCos(alpha * rad)
	sb, cb := sinCos(beta * rad)
	_, cg := sinCos(gamma * rad)
	val := (float64(ca*cb) - cg) / float64(sa*sb)
	val = math.Max(-1, math.Min(1, val))
	gammaStar := math.Acos(val)
	sgs, cgs := sinCos(gammaStar)
	return NewLattice([3][3]float64{
		{a * sb, 0, a * cb},
		{float64(-b*sa) * cgs, float64(b*sa) * sgs, b * ca},
		{0, 0, c},
	})
}

// Halves of π/2: pio2Hi is the float64 nearest π/2, pio2Lo the rest
// (π/2 − pio2Hi, rounded).
const (
	pio2Hi = math.Pi / 2
	pio2Lo = 6.123233995736766e-17
)

// sinCos returns sin x and cos x for x in radians, accurate to the last bit
// near x = π/2, where a right angle's cosine is all rounding: for x in
// [π/4, π] both are evaluated at y = x − π/2, which is computed exactly up
// to one rounding (x − pio2Hi is exact there), so cos of the float64
// nearest π/2 is pio2Lo, 6.123233995736766e-17, as the C library and numpy
// give it (math.Cos gives 6.1232339957367574e-17). Cells built from their
// parameters thus have the same matrix, to the bit, as pymatgen's for the
// same CIF, which CGCNN's neighbour ties depend on (see TiesAsPymatgen).
func sinCos(x float64) (sin, cos float64) {
	if x < math.Pi/4 || x > math.Pi {
		return math.Sincos(x)
	}
	y := (x - pio2Hi) - pio2Lo
	s, c := math.Sincos(y)
	return c, -s
}

// Matrix returns the lattice vectors as rows.
func (l Lattice) Matrix() [3][3]float64 { return l.m }

// Vector returns lattice vector i (0 = a, 1 = b, 2 = c).
func (l Lattice) Vector(i int) Vec3 { return Vec3(l.m[i]) }

// Volume is the cell volume in Å³.
func (l Lattice) Volume() float64 { return l.vol }

// Parameters returns the lengths a, b, c (Å) and the angles α (between b and
// c), β (a, c), γ (a, b) in degrees.
func (l Lattice) Parameters() (a, b, c, alpha, beta, gamma float64) {
	va, vb, vc := l.Vector(0), l.Vector(1), l.Vector(2)
	a, b, c = va.Norm(), vb.Norm(), vc.Norm()
	angle := func(u, v Vec3, nu, nv float64) float64 {
		x := math.Max(-1, math.Min(1, u.Dot(v)/(nu*nv)))
		return math.Acos(x) * 180 / math.Pi
	}
	return a, b, c, angle(vb, vc, b, c), angle(va, vc, a, c), angle(va, vb, a, b)
}

// Cartesian converts fractional to Cartesian coordinates (Å).
func (l Lattice) Cartesian(f Vec3) Vec3 {
	m := &l.m
	return Vec3{
		f[0]*m[0][0] + f[1]*m[1][0] + f[2]*m[2][0],
		f[0]*m[0][1] + f[1]*m[1][1] + f[2]*m[2][1],
		f[0]*m[0][2] + f[1]*m[1][2] + f[2]*m[2][2],
	}
}

// Fractional converts Cartesian (Å) to fractional coordinates.
func (l Lattice) Fractional(c Vec3) Vec3 {
	m := &l.inv
	return Vec3{
		c[0]*m[0][0] + c[1]*m[1][0] + c[2]*m[2][0],
		c[0]*m[0][1] + c[1]*m[1][1] + c[2]*m[2][1],
		c[0]*m[0][2] + c[1]*m[1][2] + c[2]*m[2][2],
	}
}

// PlaneSpacings returns the distances between adjacent lattice planes
// spanned by (b, c), (c, a) and (a, b): V/|b×c|, V/|c×a|, V/|a×b|. A sphere
// of radius r crosses at most ⌈r/d_i⌉ cells along direction i.
func (l Lattice) PlaneSpacings() Vec3 {
	a, b, c := l.Vector(0), l.Vector(1), l.Vector(2)
	return Vec3{l.vol / b.Cross(c).Norm(), l.vol / c.Cross(a).Norm(), l.vol / a.Cross(b).Norm()}
}

// Scaled returns the lattice with every vector multiplied by f (the volume
// by f³).
func (l Lattice) Scaled(f float64) (Lattice, error) {
	var m [3][3]float64
	for i := range m {
		for j := range m[i] {
			m[i][j] = l.m[i][j] * f
		}
	}
	return NewLattice(m)
}
