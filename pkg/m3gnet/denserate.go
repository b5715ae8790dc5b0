package m3gnet

import "time"

// DenseRate times the kernel of the network's 64 → 64 layers, y = x W + b
// for rows × 64 inputs (the product every gated MLP of the blocks and the
// readout evaluates), for at least d, and returns its rate in GFLOP/s
// (two FLOP per multiply-add). It measures the dense part alone, for
// comparison with the processor's peak.
func DenseRate(rows int, d time.Duration) float64 {
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
	calls := 0
	start := time.Now()
	for calls == 0 || time.Since(start) < d {
		for range 16 {
			mulBias(y, x, w, b, rows, dim, dim)
		}
		calls += 16
	}
	return float64(calls) * 2 * float64(rows*dim*dim) / time.Since(start).Seconds() / 1e9
}
