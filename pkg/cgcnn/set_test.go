package cgcnn

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// TestBatchEqualsSingle: a batch gives, for every structure, exactly the
// values of evaluating it alone, and invalid structures in the batch get
// their own errors without affecting the others.
func TestBatchEqualsSingle(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t)
	structs := readGoldenCIFs(t, names)
	isolated := cubic(t, 20, []crystal.Element{crystal.MustElement("O")}, []crystal.Vec3{{0, 0, 0}})
	batch := append([]*crystal.Structure{isolated}, structs...)
	batch = append(batch[:10], append([]*crystal.Structure{nil, {}}, batch[10:]...)...)

	preds, err := set.Predict(t.Context(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(preds) != len(batch) {
		t.Fatalf("%d predictions for %d structures", len(preds), len(batch))
	}
	for i, s := range batch {
		one, err := set.Predict(t.Context(), []*crystal.Structure{s})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case (preds[i].Err == nil) != (one[0].Err == nil):
			t.Errorf("structure %d: batch error %v, single error %v", i, preds[i].Err, one[0].Err)
		case preds[i].Err != nil:
			if !errors.Is(preds[i].Err, ErrInvalidStructure) || preds[i].Values != nil {
				t.Errorf("structure %d: error %v with values %v, want an ErrInvalidStructure alone", i, preds[i].Err, preds[i].Values)
			}
		default:
			for m := range set.Models() {
				if preds[i].Values[m] != one[0].Values[m] {
					t.Errorf("structure %d model %d: batch %v, single %v", i, m, preds[i].Values[m], one[0].Values[m])
				}
			}
		}
	}
	for _, i := range []int{0, 10, 11} {
		if preds[i].Err == nil {
			t.Errorf("structure %d: no error for an invalid structure", i)
		}
	}
}

// TestModelPredictMatchesSet: Model.Predict on graphs gives the Set's
// values, and Set.Index finds the models.
func TestModelPredictMatchesSet(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t)
	structs := readGoldenCIFs(t, names)
	preds, err := set.Predict(t.Context(), structs)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeaturizer(set.AtomFeatures())
	graphs := make([]*Graph, len(structs))
	for i, s := range structs {
		graphs[i] = new(Graph)
		if err := f.Featurize(s, graphs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for m, model := range set.Models() {
		if set.Index(model.Name) != m {
			t.Errorf("Index(%q) = %d, want %d", model.Name, set.Index(model.Name), m)
		}
		ys, err := model.Predict(graphs)
		if err != nil {
			t.Fatal(err)
		}
		for i, y := range ys {
			if y != preds[i].Values[m] {
				t.Errorf("%s structure %d: Model.Predict %v, Set.Predict %v", model.Name, i, y, preds[i].Values[m])
			}
		}
	}
	if set.Index("no-such-model") != -1 {
		t.Error("Index of an unknown model is not −1")
	}
}

// TestConcurrentUse: many goroutines sharing a Set (Predict and
// PredictParallel) get the sequential results exactly.
func TestConcurrentUse(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t, mainProperties...)
	structs := readGoldenCIFs(t, names)
	want, err := set.Predict(t.Context(), structs)
	if err != nil {
		t.Fatal(err)
	}
	check := func(got []Prediction) {
		for i := range want {
			for m := range want[i].Values {
				if got[i].Err != nil || got[i].Values[m] != want[i].Values[m] {
					t.Errorf("structure %d model %d: %v (%v), want %v", i, m, got[i].Values, got[i].Err, want[i].Values)
					return
				}
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			var got []Prediction
			var err error
			if g%2 == 0 {
				got, err = set.Predict(t.Context(), structs)
			} else {
				got, err = set.PredictParallel(t.Context(), structs, 3)
			}
			if err != nil {
				t.Error(err)
				return
			}
			check(got)
		})
	}
	wg.Wait()
}

