package spacegroup

import (
	"fmt"
	"math"
)

// StdSite is an atom of the asymmetric unit of the standard conventional
// cell.
type StdSite struct {
	// Frac is the position in the standard cell, moved to the exact
	// position its site symmetry requires.
	Frac [3]float64
	// Type is the atom's type as given to Detect.
	Type int
	// Multiplicity is the number of atoms of its orbit in the conventional
	// cell (the Wyckoff multiplicity).
	Multiplicity int
}

// AsymmetricUnit returns one atom per orbit of the standard conventional
// cell under the operations of the standard setting, in the order of
// StdFrac. Each representative x is replaced by the mean of its images
// g(x) under the operations g that map it onto itself within the tolerance
// (its site-symmetry group): that mean is fixed by every such g exactly, so
// the operations regenerate the orbit without near-duplicates. Expanding the
// returned sites by Setting.Ops gives the standard cell back, within the
// tolerance.
func (d *Dataset) AsymmetricUnit() ([]StdSite, error) {
	pos := make([]vec3, len(d.StdFrac))
	for i := range pos {
		pos[i] = d.StdFrac[i]
	}
	std := newCell(d.StdLattice, pos, d.StdTypes)
	ops := d.Setting.Ops()
	tol := d.SymPrec
	seen := make([]bool, len(pos))
	var out []StdSite
	for i, x := range pos {
		if seen[i] {
			continue
		}
		// The site symmetry group: the operations that map atom i nearer
		// to itself than to any other atom of its type. (The standard
		// setting's exact operations can move an atom a little more than
		// the tolerance: detection matched atoms with translations refined
		// to the mean displacement.)
		var sum vec3
		n := 0
		for _, o := range ops {
			y := o.Apply(x)
			if std.nearest(y, d.StdTypes[i], 3*tol) == i {
				sum = add(sum, wrapDiff(sub(y, x)))
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: atom %d of the standard cell is not fixed by the identity", ErrNotFound, i)
		}
		var xs [3]float64
		for k := range xs {
			xs[k] = wrap01(x[k] + sum[k]/float64(n))
		}
		images := 0
		img := newCell(d.StdLattice, nil, nil)
		for _, o := range ops {
			y := o.Apply(xs)
			for k := range y {
				y[k] = wrap01(y[k])
			}
			if img.find(y, 0, 1e-6) >= 0 {
				continue
			}
			img = newCell(d.StdLattice, append(img.pos, y), append(img.types, 0))
			images++
			j := std.nearest(y, d.StdTypes[i], 3*tol)
			if j < 0 {
				return nil, fmt.Errorf("%w: atom %d of the standard cell: image %v under %v has no atom", ErrNotFound, i, y, o)
			}
			seen[j] = true
		}
		if images != len(ops)/n {
			return nil, fmt.Errorf("%w: atom %d of the standard cell: %d images but site symmetry of order %d in a group of %d", ErrNotFound, i, images, n, len(ops))
		}
		out = append(out, StdSite{Frac: xs, Type: d.StdTypes[i], Multiplicity: images})
	}
	return out, nil
}

// StdParameters returns the lengths (Å) and angles (degrees) a, b, c, α,
// β, γ of the standard conventional cell with its metric tensor G averaged
// over the point group, (1/|G|) Σ Wᵀ G W, so that the relations of the
// crystal system (a = b, right angles, γ = 120°) hold exactly.
func (d *Dataset) StdParameters() [6]float64 {
	g := matMul(d.StdLattice, transpose(d.StdLattice))
	var avg mat3
	reps := d.Setting.cosets()
	for _, o := range reps {
		w := toFloat(o.Rot)
		h := matMul(matMul(transpose(w), g), w)
		for i := range avg {
			for j := range avg[i] {
				avg[i][j] += h[i][j] / float64(len(reps))
			}
		}
	}
	var p [6]float64
	for i := 0; i < 3; i++ {
		p[i] = math.Sqrt(avg[i][i])
	}
	for k, ij := range [3][2]int{{1, 2}, {0, 2}, {0, 1}} {
		i, j := ij[0], ij[1]
		c := avg[i][j] / (p[i] * p[j])
		p[3+k] = math.Acos(math.Max(-1, math.Min(1, c))) * 180 / math.Pi
	}
	return p
}
