package cgcnn

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// mainProperties are the four checkpoints the evaluator scores with.
var mainProperties = []string{"formation-energy-per-atom", "band-gap", "bulk-moduli", "shear-moduli"}

// BenchmarkFeaturize: neighbour search and Gaussian expansion of the 51
// golden structures (one op = all of them).
func BenchmarkFeaturize(b *testing.B) {
	_, names := goldenSet(b)
	structs := readGoldenCIFs(b, names)
	atoms, err := LoadAtomFeatures(testbed.DataPath(b, "models", "cgcnn", AtomInitFile))
	if err != nil {
		b.Fatal(err)
	}
	f := NewFeaturizer(atoms)
	var g Graph
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range structs {
			if err := f.Featurize(s, &g); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(structs))/b.Elapsed().Seconds(), "structures/s")
}

// BenchmarkForward: one model on the 51 featurised golden structures.
func BenchmarkForward(b *testing.B) {
	_, names := goldenSet(b)
	structs := readGoldenCIFs(b, names)
	set := loadTestSet(b, "band-gap")
	f := NewFeaturizer(set.AtomFeatures())
	graphs := make([]*Graph, len(structs))
	atoms := 0
	for i, s := range structs {
		graphs[i] = new(Graph)
		if err := f.Featurize(s, graphs[i]); err != nil {
			b.Fatal(err)
		}
		atoms += graphs[i].NumAtoms()
	}
	m := set.Models()[0]
	var ws Workspace
	b.ReportAllocs()
	for b.Loop() {
		for _, g := range graphs {
			if _, err := m.Eval(&ws, g); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(structs))/b.Elapsed().Seconds(), "structures/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*atoms), "µs/atom")
}

// BenchmarkPredictCIF: the evaluator's path, CIF file → the four main
// properties, for the 51 golden structures, in one goroutine.
func BenchmarkPredictCIF(b *testing.B) {
	_, names := goldenSet(b)
	dir := testbed.DataPath(b, "golden", "cgcnn", "cifs")
	set := loadTestSet(b, mainProperties...)
	structs := make([]*crystal.Structure, len(names))
	b.ReportAllocs()
	for b.Loop() {
		for i, name := range names {
			s, err := crystal.ReadFile(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			structs[i] = s
		}
		preds, err := set.Predict(b.Context(), structs)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range preds {
			if p.Err != nil {
				b.Fatal(p.Err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(names))/b.Elapsed().Seconds(), "structures/s")
}

// BenchmarkSetPredict: the four main properties of the 51 golden
// structures, already read, as one batch (one op = the batch); allocs/op
// are those of a whole batch.
func BenchmarkSetPredict(b *testing.B) {
	_, names := goldenSet(b)
	structs := readGoldenCIFs(b, names)
	set := loadTestSet(b, mainProperties...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := set.Predict(b.Context(), structs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(structs))/b.Elapsed().Seconds(), "structures/s")
}

// BenchmarkSetPredictParallel: as BenchmarkSetPredict, spread over
// GOMAXPROCS goroutines.
func BenchmarkSetPredictParallel(b *testing.B) {
	_, names := goldenSet(b)
	structs := readGoldenCIFs(b, names)
	set := loadTestSet(b, mainProperties...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := set.PredictParallel(b.Context(), structs, runtime.GOMAXPROCS(0)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(structs))/b.Elapsed().Seconds(), "structures/s")
}

// benchPrototypes are small prototype structures like a campaign's
// candidates (2 to 14 atoms; the evaluator's batch of 16).
var benchPrototypes = []struct{ proto, formula string }{
	{"rocksalt", "NaCl"}, {"rocksalt", "MgO"}, {"perovskite", "BaZrO3"}, {"perovskite", "SrTiO3"},
	{"wurtzite", "ZnO"}, {"wurtzite", "GaN"}, {"zincblende", "GaAs"}, {"zincblende", "ZnS"},
	{"rutile", "SnO2"}, {"rutile", "TiO2"}, {"spinel", "MgAl2O4"}, {"spinel", "ZnGa2O4"},
	{"fluorite", "CaF2"}, {"cscl", "CsCl"}, {"corundum", "Al2O3"}, {"nafeo2", "LiCoO2"},
}

// BenchmarkSetPredictTieSpread: all seven surrogates on the prototype
// batch of BenchmarkSetPredictOrder and on the golden structures, in one
// goroutine, with Predict and with PredictWithTieSpread (which evaluates
// the perovskites, whose tied neighbours are of two elements, under 3
// more tie choices each).
func BenchmarkSetPredictTieSpread(b *testing.B) {
	_, names := goldenSet(b)
	small := make([]*crystal.Structure, len(benchPrototypes))
	for i, p := range benchPrototypes {
		small[i] = crystaltest.Build(b, p.proto, p.formula)
	}
	set := loadTestSet(b)
	for _, batch := range []struct {
		name    string
		structs []*crystal.Structure
	}{{"prototypes", small}, {"golden", readGoldenCIFs(b, names)}} {
		for _, spread := range []bool{false, true} {
			name := batch.name + "/values"
			if spread {
				name = batch.name + "/with-tie-spread"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					var err error
					if spread {
						_, err = set.PredictWithTieSpread(b.Context(), batch.structs, 1)
					} else {
						_, err = set.Predict(b.Context(), batch.structs)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(batch.structs))/b.Elapsed().Seconds(), "structures/s")
			})
		}
	}
}

// BenchmarkSetPredictOrder: all seven surrogates, in one goroutine, on a
// batch of 16 small prototype structures like a campaign's candidates (2
// to 14 atoms; the evaluator's batch) and on the 51 golden structures
// (up to 100 atoms), structure by structure (chunks of one: every model's
// weights fetched again for each structure) and model by model over
// chunks of ChunkSize (the Set's order). The order matters where a
// structure's own work is small beside fetching the weights.
func BenchmarkSetPredictOrder(b *testing.B) {
	_, names := goldenSet(b)
	small := make([]*crystal.Structure, len(benchPrototypes))
	for i, p := range benchPrototypes {
		small[i] = crystaltest.Build(b, p.proto, p.formula)
	}
	set := loadTestSet(b)
	for _, batch := range []struct {
		name    string
		structs []*crystal.Structure
	}{{"prototypes", small}, {"golden", readGoldenCIFs(b, names)}} {
		for _, c := range []struct {
			name  string
			chunk int
		}{{"structure-by-structure", 1}, {"model-by-model", ChunkSize}} {
			b.Run(batch.name+"/"+c.name, func(b *testing.B) {
				defer func(saved int) { chunkSize = saved }(chunkSize)
				chunkSize = c.chunk
				for b.Loop() {
					if _, err := set.Predict(b.Context(), batch.structs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(batch.structs))/b.Elapsed().Seconds(), "structures/s")
			})
		}
	}
}
