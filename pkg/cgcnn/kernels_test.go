package cgcnn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulpDiff is |a − b| in units of the last place of the larger. Values
// below the smallest normal number count as 0: the assembly flushes
// e^x to 0 below x = −708.
func ulpDiff(a, b float64) float64 {
	if a == b || (math.Abs(a) < 0x1p-1022 && math.Abs(b) < 0x1p-1022) {
		return 0
	}
	scale := math.Max(math.Abs(a), math.Abs(b))
	return math.Abs(a-b) / (math.Nextafter(scale, math.Inf(1)) - scale)
}

// kernelInputs are pre-activations covering every branch of the kernels:
// both signs, the softplus threshold, the log1p branch point
// (−log(√2−1) ≈ 0.8814), the exp clamp (−708) and beyond.
func kernelInputs(rng *rand.Rand, n int) []float64 {
	special := []float64{
		0, math.Copysign(0, -1), 1e-300, -1e-300, 1e-17, -1e-17, 0.5, -0.5,
		0.881373587019543, -0.881373587019543, 0.8813735870195431, 1, -1,
		19.999999999999996, 20, 20.000000000000004, -20, 36, -36, 37, -37,
		700, -700, 707.9, -707.9, 708, -708, 709, -709, 745, -745, 800, -800, 1e10, -1e10,
	}
	x := make([]float64, n)
	for i := range x {
		switch {
		case i < len(special):
			x[i] = special[i]
		case i%3 == 0:
			x[i] = rng.NormFloat64() * 3
		case i%3 == 1:
			x[i] = (rng.Float64()*2 - 1) * 60
		default:
			x[i] = math.Copysign(math.Exp(rng.Float64()*40-30), rng.Float64()-0.5)
		}
	}
	return x
}

// TestKernelsAgree compares the kernels in use (assembly where the
// processor has it) with the portable Go versions.
func TestKernelsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxULP = 8

	t.Run("softplus", func(t *testing.T) {
		for _, n := range []int{0, 1, 3, 4, 7, 64, 1001} {
			x := kernelInputs(rng, n)
			got, want := make([]float64, n), make([]float64, n)
			softplusVec(got, x)
			softplusVecGo(want, x)
			for i := range x {
				if d := ulpDiff(got[i], want[i]); d > maxULP || math.IsNaN(got[i]) {
					t.Errorf("n=%d softplus(%v) = %v, want %v (%.1f ulp)", n, x[i], got[i], want[i], d)
				}
			}
		}
	})

	t.Run("gateSum", func(t *testing.T) {
		for _, tc := range []struct{ n, rows int }{{4, 1}, {64, 12}, {8, 3}, {6, 2}, {128, 5}} {
			z := kernelInputs(rng, 2*tc.n*tc.rows)
			// Shuffle so that every special value meets both halves.
			rng.Shuffle(len(z), func(i, j int) { z[i], z[j] = z[j], z[i] })
			got, want := make([]float64, tc.n), make([]float64, tc.n)
			for i := range got {
				got[i] = float64(i)
				want[i] = float64(i)
			}
			scratch := make([]float64, len(z))
			gateSum(got, z, scratch, tc.n, tc.rows)
			gateSumGo(want, z, scratch, tc.n, tc.rows)
			for i := range got {
				// The terms are positive, so the sum is as accurate as they are.
				if d := ulpDiff(got[i], want[i]); d > maxULP*float64(tc.rows) || math.IsNaN(got[i]) {
					t.Errorf("n=%d rows=%d column %d: %v, want %v (%.1f ulp)", tc.n, tc.rows, i, got[i], want[i], d)
				}
			}
		}
	})

	t.Run("edgeRow", func(t *testing.T) {
		for _, tc := range []struct{ n, k int }{{128, 14}, {128, 41}, {36, 3}, {4, 0}, {6, 2}, {256, 64}} {
			p, q := kernelInputs(rng, tc.n), kernelInputs(rng, tc.n)
			g, w := make([]float64, tc.k), make([]float64, tc.k*tc.n)
			for i := range g {
				g[i] = rng.Float64()
			}
			for i := range w {
				w[i] = rng.NormFloat64()
			}
			got, want := make([]float64, tc.n), make([]float64, tc.n)
			edgeRow(got, p, q, g, w, tc.n, tc.k)
			edgeRowGo(want, p, q, g, w, tc.n, tc.k)
			for i := range got {
				tol := 1e-13 * (math.Abs(p[i]) + math.Abs(q[i]) + float64(tc.k))
				if math.Abs(got[i]-want[i]) > tol || math.IsNaN(got[i]) {
					t.Errorf("n=%d k=%d column %d: %v, want %v", tc.n, tc.k, i, got[i], want[i])
				}
			}
		}
	})

	t.Run("matmulBias", func(t *testing.T) {
		for _, tc := range []struct{ m, n, k int }{{1, 64, 92}, {100, 256, 64}, {3, 32, 1}, {5, 40, 7}, {70, 256, 64}} {
			x, w, bias := make([]float64, tc.m*tc.k), make([]float64, tc.k*tc.n), make([]float64, tc.n)
			for _, s := range [][]float64{x, w, bias} {
				for i := range s {
					s[i] = rng.NormFloat64()
				}
			}
			got, want := make([]float64, tc.m*tc.n), make([]float64, tc.m*tc.n)
			matmulBias(got, x, matmulLayout(w, tc.k, tc.n), bias, tc.m, tc.n, tc.k)
			matmulBiasGo(want, x, w, bias, tc.m, tc.n, tc.k)
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-13*float64(tc.k) || math.IsNaN(got[i]) {
					t.Errorf("%d×%d×%d element %d: %v, want %v", tc.m, tc.n, tc.k, i, got[i], want[i])
				}
			}
		}
	})
}