func TestPredictHonoursContext(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t, "band-gap")
	structs := readGoldenCIFs(t, names)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, workers := range []int{1, 2} {
		preds, err := set.PredictParallel(ctx, structs, workers)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("workers=%d: error %v, want context.Canceled", workers, err)
		}
		for i, p := range preds {
			if !errors.Is(p.Err, context.Canceled) {
				t.Errorf("workers=%d structure %d: %v, want context.Canceled", workers, i, p.Err)
				break
			}
		}
	}
}

// errAfter is a context whose Err is nil for its first n calls and
// context.Canceled from then on: a cancellation at a known point of a
// batch.
type errAfter struct {
	context.Context
	n atomic.Int64
}

func (c *errAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestPredictKeepsFinishedChunks: a batch cancelled after its first chunk
// keeps that chunk's predictions, as evaluated alone, and gives the rest
// the context's error.
func TestPredictKeepsFinishedChunks(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t, "band-gap")
	structs := readGoldenCIFs(t, names)[:2*ChunkSize+3]
	want, err := set.Predict(t.Context(), structs)
	if err != nil {
		t.Fatal(err)
	}
	// The first chunk asks twice: before it starts and before its one
	// model's pass.
	ctx := &errAfter{Context: t.Context()}
	ctx.n.Store(2)
	got, err := set.Predict(ctx, structs)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	for i := range structs {
		switch {
		case i < ChunkSize && (got[i].Err != nil || got[i].Values[0] != want[i].Values[0]):
			t.Errorf("structure %d of the finished chunk: %v (%v), want %v", i, got[i].Values, got[i].Err, want[i].Values)
		case i >= ChunkSize && !errors.Is(got[i].Err, context.Canceled):
			t.Errorf("structure %d after the cancellation: %v (%v), want context.Canceled", i, got[i].Values, got[i].Err)
		}
	}
}

// TestFullExpansionAgrees: evaluating with all 41 Gaussians per edge
// instead of the window changes the predictions only by rounding.
func TestFullExpansionAgrees(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t)
	structs := readGoldenCIFs(t, names)
	window, full := NewFeaturizer(set.AtomFeatures()), NewFeaturizer(set.AtomFeatures())
	full.Full = true
	var gw, gf Graph
	var ws Workspace
	for i, s := range structs {
		if err := window.Featurize(s, &gw); err != nil {
			t.Fatal(err)
		}
		if err := full.Featurize(s, &gf); err != nil {
			t.Fatal(err)
		}
		for _, m := range set.Models() {
			yw, err := m.Eval(&ws, &gw)
			if err != nil {
				t.Fatal(err)
			}
			yf, err := m.Eval(&ws, &gf)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(yw-yf) > 1e-12*math.Max(1, math.Abs(yf)) {
				t.Errorf("%s %s: window %v, full %v", names[i], m.Name, yw, yf)
			}
		}
	}
}

// TestPortableKernels runs the parity comparison with the portable Go
// kernels, as on a processor without AVX2/FMA.
func TestPortableKernels(t *testing.T) {
	saved := [...]any{edgeRow, gateSum, softplusVec, matmulBias, matmulLayout}
	edgeRow, gateSum, softplusVec, matmulBias = edgeRowGo, gateSumGo, softplusVecGo, matmulBiasGo
	matmulLayout = func(w []float64, k, n int) []float64 { return w }
	defer func() {
		edgeRow = saved[0].(func(out, p, q, g, w []float64, n, k int))
		gateSum = saved[1].(func(acc, z, scratch []float64, n, rows int))
		softplusVec = saved[2].(func(dst, src []float64))
		matmulBias = saved[3].(func(c, x, w, bias []float64, m, n, k int))
		matmulLayout = saved[4].(func(w []float64, k, n int) []float64)
	}()

	golden, names := goldenSet(t)
	set := loadTestSet(t) // weights laid out for the portable kernels
	preds, err := set.Predict(t.Context(), readGoldenCIFs(t, names))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range names {
		if golden[name].Ambiguous {
			continue
		}
		for m, model := range set.Models() {
			if d := math.Abs(preds[i].Values[m] - golden[name].Float64[model.Name]); d > parityTol || preds[i].Err != nil {
				t.Errorf("%s %s: |Δ| = %v (%v)", name, model.Name, d, preds[i].Err)
			}
		}
	}
}

