package spacegroup

import (
	"fmt"
	"math"
	"sort"
	"sync"
)

// rotation order of a proper rotation from its trace (ITA Table 1.2.2.1).
var orderByTrace = map[int]int{3: 1, -1: 2, 0: 3, 1: 4, 2: 6}

// proper returns det(W)·W, the rotation part of W without the inversion,
// and its order.
func proper(w [3][3]int) ([3][3]int, int) {
	d := det3(w)
	var q [3][3]int
	for i := range w {
		for j := range w[i] {
			q[i][j] = d * w[i][j]
		}
	}
	return q, orderByTrace[q[0][0]+q[1][1]+q[2][2]]
}

// axisOf returns the shortest lattice vector along the axis of a proper
// rotation q of order > 1: the integer kernel of q − I, first non-zero
// entry positive.
func axisOf(q [3][3]int) [3]int {
	var m [3][3]int
	for i := range q {
		for j := range q[i] {
			m[i][j] = q[i][j]
		}
		m[i][i]--
	}
	for _, p := range [3][2]int{{0, 1}, {0, 2}, {1, 2}} {
		a, b := m[p[0]], m[p[1]]
		v := [3]int{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
		if v == [3]int{} {
			continue
		}
		g := gcd(gcd(v[0], v[1]), v[2])
		for k := range v {
			v[k] /= g
		}
		for k := range v {
			if v[k] != 0 {
				if v[k] < 0 {
					v = [3]int{-v[0], -v[1], -v[2]}
				}
				break
			}
		}
		return v
	}
	return [3]int{}
}

// planeNormal returns the integer covector h whose kernel {v: h·v = 0} is
// the lattice plane perpendicular to the axis of q (order n): the rows of
// Σ q^k, which sends perpendicular vectors to zero and has rank one.
func planeNormal(q [3][3]int, n int) [3]int {
	var s, p [3][3]int
	p = Identity.Rot
	for k := 0; k < n; k++ {
		for i := range s {
			for j := range s[i] {
				s[i][j] += p[i][j]
			}
		}
		p = imatMul(q, p)
	}
	for _, row := range s {
		if row != [3]int{} {
			g := gcd(gcd(row[0], row[1]), row[2])
			return [3]int{row[0] / g, row[1] / g, row[2] / g}
		}
	}
	return [3]int{}
}

// shortestInPlane returns the two shortest non-parallel lattice vectors
// with h·v = 0 (a basis of that 2-D lattice: in two dimensions the
// successive minima form a basis), searched among coefficients −3…3 of a
// reduced cell.
func shortestInPlane(h [3]int, lat mat3) ([3]int, [3]int, bool) {
	type cand struct {
		v [3]int
		l float64
	}
	var cs []cand
	for x := -3; x <= 3; x++ {
		for y := -3; y <= 3; y++ {
			for z := -3; z <= 3; z++ {
				v := [3]int{x, y, z}
				if v == [3]int{} || h[0]*x+h[1]*y+h[2]*z != 0 {
					continue
				}
				c := vecMat(vec3{float64(x), float64(y), float64(z)}, lat)
				cs = append(cs, cand{v, dot(c, c)})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].l < cs[j].l })
	if len(cs) == 0 {
		return [3]int{}, [3]int{}, false
	}
	a := cs[0].v
	for _, c := range cs[1:] {
		b := c.v
		if a[1]*b[2]-a[2]*b[1] != 0 || a[2]*b[0]-a[0]*b[2] != 0 || a[0]*b[1]-a[1]*b[0] != 0 {
			return a, b, true
		}
	}
	return [3]int{}, [3]int{}, false
}

// crystalSystem classifies the point group by its rotation axes.
func crystalSystem(ops []primOp) string {
	count := map[int]int{}
	for _, o := range ops {
		_, n := proper(o.rot)
		count[n]++
	}
	switch {
	case count[3] >= 8:
		return "cubic"
	case count[6] > 0 || count[3] > 0:
		return "hexagonal"
	case count[4] > 0:
		return "tetragonal"
	case count[2] >= 3:
		return "orthorhombic"
	case count[2] >= 1:
		return "monoclinic"
	}
	return "triclinic"
}

// axesOfOrder returns the distinct axes of the proper parts of order n.
func axesOfOrder(ops []primOp, n int) ([][3]int, [][3][3]int) {
	var axes [][3]int
	var rots [][3][3]int
	for _, o := range ops {
		q, k := proper(o.rot)
		if k != n {
			continue
		}
		a := axisOf(q)
		dup := false
		for _, b := range axes {
			if a == b {
				dup = true
			}
		}
		if !dup {
			axes = append(axes, a)
			rots = append(rots, q)
		}
	}
	return axes, rots
}

// basisOf returns the matrix with columns a, b, c.
func basisOf(a, b, c [3]int) [3][3]int {
	return [3][3]int{{a[0], b[0], c[0]}, {a[1], b[1], c[1]}, {a[2], b[2], c[2]}}
}

func neg(v [3]int) [3]int { return [3]int{-v[0], -v[1], -v[2]} }

// signedPermutations returns the right-handed bases made of ±u1, ±u2,
// ±u3 in every order.
func signedPermutations(u [3][3]int) [][3][3]int {
	var out [][3][3]int
	for _, p := range [6][3]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {1, 0, 2}, {0, 2, 1}, {2, 1, 0}} {
		for s := 0; s < 8; s++ {
			v := [3][3]int{u[p[0]], u[p[1]], u[p[2]]}
			for k := 0; k < 3; k++ {
				if s&(1<<k) != 0 {
					v[k] = neg(v[k])
				}
			}
			b := basisOf(v[0], v[1], v[2])
			if det3(b) > 0 {
				out = append(out, b)
			}
		}
	}
	return out
}

