package cgcnn

import "math"

// The inner loops of the convolution. Each has a portable Go version,
// which states the arithmetic; kernels_amd64.go replaces them with AVX2/FMA
// assembly on processors that have it. Both compute the same functions to
// a few units in the last place (kernels_test.go compares them).
var (
	kernelName  = "portable Go"
	edgeRow     = edgeRowGo
	gateSum     = gateSumGo
	softplusVec = softplusVecGo
	matmulBias  = matmulBiasGo
	// matmulLayout rearranges a row-major k × n weight matrix into the
	// layout matmulBias reads; weights are prepared with it once, at load.
	matmulLayout = func(w []float64, k, n int) []float64 { return w }
)

// Kernels names the implementation of the inner loops in use: "AVX2/FMA
// assembly", or "portable Go" on other processors (and with the purego
// build tag).
func Kernels() string { return kernelName }

// softplusThreshold is torch.nn.Softplus's default threshold: above it the
// function returns its input unchanged (torch/nn/modules/activation.py).
const softplusThreshold = 20

// softplus is torch's Softplus (β = 1, threshold 20): x for x > 20,
// otherwise log(1 + eˣ), evaluated as max(x, 0) + log1p(e^−|x|), which does
// not overflow and loses no precision for large negative x.
func softplus(x float64) float64 {
	if x > softplusThreshold {
		return x
	}
	return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
}

// sigmoid is 1/(1 + e^−x), evaluated through e^−|x| so that it neither
// overflows nor cancels.
func sigmoid(x float64) float64 {
	t := math.Exp(-math.Abs(x))
	if x < 0 {
		return t / (1 + t)
	}
	return 1 / (1 + t)
}

// edgeRowGo sets out[c] = p[c] + q[c] + Σ_{t<k} g[t]·w[t·n + c] for c < n:
// one edge's pre-activation, the atom parts p (self) and q (neighbour)
// plus the Gaussian window g times the matching rows of the edge weights.
func edgeRowGo(out, p, q, g, w []float64, n, k int) {
	out = out[:n]
	p = p[:n]
	q = q[:n]
	for c := range out {
		out[c] = p[c] + q[c]
	}
	for t := 0; t < k; t++ {
		gt := g[t]
		row := w[t*n : t*n+n]
		for c, x := range row {
			out[c] += gt * x
		}
	}
}

// gateSumGo adds, for each of rows edges, the gated message
// sigmoid(filter) ⊙ softplus(core) to acc, where row r of z holds the
// edge's filter half z[r·2n : r·2n+n] and core half z[r·2n+n : (r+1)·2n]
// (CGCNN ConvLayer: nbr_filter, nbr_core = chunk(2); sum over neighbours).
// scratch (2n·rows elements) is working space for the assembly version.
func gateSumGo(acc, z, scratch []float64, n, rows int) {
	acc = acc[:n]
	for r := 0; r < rows; r++ {
		f := z[2*r*n : 2*r*n+n]
		c := z[2*r*n+n : 2*r*n+2*n]
		for i := range acc {
			acc[i] += sigmoid(f[i]) * softplus(c[i])
		}
	}
}

// softplusVecGo sets dst[i] = softplus(src[i]).
func softplusVecGo(dst, src []float64) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = softplus(x)
	}
}
