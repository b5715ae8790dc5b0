//go:build amd64 && !purego

package cgcnn

import "golang.org/x/sys/cpu"

// hasAVX2FMA reports whether the assembly kernels can run here.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAVX2FMA {
		kernelName = "AVX2/FMA assembly"
		edgeRow = edgeRowAsm
		gateSum = gateSumAsm
		softplusVec = softplusVecAsm
		matmulBias = matmulBiasAsm
		matmulLayout = panelLayout
	}
}

//go:noescape
func edgeRowAVX2(out, p, q, gs, w *float64, n, k int)

//go:noescape
func gateSumAVX2(acc, z, t *float64, n, rows int)

//go:noescape
func gemmAVX2(c, x, w, bias *float64, m, n, k int)

//go:noescape
func softplusAVX2(dst, src *float64, n int)

// The wrappers check the slices' lengths, so that the assembly never
// touches memory outside them, and leave sizes the assembly does not
// handle to the Go versions.

func edgeRowAsm(out, p, q, g, w []float64, n, k int) {
	if n <= 0 || n%4 != 0 || k < 0 {
		edgeRowGo(out, p, q, g, w, n, k)
		return
	}
	_, _, _ = out[n-1], p[n-1], q[n-1]
	var gp, wp *float64
	if k > 0 {
		_, _ = g[k-1], w[k*n-1]
		gp, wp = &g[0], &w[0]
	}
	edgeRowAVX2(&out[0], &p[0], &q[0], gp, wp, n, k)
}

func gateSumAsm(acc, z, scratch []float64, n, rows int) {
	if n <= 0 || n%4 != 0 || rows <= 0 {
		gateSumGo(acc, z, scratch, n, rows)
		return
	}
	_, _, _ = acc[n-1], z[2*n*rows-1], scratch[2*n*rows-1]
	gateSumAVX2(&acc[0], &z[0], &scratch[0], n, rows)
}

func softplusVecAsm(dst, src []float64) {
	n := len(dst) &^ 3
	if n > 0 {
		_ = src[n-1]
		softplusAVX2(&dst[0], &src[0], n)
	}
	softplusVecGo(dst[n:], src[n:len(dst)])
}

// panelLayout stores a row-major k × n matrix, n a multiple of 32, as
// n/32 consecutive k × 32 panels, so that gemmAVX2 reads each panel as one
// contiguous block (row-major rows of 2 KB would alias in L1). Other
// shapes are kept row-major, for matmulBiasGo.
func panelLayout(w []float64, k, n int) []float64 {
	if n%32 != 0 {
		return w
	}
	out := make([]float64, len(w))
	for b := 0; b < n/32; b++ {
		for t := 0; t < k; t++ {
			copy(out[b*32*k+t*32:b*32*k+t*32+32], w[t*n+b*32:t*n+b*32+32])
		}
	}
	return out
}

// matmulBiasAsm is matmulBias on weights prepared by panelLayout.
func matmulBiasAsm(c, x, w, bias []float64, m, n, k int) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	if n%32 != 0 {
		matmulBiasGo(c, x, w, bias, m, n, k)
		return
	}
	_, _, _, _ = c[m*n-1], x[m*k-1], w[k*n-1], bias[n-1]
	gemmAVX2(&c[0], &x[0], &w[0], &bias[0], m, n, k)
}