// conventionalBases returns candidate conventional bases (columns, in
// reduced-primitive coordinates) for the crystal system: the cell vectors
// along the symmetry axes, and in the plane perpendicular to the principal
// axis the shortest lattice vectors, in the orders and orientations among
// which one matches the standard setting.
func conventionalBases(ops []primOp, lat mat3, sys string) [][3][3]int {
	switch sys {
	case "triclinic":
		return [][3][3]int{Identity.Rot}
	case "monoclinic":
		axes, rots := axesOfOrder(ops, 2)
		b := axes[0]
		a1, a2, ok := shortestInPlane(planeNormal(rots[0], 2), lat)
		if !ok {
			return nil
		}
		sum, diff := [3]int{a1[0] + a2[0], a1[1] + a2[1], a1[2] + a2[2]}, [3]int{a1[0] - a2[0], a1[1] - a2[1], a1[2] - a2[2]}
		l := func(v [3]int) float64 {
			c := vecMat(vec3{float64(v[0]), float64(v[1]), float64(v[2])}, lat)
			return dot(c, c)
		}
		a3 := sum
		if l(diff) < l(sum) {
			a3 = diff
		}
		in := [3][3]int{a1, a2, a3}
		var out [][3][3]int
		for _, p := range [6][2]int{{0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 2}, {2, 1}} {
			m := basisOf(in[p[0]], b, in[p[1]])
			if det3(m) < 0 {
				m = basisOf(in[p[0]], neg(b), in[p[1]])
			}
			out = append(out, m)
		}
		return out
	case "orthorhombic":
		axes, _ := axesOfOrder(ops, 2)
		if len(axes) != 3 {
			return nil
		}
		return signedPermutations([3][3]int{axes[0], axes[1], axes[2]})
	case "tetragonal":
		axes, rots := axesOfOrder(ops, 4)
		c := axes[0]
		a, _, ok := shortestInPlane(planeNormal(rots[0], 4), lat)
		if !ok {
			return nil
		}
		b := imatVec(rots[0], a)
		var out [][3][3]int
		for _, m := range signedPermutations([3][3]int{a, b, c}) {
			if [3]int{m[0][2], m[1][2], m[2][2]} == c || [3]int{m[0][2], m[1][2], m[2][2]} == neg(c) {
				out = append(out, m)
			}
		}
		return out
	case "hexagonal":
		axes, rots := axesOfOrder(ops, 6)
		if len(axes) == 0 {
			axes, rots = axesOfOrder(ops, 3)
		}
		c, q := axes[0], rots[0]
		n := 3
		if _, k := proper(q); k == 6 {
			q, n = imatMul(q, q), 6
		}
		a, _, ok := shortestInPlane(planeNormal(rots[0], n), lat)
		if !ok {
			return nil
		}
		b := imatVec(q, a) // 120° from a
		if det3(basisOf(a, b, c)) < 0 {
			c = neg(c)
		}
		return [][3][3]int{basisOf(a, b, c), basisOf(neg(a), neg(b), c), basisOf(b, a, neg(c)), basisOf(neg(b), neg(a), neg(c))}
	case "cubic":
		axes, _ := axesOfOrder(ops, 4)
		if len(axes) != 3 {
			axes, _ = axesOfOrder(ops, 2)
		}
		if len(axes) != 3 {
			return nil
		}
		return signedPermutations([3][3]int{axes[0], axes[1], axes[2]})
	}
	return nil
}

// rotationKey is the multiset of rotation types (det, trace) of a point
// group: groups with the same key have the same crystal class.
type rotationKey [2][7]int

