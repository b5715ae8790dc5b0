//go:build amd64 && !purego

package m3gnet

import "golang.org/x/sys/cpu"

// hasAVX2FMA reports whether the assembly kernel can run here.
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func mulAdd4x8AVX2(y, x, m *float64, in, out int)

// mulAddBlocks does the blocks of 4 rows × 8 columns of y += x · m with
// the AVX2/FMA kernel and returns how many rows and columns it covered
// (the rest is left to the portable code); it covers nothing on processors
// without AVX2 and FMA.
func mulAddBlocks(y, x, m []float64, rows, in, out int) (doneRows, doneCols int) {
	if !hasAVX2FMA || rows < 4 || out < 8 || in == 0 {
		return 0, 0
	}
	doneRows, doneCols = rows&^3, out&^7
	// Bounds: the kernel reads x[r·in : (r+4)·in], m[0 : in·out] and
	// writes y[r·out : (r+4)·out] within the checked lengths.
	_, _, _ = y[rows*out-1], x[rows*in-1], m[in*out-1]
	for r := 0; r < doneRows; r += 4 {
		for o := 0; o < doneCols; o += 8 {
			mulAdd4x8AVX2(&y[r*out+o], &x[r*in], &m[o], in, out)
		}
	}
	return doneRows, doneCols
}

//go:noescape
func sigmoidsAVX2(dst, src *float64, n int)

// sigmoidsFast fills the first multiple of four elements of s with σ(z)
// by the AVX2 kernel and returns how many it did.
func sigmoidsFast(s, z []float64) int {
	n := len(z) &^ 3
	if !hasAVX2FMA || n == 0 {
		return 0
	}
	_ = s[n-1]
	sigmoidsAVX2(&s[0], &z[0], n)
	return n
}

//go:noescape
func mulBias4x8AVX2(y, x, m, b *float64, in, out int)

// mulBiasBlocks is mulAddBlocks for y = x · m + b (b nil for none),
// overwriting the blocks it covers.
func mulBiasBlocks(y, x, m, b []float64, rows, in, out int) (doneRows, doneCols int) {
	if !hasAVX2FMA || rows < 4 || out < 8 || in == 0 {
		return 0, 0
	}
	doneRows, doneCols = rows&^3, out&^7
	_, _, _ = y[rows*out-1], x[rows*in-1], m[in*out-1]
	var bp *float64
	if b != nil {
		_ = b[out-1]
	}
	for r := 0; r < doneRows; r += 4 {
		for o := 0; o < doneCols; o += 8 {
			if b != nil {
				bp = &b[o]
			}
			mulBias4x8AVX2(&y[r*out+o], &x[r*in], &m[o], bp, in, out)
		}
	}
	return doneRows, doneCols
}
