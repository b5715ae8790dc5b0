package m3gnet

// DenseKernel runs the kernel of the network's 64 → 64 layers, y = x W + b
// for rows × 64 inputs (the product every gated MLP of the blocks and the
// readout evaluates), calls times, and returns the FLOPs done (two per
// multiply-add): timed by the caller, the dense part's rate alone, for
// comparison with the processor's peak.
func DenseKernel(rows, calls int) float64 {
	x := make([]float64, rows*dim)
	w := make([]float64, dim*dim)
	b := make([]float64, dim)
	y := make([]float64, rows*dim)
	for i := range x {
		x[i] = float64(i%7) * 0.1
	}
	for i := range w {
		w[i] = float64(i%5) * 0.01
	}
	for range calls {
		mulBias(y, x, w, b, rows, dim, dim)
	}
	return float64(calls) * 2 * float64(rows*dim*dim)
}
