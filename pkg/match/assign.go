package match

import "math"

// assigner solves square linear assignment problems, reusing its buffers.
type assigner struct {
	u, v, minv []float64
	p, way     []int
	used       []bool
}

// solve returns, for an n×n cost matrix stored by rows, the column
// assigned to each row so that the total cost is least. It is the
// Hungarian method in its shortest-augmenting-path form (Kuhn, Naval Res.
// Logist. Q. 2, 83 (1955); Munkres, J. SIAM 5, 32 (1957); O(n³) with the
// dual potentials of Jonker & Volgenant, Computing 38, 325 (1987)): rows
// are added one at a time, each by the cheapest path in reduced costs
// from the new row to a free column, and the potentials u, v keep every
// reduced cost c_ij − u_i − v_j non-negative and zero on the assignment.
// Costs must be finite.
func (a *assigner) solve(cost []float64, n int, out []int) {
	a.u = resize(a.u, n+1)
	a.v = resize(a.v, n+1)
	a.minv = resize(a.minv, n+1)
	a.p = resize(a.p, n+1)
	a.way = resize(a.way, n+1)
	a.used = resize(a.used, n+1)
	u, v, p, way, minv, used := a.u, a.v, a.p, a.way, a.minv, a.used
	for i := range u {
		u[i], v[i], p[i], way[i] = 0, 0, 0, 0
	}
	// Column 0 is a virtual column holding the row being added; p[j] is
	// the row (1-based) assigned to column j, 0 for none.
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta, j1 := math.Inf(1), 0
			row := cost[(i0-1)*n : i0*n]
			for j := 1; j <= n; j++ {
				if used[j] {
					continue
				}
				if cur := row[j-1] - u[i0] - v[j]; cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta, j1 = minv[j], j
				}
			}
			for j := 0; j <= n; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		// Flip the path back to the virtual column.
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	for j := 1; j <= n; j++ {
		out[p[j]-1] = j - 1
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
