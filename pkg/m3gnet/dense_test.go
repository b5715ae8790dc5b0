package m3gnet

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMulAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range [][3]int{{1, 1, 1}, {3, 9, 64}, {4, 64, 9}, {7, 64, 64}, {9, 192, 64}, {5, 64, 1}, {8, 9, 5}, {16, 64, 64}, {12, 9, 72}, {13, 64, 17}} {
		rows, in, out := sh[0], sh[1], sh[2]
		x := make([]float64, rows*in)
		m := make([]float64, in*out)
		y := make([]float64, rows*out)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		for i := range y {
			y[i] = rng.NormFloat64()
		}
		want := append([]float64(nil), y...)
		for r := 0; r < rows; r++ {
			for o := 0; o < out; o++ {
				for k := 0; k < in; k++ {
					want[r*out+o] += x[r*in+k] * m[k*out+o]
				}
			}
		}
		mulAdd(y, x, m, rows, in, out)
		for i := range y {
			if math.Abs(y[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%v: y[%d] = %v, want %v", sh, i, y[i], want[i])
			}
		}
	}
}

// mulAddRows is the plain form of mulAdd: each row of y gathers the rows
// of m weighted by that row of x.
func mulAddRows(y, x, m []float64, rows, in, out int) {
	for r := 0; r < rows; r++ {
		yr := y[r*out : r*out+out]
		for k, a := range x[r*in : r*in+in] {
			axpy(yr, m[k*out:k*out+out], a)
		}
	}
}

// BenchmarkMulAdd compares mulAdd (the assembly kernel where the processor
// has AVX2 and FMA), its portable blocked code and the plain row-by-row
// form on a bond-sized product (256 × 64 by 64 × 64), in one run.
func BenchmarkMulAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const rows, in, out = 256, 64, 64
	x := make([]float64, rows*in)
	m := make([]float64, in*out)
	y := make([]float64, rows*out)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	for i := range m {
		m[i] = rng.NormFloat64()
	}
	for _, k := range []struct {
		name string
		f    func(y, x, m []float64, rows, in, out int)
	}{{"mulAdd", mulAdd}, {"portable", func(y, x, m []float64, rows, in, out int) { mulAddCols(y, x, m, rows, in, out, 0) }}, {"rows", mulAddRows}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f(y, x, m, rows, in, out)
			}
			b.ReportMetric(2*rows*in*out*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func TestSigmoids(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	z := []float64{0, -0, 1e-300, -1e-300, 0.5, -0.5, 20, -20, 36, -36, 40, -40, 700, -700, 708, -708, 709, -709, 745, -745, 800, -800, 1e308, -1e308}
	for i := 0; i < 4000; i++ {
		z = append(z, 30*rng.NormFloat64())
	}
	z = append(z, 1, 2, 3) // a tail that is not a multiple of four
	s := make([]float64, len(z))
	sigmoids(s, z)
	worst := 0.0
	for i, x := range z {
		want := sigmoid(x)
		d := math.Abs(s[i] - want)
		if want != 0 {
			d /= want
		}
		if d > 1e-15 && math.Abs(s[i]-want) > 1e-300 {
			t.Errorf("σ(%v) = %v, want %v", x, s[i], want)
		}
		if want > 1e-290 {
			worst = math.Max(worst, d)
		}
	}
	t.Logf("largest relative difference from sigmoid (values above 1e-290): %.2g", worst)
}

func TestMulBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, sh := range [][3]int{{1, 1, 1}, {3, 9, 64}, {4, 64, 9}, {7, 64, 64}, {9, 192, 64}, {5, 64, 1}, {8, 9, 5}, {16, 64, 64}, {12, 9, 72}, {13, 64, 17}, {6, 0, 8}} {
		rows, in, out := sh[0], sh[1], sh[2]
		x := make([]float64, rows*in)
		m := make([]float64, in*out)
		b := make([]float64, out)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		for i := range m {
			m[i] = rng.NormFloat64()
		}
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for _, bias := range [][]float64{nil, b} {
			y := make([]float64, rows*out)
			for i := range y {
				y[i] = math.NaN() // overwritten
			}
			mulBias(y, x, m, bias, rows, in, out)
			for r := 0; r < rows; r++ {
				for o := 0; o < out; o++ {
					want := 0.0
					if bias != nil {
						want = bias[o]
					}
					for k := 0; k < in; k++ {
						want += x[r*in+k] * m[k*out+o]
					}
					if got := y[r*out+o]; !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))) {
						t.Fatalf("%v bias %v: y[%d][%d] = %v, want %v", sh, bias != nil, r, o, got, want)
					}
				}
			}
		}
	}
}
