package m3gnet

import "math"

// The dense parts of the network: row-major matrices (one row per atom,
// bond or triple), linear layers, SiLU/sigmoid, and the gated MLPs
// forwards and backwards. Only gradients with respect to the inputs are
// needed (the weights are fixed), so the backward pass of a linear layer is
// x̄ = ȳ W.

// mulAdd accumulates y += x · m for a rows × in matrix x and an in × out
// matrix m (both row-major). On processors with AVX2 and FMA, blocks of
// 4 rows × 8 columns go to an assembly kernel (dense_amd64.s). The
// portable code accumulates blocks of 4 rows × 2 columns in registers over
// the whole inner dimension (eight sums, four elements of x and two of m:
// fourteen of the sixteen SSE registers), so that each element loaded
// serves several products and y is written once.
func mulAdd(y, x, m []float64, rows, in, out int) {
	if rows == 0 || in == 0 {
		return
	}
	y = y[:rows*out]
	x = x[:rows*in]
	m = m[:in*out]
	doneRows, doneCols := mulAddBlocks(y, x, m, rows, in, out)
	if doneCols > 0 && doneCols < out {
		// The columns the assembly left, for the rows it covered.
		mulAddCols(y, x, m, doneRows, in, out, doneCols)
	}
	mulAddCols(y[doneRows*out:], x[doneRows*in:], m, rows-doneRows, in, out, 0)
}

// mulAddCols is mulAdd for the columns from col0 on.
func mulAddCols(y, x, m []float64, rows, in, out, col0 int) {
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0 := x[r*in : r*in+in]
		x1 := x[(r+1)*in : (r+1)*in+in]
		x2 := x[(r+2)*in : (r+2)*in+in]
		x3 := x[(r+3)*in : (r+3)*in+in]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		o := col0
		for ; o+2 <= out; o += 2 {
			var c00, c01, c10, c11, c20, c21, c30, c31 float64
			p := o
			for k, a0 := range x0 {
				w := m[p : p+2]
				w0, w1 := w[0], w[1]
				a1, a2, a3 := x1[k], x2[k], x3[k]
				c00 += a0 * w0
				c01 += a0 * w1
				c10 += a1 * w0
				c11 += a1 * w1
				c20 += a2 * w0
				c21 += a2 * w1
				c30 += a3 * w0
				c31 += a3 * w1
				p += out
			}
			y[r*out+o] += c00
			y[r*out+o+1] += c01
			y[(r+1)*out+o] += c10
			y[(r+1)*out+o+1] += c11
			y[(r+2)*out+o] += c20
			y[(r+2)*out+o+1] += c21
			y[(r+3)*out+o] += c30
			y[(r+3)*out+o+1] += c31
		}
		for ; o < out; o++ {
			var c0, c1, c2, c3 float64
			p := o
			for k, a0 := range x0 {
				w := m[p]
				c0 += a0 * w
				c1 += x1[k] * w
				c2 += x2[k] * w
				c3 += x3[k] * w
				p += out
			}
			y[r*out+o] += c0
			y[(r+1)*out+o] += c1
			y[(r+2)*out+o] += c2
			y[(r+3)*out+o] += c3
		}
	}
	for ; r < rows; r++ {
		yr := y[r*out+col0 : r*out+out]
		xr := x[r*in : r*in+in]
		for k, a := range xr {
			if a == 0 {
				continue
			}
			axpy(yr, m[k*out+col0:k*out+out], a)
		}
	}
}

// mulBias sets y = x · m + b (b nil for no bias).
func mulBias(y, x, m, b []float64, rows, in, out int) {
	y = y[:rows*out]
	doneRows, doneCols := 0, 0
	if in > 0 {
		doneRows, doneCols = mulBiasBlocks(y, x[:rows*in], m[:in*out], b, rows, in, out)
	}
	// What the assembly left: the last columns of its rows, and the rows
	// after them.
	for r := 0; r < rows; r++ {
		c0 := 0
		if r < doneRows {
			c0 = doneCols
		}
		if c0 == out {
			continue
		}
		if b == nil {
			clear(y[r*out+c0 : r*out+out])
		} else {
			copy(y[r*out+c0:r*out+out], b[c0:])
		}
	}
	if in == 0 {
		return
	}
	if doneCols < out {
		mulAddCols(y, x, m, doneRows, in, out, doneCols)
	}
	mulAddCols(y[doneRows*out:], x[doneRows*in:], m, rows-doneRows, in, out, 0)
}

// axpy sets y += a·x.
func axpy(y, x []float64, a float64) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

// sigmoid is 1/(1 + e^−x), through e^−|x| so that it neither overflows nor
// cancels.
func sigmoid(x float64) float64 {
	t := math.Exp(-math.Abs(x))
	if x < 0 {
		return t / (1 + t)
	}
	return 1 / (1 + t)
}

// silu is x·σ(x) (torch.nn.SiLU, the "swish" of model.json) and dsilu its
// derivative σ(x)(1 + x(1 − σ(x))).
func silu(x float64) float64 { return x * sigmoid(x) }

func dsilu(x float64) float64 { return dsiluS(x, sigmoid(x)) }

// mlpCache keeps a gated MLP's pre-activations for the backward pass: z[k]
// of layer k and y[k] of gate k, rows × width each, and their sigmoids
// sz[k], sy[k] (silu(z) = z·σ(z)), so that the backward pass evaluates no
// exponential.
type mlpCache struct {
	z, y, sz, sy [][]float64
}