// TestWorkspaceReuseDoesNotAllocate: steady-state evaluation of a featurised
// structure allocates nothing.
func TestWorkspaceReuseDoesNotAllocate(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t, mainProperties...)
	structs := readGoldenCIFs(t, names)
	f := NewFeaturizer(set.AtomFeatures())
	var g Graph
	var ws Workspace
	run := func() {
		for _, s := range structs {
			if err := f.Featurize(s, &g); err != nil {
				t.Fatal(err)
			}
			for _, m := range set.Models() {
				if _, err := m.Eval(&ws, &g); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	run() // grow the buffers to the largest structure
	if allocs := testing.AllocsPerRun(3, run); allocs != 0 {
		t.Errorf("%v allocations per pass over %d structures, want 0", allocs, len(structs))
	}
}

// TestPredictWithTieSpread: the values are PredictParallel's; Low and High
// bracket them, equal them where no tie choice exists, and are the
// extremes of the models' values over the graph's tie choices.
func TestPredictWithTieSpread(t *testing.T) {
	_, names := goldenSet(t)
	set := loadTestSet(t)
	structs := readGoldenCIFs(t, names)
	plain, err := set.PredictParallel(t.Context(), structs, 2)
	if err != nil {
		t.Fatal(err)
	}
	spread, err := set.PredictWithTieSpread(t.Context(), structs, 2)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeaturizer(set.AtomFeatures())
	var g Graph
	var ws Workspace
	withChoices := 0
	for i, p := range spread {
		if p.Err != nil || plain[i].Err != nil {
			t.Fatalf("%s: %v, %v", names[i], p.Err, plain[i].Err)
		}
		if plain[i].Low != nil || plain[i].High != nil {
			t.Errorf("%s: PredictParallel filled Low and High", names[i])
		}
		if err := f.Featurize(structs[i], &g); err != nil {
			t.Fatal(err)
		}
		if p.TiedAtoms != g.TiedAtoms() || p.TieChoices != g.TieChoices() {
			t.Errorf("%s: %d tied atoms, %d choices; the graph has %d, %d", names[i], p.TiedAtoms, p.TieChoices, g.TiedAtoms(), g.TieChoices())
		}
		if p.TieChoices > 0 {
			withChoices++
		}
		for m, model := range set.Models() {
			y := p.Values[m]
			if y != plain[i].Values[m] {
				t.Errorf("%s %s: %v with the spread, %v without", names[i], model.Name, y, plain[i].Values[m])
			}
			lo, hi := y, y
			for c := range g.TieChoices() {
				yc, err := model.EvalTieChoice(&ws, &g, c)
				if err != nil {
					t.Fatal(err)
				}
				lo, hi = min(lo, yc), max(hi, yc)
			}
			if p.Low[m] != lo || p.High[m] != hi || (p.TieChoices == 0 && (lo != y || hi != y)) {
				t.Errorf("%s %s: spread [%v, %v], want [%v, %v]", names[i], model.Name, p.Low[m], p.High[m], lo, hi)
			}
		}
	}
	if withChoices < 2 {
		t.Errorf("%d golden structures with tie choices, want the 2 perovskites at least", withChoices)
	}
	m := set.Models()[0]
	for _, c := range []int{-1, g.TieChoices()} {
		if _, err := m.EvalTieChoice(&ws, &g, c); err == nil {
			t.Errorf("tie choice %d of %d: no error", c, g.TieChoices())
		}
	}
}