func keyOf(rots [][3][3]int) rotationKey {
	var k rotationKey
	for _, r := range rots {
		d := det3(r)
		tr := r[0][0] + r[1][1] + r[2][2]
		idx := 0
		if d < 0 {
			idx = 1
		}
		k[idx][tr+3]++
	}
	return k
}

var (
	classOnce sync.Once
	byClass   map[rotationKey][]*Setting
)

// candidates returns the standard settings whose point group has the
// rotation types of ops.
func candidates(ops []primOp) []*Setting {
	classOnce.Do(func() {
		// The class of each type from its point group: the closure of the
		// Hall generators' rotations (no translations needed, so the 230
		// groups are not generated here).
		byClass = map[rotationKey][]*Setting{}
		for n := 1; n <= 230; n++ {
			s, _ := ByNumber(n)
			h, err := parseHallGenerators(s.Hall)
			if err != nil {
				panic(fmt.Sprintf("spacegroup: tabulated Hall symbol %q: %v", s.Hall, err))
			}
			k := keyOf(closeRotations(h))
			byClass[k] = append(byClass[k], s)
		}
	})
	rots := make([][3][3]int, len(ops))
	for i, o := range ops {
		rots[i] = o.rot
	}
	return byClass[keyOf(rots)]
}

// matchSetting checks whether ops (reduced primitive cell) are setting s
// in the conventional basis p (columns, primitive coordinates), up to an
// origin shift, and returns the shift o (primitive coordinates: the
// standard coordinates are p⁻¹(x + o)). The setting's operations are
// carried to the primitive basis, (P W P⁻¹, P w); the shift solves
// (W − I)·o ≡ t − w (mod 1) for every operation: three independent rows
// of the stacked W − I (completed by unit rows along polar axes, where the
// origin is free) give a matrix B, and o = B⁻¹(d + k) for k in a complete
// set of residues of Z³/BZ³; each candidate is accepted when every
// operation then agrees within tol Å.
func matchSetting(ops []primOp, p [3][3]int, s *Setting, lat mat3, tol float64) (vec3, bool) {
	reps := s.cosets()
	if det3(p) != len(s.Centring())+1 || len(ops) != len(reps) {
		return vec3{}, false
	}
	pf := toFloat(p)
	pinv, ok := inverse(pf)
	if !ok {
		return vec3{}, false
	}
	for _, c := range s.Centring() {
		v := matVec(pf, vec3{float64(c[0]) / Den, float64(c[1]) / Den, float64(c[2]) / Den})
		for _, x := range v {
			if math.Abs(x-math.Round(x)) > 1e-9 {
				return vec3{}, false
			}
		}
	}
	db := make(map[[3][3]int]vec3, len(ops))
	for _, o := range reps {
		w, ok := roundInt(matMul(matMul(pf, toFloat(o.Rot)), pinv), 1e-9)
		if !ok {
			return vec3{}, false
		}
		db[w] = matVec(pf, o.T())
	}
	// Stack W − I and d = t − w.
	type row struct {
		a [3]int
		d float64
	}
	var rows []row
	for _, o := range ops {
		w, ok := db[o.rot]
		if !ok {
			return vec3{}, false
		}
		for i := 0; i < 3; i++ {
			r := row{a: o.rot[i], d: o.trans[i] - w[i]}
			r.a[i]--
			if r.a != [3]int{} {
				rows = append(rows, r)
			}
		}
	}
	var b [3][3]int
	var d vec3
	n := 0
	for _, r := range rows {
		if n == 3 {
			break
		}
		if independent(b, n, r.a) {
			b[n], d[n] = r.a, r.d
			n++
		}
	}
	for _, e := range [3][3]int{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}} {
		if n == 3 {
			break
		}
		if independent(b, n, e) {
			b[n], d[n] = e, 0
			n++
		}
	}
	bf := toFloat(b)
	binv, ok := inverse(bf)
	if !ok {
		return vec3{}, false
	}
	// The classes of Z³/BZ³ are sums of multiples of e1, e2, e3, each
	// taken up to its order there (the least m with m·B⁻¹e_i integral).
	var order [3]int
	for i := 0; i < 3; i++ {
		order[i] = 1
		for ; order[i] < 64; order[i]++ {
			integral := true
			for r := 0; r < 3; r++ {
				x := float64(order[i]) * binv[r][i]
				if math.Abs(x-math.Round(x)) > 1e-9 {
					integral = false
					break
				}
			}
			if integral {
				break
			}
		}
	}
	for k0 := 0; k0 < order[0]; k0++ {
		for k1 := 0; k1 < order[1]; k1++ {
			for k2 := 0; k2 < order[2]; k2++ {
				o := matVec(binv, vec3{d[0] + float64(k0), d[1] + float64(k1), d[2] + float64(k2)})
				for i := range o {
					o[i] = wrap01(o[i])
				}
				if shiftFits(ops, db, o, lat, tol) {
					return o, true
				}
			}
		}
	}
	return vec3{}, false
}