// TestActivationsMatchDefinitions checks the portable activations against
// their definitions where those are accurate, and torch's threshold.
func TestActivationsMatchDefinitions(t *testing.T) {
	for _, x := range []float64{-30, -5, -0.3, 0, 0.3, 5, 19.9} {
		if got, want := softplus(x), math.Log1p(math.Exp(x)); ulpDiff(got, want) > 2 {
			t.Errorf("softplus(%v) = %v, want log1p(exp(x)) = %v", x, got, want)
		}
		if got, want := sigmoid(x), 1/(1+math.Exp(-x)); ulpDiff(got, want) > 2 {
			t.Errorf("sigmoid(%v) = %v, want %v", x, got, want)
		}
	}
	for _, x := range []float64{20.000000000000004, 21, 1e300} {
		if softplus(x) != x {
			t.Errorf("softplus(%v) = %v, want x above torch's threshold 20", x, softplus(x))
		}
	}
	if got := softplus(-800); got != 0 {
		t.Errorf("softplus(-800) = %v, want 0", got)
	}
	if got := sigmoid(-800); got != 0 {
		t.Errorf("sigmoid(-800) = %v, want 0", got)
	}
	if got := classOneProbability(0, 0); got != 0.5 {
		t.Errorf("classOneProbability(0, 0) = %v, want 0.5", got)
	}
	if got, want := classOneProbability(1000, -1000), 0.0; got != want {
		t.Errorf("classOneProbability(1000, −1000) = %v, want %v", got, want)
	}
}

// Kernel benchmarks on the shapes of one atom of the published models
// (A = 64, 12 neighbours, 14 Gaussians).

func BenchmarkGateSum(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	z := kernelInputs(rng, MaxNeighbors*128)
	for i := range z {
		z[i] = rng.NormFloat64() * 2
	}
	acc, scratch := make([]float64, 64), make([]float64, len(z))
	for b.Loop() {
		gateSum(acc, z, scratch, 64, MaxNeighbors)
	}
	b.ReportMetric(float64(b.N*MaxNeighbors*64)/b.Elapsed().Seconds()/1e9, "Gpairs/s")
}

func BenchmarkEdgeRow(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	p, q, out := make([]float64, 128), make([]float64, 128), make([]float64, 128)
	g, w := make([]float64, NumGaussians), make([]float64, NumGaussians*128)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for b.Loop() {
		edgeRow(out, p, q, g, w, 128, gaussWindow)
	}
	b.ReportMetric(float64(2*b.N*128*gaussWindow)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMatmulBias(b *testing.B) {
	for _, tc := range []struct {
		name   string
		f      func(c, x, w, bias []float64, m, n, k int)
		layout func(w []float64, k, n int) []float64
	}{
		{"kernel", matmulBias, matmulLayout},
		{"gonum", matmulBiasGo, func(w []float64, k, n int) []float64 { return w }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const m, n, k = 20, 256, 64
			rng := rand.New(rand.NewPCG(7, 8))
			x, w, bias, c := make([]float64, m*k), make([]float64, k*n), make([]float64, n), make([]float64, m*n)
			for _, s := range [][]float64{x, w, bias} {
				for i := range s {
					s[i] = rng.NormFloat64()
				}
			}
			w = tc.layout(w, k, n)
			for b.Loop() {
				tc.f(c, x, w, bias, m, n, k)
			}
			b.ReportMetric(float64(2*b.N*m*n*k)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
