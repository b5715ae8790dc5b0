//go:build !amd64 || purego

package m3gnet

// mulAddBlocks covers nothing where there is no assembly kernel.
func mulAddBlocks(y, x, m []float64, rows, in, out int) (doneRows, doneCols int) { return 0, 0 }

// sigmoidsFast does nothing where there is no assembly kernel.
func sigmoidsFast(s, z []float64) int { return 0 }

// mulBiasBlocks covers nothing where there is no assembly kernel.
func mulBiasBlocks(y, x, m, b []float64, rows, in, out int) (doneRows, doneCols int) { return 0, 0 }