// independent reports whether v is linearly independent of the first n
// rows of b.
func independent(b [3][3]int, n int, v [3]int) bool {
	switch n {
	case 0:
		return v != [3]int{}
	case 1:
		a := b[0]
		return a[1]*v[2]-a[2]*v[1] != 0 || a[2]*v[0]-a[0]*v[2] != 0 || a[0]*v[1]-a[1]*v[0] != 0
	case 2:
		return det3([3][3]int{b[0], b[1], v}) != 0
	}
	return false
}

// shiftFits checks t − w − (W − I)·o ≡ 0 within tol Å for every operation.
func shiftFits(ops []primOp, db map[[3][3]int]vec3, o vec3, lat mat3, tol float64) bool {
	for _, op := range ops {
		w := db[op.rot]
		wo := matVec(toFloat(op.rot), o)
		var r vec3
		for i := range r {
			r[i] = op.trans[i] - w[i] - (wo[i] - o[i])
		}
		c := vecMat(wrapDiff(r), lat)
		if dot(c, c) > tol*tol {
			return false
		}
	}
	return true
}

// buildDataset assembles the result: the operations of the input cell,
// the transformation to the standard cell and the standard cell's atoms.
func buildDataset(in *cell, prim *cell, trans []vec3, ops []primOp, m, minv, redLat mat3,
	basis [3][3]int, o vec3, s *Setting, tol, ang float64) *Dataset {
	ds := &Dataset{
		Number: s.Number, Symbol: s.Short, Setting: s, HallNumber: s.HallNumber, Hall: s.Hall, Choice: s.Choice,
		SymPrec: tol, AngleTolerance: ang, PrimitiveLattice: redLat,
	}
	pf := toFloat(basis)
	pinv, _ := inverse(pf)
	// x_s = P⁻¹(M⁻¹x + o).
	ds.Transformation = matMul(pinv, minv)
	ds.OriginShift = matVec(pinv, o)
	for k := range ds.OriginShift {
		ds.OriginShift[k] = wrap01(ds.OriginShift[k])
	}
	ds.StdLattice = matMul(transpose(matMul(m, pf)), in.lat)
	// Operations of the input cell: M W M⁻¹, M t, with each pure
	// translation.
	for _, op := range ops {
		w, ok := roundInt(matMul(matMul(m, toFloat(op.rot)), minv), 1e-6)
		if !ok {
			continue // not a symmetry of the input cell's lattice
		}
		t := matVec(m, op.trans)
		for _, tr := range trans {
			var x vec3
			for k := range x {
				x[k] = wrap01(t[k] + tr[k])
			}
			ds.Operations = append(ds.Operations, Operation{Rot: w, Trans: x})
		}
	}
	// The standard conventional cell: every primitive atom, shifted and
	// carried to the standard basis, with each centring translation.
	cents := append([][3]int{{0, 0, 0}}, s.Centring()...)
	for i, x := range prim.pos {
		xs := matVec(pinv, add(x, o))
		for _, c := range cents {
			var y [3]float64
			for k := range y {
				y[k] = wrap01(xs[k] + float64(c[k])/Den)
			}
			ds.StdFrac = append(ds.StdFrac, y)
			ds.StdTypes = append(ds.StdTypes, prim.types[i])
		}
	}
	// Orbits: input atom i and j are equivalent when an operation maps
	// one onto the other.
	ds.Equivalent = make([]int, len(in.pos))
	for i := range ds.Equivalent {
		ds.Equivalent[i] = -1
	}
	for i := range in.pos {
		if ds.Equivalent[i] >= 0 {
			continue
		}
		ds.Equivalent[i] = i
		for _, op := range ds.Operations {
			y := add(matVec(toFloat(op.Rot), in.pos[i]), op.Trans)
			if j := in.find(y, in.types[i], tol); j >= 0 && ds.Equivalent[j] < 0 {
				ds.Equivalent[j] = i
			}
		}
	}
	return ds
}

// String summarises the dataset: "Fm-3m (225)".
func (d *Dataset) String() string { return fmt.Sprintf("%s (%d)", d.Symbol, d.Number) }

// closeRotations returns the point group generated by the rotations of
// gens.
func closeRotations(gens []Op) [][3][3]int {
	group := [][3][3]int{Identity.Rot}
	seen := map[[3][3]int]bool{Identity.Rot: true}
	for i := 0; i < len(group); i++ {
		for _, g := range gens {
			if p := imatMul(group[i], g.Rot); !seen[p] {
				seen[p] = true
				group = append(group, p)
			}
		}
	}
	return group
}