func (c *mlpCache) ensure(g *gated, rows int) {
	if c.z == nil {
		n := len(g.layers)
		c.z, c.y = make([][]float64, n), make([][]float64, n)
		c.sz, c.sy = make([][]float64, n), make([][]float64, n)
	}
	for k := range g.layers {
		c.z[k] = grow(c.z[k], rows*g.layers[k].out)
		c.y[k] = grow(c.y[k], rows*g.gates[k].out)
		c.sz[k] = grow(c.sz[k], rows*g.layers[k].out)
		c.sy[k] = grow(c.sy[k], rows*g.gates[k].out)
	}
}

// first computes the pre-activations of the first layer and gate from the
// input rows.
func (g *gated) first(c *mlpCache, in []float64, rows int) {
	l, gt := &g.layers[0], &g.gates[0]
	mulBias(c.z[0], in, l.wt, l.b, rows, l.in, l.out)
	mulBias(c.y[0], in, gt.wt, gt.b, rows, gt.in, gt.out)
}

// sigmoids fills s with σ(z): on processors with AVX2 and FMA by a
// vectorised exponential (dense_amd64.s; within a few units in the last
// place of sigmoid), otherwise and for the tail by sigmoid.
func sigmoids(s, z []float64) {
	s = s[:len(z)]
	done := sigmoidsFast(s, z)
	for i := done; i < len(z); i++ {
		s[i] = sigmoid(z[i])
	}
}

// rest runs the layers after the first from c.z[0], c.y[0] and writes the
// output, act(z_last) ⊙ σ(y_last), to out; tmp is scratch of rows × the
// widest layer.
func (g *gated) rest(c *mlpCache, out, tmp []float64, rows int) {
	n := len(g.layers)
	for k := 1; k < n; k++ {
		l, gt := &g.layers[k], &g.gates[k]
		h := tmp[:rows*l.in]
		z, sz := c.z[k-1][:rows*l.in], c.sz[k-1][:rows*l.in]
		sigmoids(sz, z)
		for i, v := range z {
			h[i] = v * sz[i]
		}
		mulBias(c.z[k], h, l.wt, l.b, rows, l.in, l.out)
		y, sy := c.y[k-1][:rows*gt.in], c.sy[k-1][:rows*gt.in]
		sigmoids(sy, y)
		for i, v := range y {
			h[i] = v * sy[i]
		}
		mulBias(c.y[k], h, gt.wt, gt.b, rows, gt.in, gt.out)
	}
	w := g.layers[n-1].out
	if g.activateLast {
		sigmoids(c.sz[n-1][:rows*w], c.z[n-1][:rows*w])
	}
	sigmoids(c.sy[n-1][:rows*w], c.y[n-1][:rows*w])
	g.output(c, out, rows)
}

// output writes act(z_last) ⊙ σ(y_last) from the cache rest filled.
func (g *gated) output(c *mlpCache, out []float64, rows int) {
	n := len(g.layers)
	w := g.layers[n-1].out
	z, sz, sy := c.z[n-1][:rows*w], c.sz[n-1][:rows*w], c.sy[n-1][:rows*w]
	out = out[:rows*w]
	for i := range out {
		a := z[i]
		if g.activateLast {
			a *= sz[i]
		}
		out[i] = a * sy[i]
	}
}

// dsiluS is the derivative of silu at z given s = σ(z): s(1 + z(1 − s)).
func dsiluS(z, s float64) float64 { return s * (1 + z*(1-s)) }

// back takes the adjoint of the output and leaves the adjoints of the first
// layer's and gate's pre-activations in gz0 and gy0 (rows × width of the
// first layer); sc holds five scratch buffers of rows × the widest layer.
func (g *gated) back(c *mlpCache, gout, gz0, gy0 []float64, sc *[5][]float64, rows int) {
	n := len(g.layers)
	pair := func(k, parity int) ([]float64, []float64) {
		if k == 0 {
			return gz0, gy0
		}
		return sc[2*parity], sc[2*parity+1]
	}
	w := g.layers[n-1].out
	z, sz, sy := c.z[n-1][:rows*w], c.sz[n-1][:rows*w], c.sy[n-1][:rows*w]
	gz, gy := pair(n-1, 0)
	gz, gy = gz[:rows*w], gy[:rows*w]
	for i, o := range gout[:rows*w] {
		s := sy[i]
		a, da := z[i], 1.0
		if g.activateLast {
			a, da = z[i]*sz[i], dsiluS(z[i], sz[i])
		}
		gz[i] = o * s * da
		gy[i] = o * a * s * (1 - s)
	}
	for k := n - 1; k >= 1; k-- {
		l, gt := &g.layers[k], &g.gates[k]
		// h_{k−1} = silu(z_{k−1}) and z_k = W_k h_{k−1} + b_k, so
		// z̄_{k−1} = (W_kᵀ z̄_k) ⊙ silu′(z_{k−1}); the same for the gates.
		dz, dy := pair(k-1, (n-k)%2)
		gh := sc[4][:rows*l.in]
		clear(gh)
		mulAdd(gh, gz, l.w, rows, l.out, l.in)
		dz = dz[:rows*l.in]
		zp, szp := c.z[k-1][:rows*l.in], c.sz[k-1][:rows*l.in]
		for i, zz := range zp {
			dz[i] = gh[i] * dsiluS(zz, szp[i])
		}
		clear(gh)
		mulAdd(gh, gy, gt.w, rows, gt.out, gt.in)
		dy = dy[:rows*gt.in]
		yp, syp := c.y[k-1][:rows*gt.in], c.sy[k-1][:rows*gt.in]
		for i, yy := range yp {
			dy[i] = gh[i] * dsiluS(yy, syp[i])
		}
		gz, gy = dz, dy
	}
}

// grow returns s with length n, reallocating only when its capacity is too
// small; the contents are not preserved.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
