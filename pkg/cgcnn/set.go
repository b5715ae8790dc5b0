package cgcnn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// AtomInitFile is the name of the atom feature table next to the
// checkpoints.
const AtomInitFile = "atom_init.json"

// Set is a group of checkpoints evaluated together: each structure is
// featurised once and every model runs on that graph, model by model over
// chunks of structures (ChunkSize) so that a model's weights stay in
// cache. A Set is safe for concurrent use; each call borrows a worker
// (featurizer, graphs and workspace) from a pool, so steady-state
// evaluation does not allocate per atom.
type Set struct {
	atoms  *AtomFeatures
	models []*Model
	pool   sync.Pool // *worker
}

type worker struct {
	f      *Featurizer
	graphs []Graph // a chunk's
	ws     Workspace
}

// Prediction is the outcome for one structure.
type Prediction struct {
	// Values has one entry per model, in the order of Set.Models().
	Values []float64
	// Low and High, filled by PredictWithTieSpread, have one entry per
	// model: the lowest and highest of Values and the values under the
	// alternative fillings of the slots of tied neighbours
	// (Model.EvalWithTieSpread). Both equal Values where the choice cannot
	// change a prediction (TieChoices = 0).
	Low, High []float64
	// Padded is the number of neighbour slots CGCNN filled with padding
	// because atoms have fewer than MaxNeighbors neighbours within Radius
	// (Graph.Padded): the structure is sparser than the training data.
	Padded int
	// TiedAtoms is the number of atoms with neighbours tied at the cut
	// (Graph.TiedAtoms), and TieChoices the number of alternative
	// fillings of their slots (Graph.TieChoices).
	TiedAtoms, TieChoices int
	// Err, when not nil, says why the structure could not be evaluated
	// (it wraps ErrInvalidStructure for a structure CGCNN cannot take);
	// Values is then nil.
	Err error
}

// NewSet groups models that take the atom features of atoms.
func NewSet(atoms *AtomFeatures, models ...*Model) (*Set, error) {
	if atoms == nil {
		return nil, errors.New("cgcnn: no atom feature table")
	}
	if len(models) == 0 {
		return nil, errors.New("cgcnn: a set needs at least one model")
	}
	seen := make(map[string]bool)
	for i, m := range models {
		if m == nil {
			return nil, fmt.Errorf("cgcnn: model %d is nil", i)
		}
		if m.inLen != atoms.Len() {
			return nil, fmt.Errorf("cgcnn: model %s takes %d atom features, the table has %d", m.Name, m.inLen, atoms.Len())
		}
		if seen[m.Name] {
			return nil, fmt.Errorf("cgcnn: two models named %q", m.Name)
		}
		seen[m.Name] = true
	}
	full := false
	for _, m := range models {
		full = full || m.NeedsFullExpansion()
	}
	s := &Set{atoms: atoms, models: append([]*Model(nil), models...)}
	s.pool.New = func() any {
		f := NewFeaturizer(atoms)
		f.Full = full
		return &worker{f: f}
	}
	return s, nil
}

// LoadSet loads atom_init.json and the named checkpoints (<name>.pth.tar)
// from dir.
func LoadSet(dir string, names ...string) (*Set, error) {
	atoms, err := LoadAtomFeatures(filepath.Join(dir, AtomInitFile))
	if err != nil {
		return nil, err
	}
	models := make([]*Model, len(names))
	for i, name := range names {
		if models[i], err = LoadCheckpoint(filepath.Join(dir, name+checkpointSuffix)); err != nil {
			return nil, err
		}
	}
	return NewSet(atoms, models...)
}

// Models returns the set's models in the order of Prediction.Values. The
// slice is the set's own: do not modify it.
func (s *Set) Models() []*Model { return s.models }

// AtomFeatures returns the set's atom feature table.
func (s *Set) AtomFeatures() *AtomFeatures { return s.atoms }

// Index returns the position of the named model in Prediction.Values, or
// −1.
func (s *Set) Index(name string) int {
	for i, m := range s.models {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// Predict evaluates every model on each structure, in the calling
// goroutine. A structure that cannot be evaluated gets its own error in
// its Prediction; the returned error is only the context's, when it is
// cancelled before the batch is done (predictions not yet made then carry
// it too).
func (s *Set) Predict(ctx context.Context, structs []*crystal.Structure) ([]Prediction, error) {
	return s.PredictParallel(ctx, structs, 1)
}

// ChunkSize is the most structures a worker featurises before it runs the
// models on them. Each model then runs on the whole chunk in turn, so its
// weights (about 0.5 MB in float64, more than a core's L1 and, for the
// seven surrogates together, its L2) are fetched once a chunk instead of
// once a structure; the chunk's graphs stay in cache meanwhile.
const ChunkSize = 16

// chunkSize is ChunkSize, which the benchmarks vary.
var chunkSize = ChunkSize

// yield lets other goroutines run between a chunk's model passes.
// Inference keeps a core busy for milliseconds; a service sharing the
// process (the evaluator's own I/O, or all four services in local mode)
// would otherwise wait for a whole batch before its network replies are
// handled. A pass over a full chunk takes a few milliseconds, about what
// one structure's seven models take; a yield costs about 0.1 µs.
func yield() { runtime.Gosched() }

// PredictParallel is Predict spread over up to workers goroutines, each
// taking the next chunk of structures as it finishes one (chunks of
// ChunkSize, smaller where that leaves a worker without one). workers < 1
// means 1. The values do not depend on the chunks: every structure is
// evaluated alone, in the same arithmetic.
func (s *Set) PredictParallel(ctx context.Context, structs []*crystal.Structure, workers int) ([]Prediction, error) {
	return s.predict(ctx, structs, workers, false)
}

// PredictWithTieSpread is PredictParallel that also fills each
// prediction's Low and High: where neighbours of different elements are
// tied at the cut, every model is evaluated again under each alternative
// filling of their slots (Graph.TieChoices times), the others cost
// nothing more.
func (s *Set) PredictWithTieSpread(ctx context.Context, structs []*crystal.Structure, workers int) ([]Prediction, error) {
	return s.predict(ctx, structs, workers, true)
}

func (s *Set) predict(ctx context.Context, structs []*crystal.Structure, workers int, spread bool) ([]Prediction, error) {
	workers = max(1, min(workers, len(structs)))
	preds, values := s.newPredictions(len(structs), spread)
	chunk := max(1, min(chunkSize, (len(structs)+workers-1)/workers))
	stride := len(values) / max(1, len(structs))
	var next atomic.Int64
	work := func() {
		w := s.pool.Get().(*worker)
		defer s.pool.Put(w)
		for {
			lo := int(next.Add(int64(chunk)) - int64(chunk))
			if lo >= len(structs) {
				return
			}
			hi := min(lo+chunk, len(structs))
			s.predictChunk(ctx, w, structs[lo:hi], preds[lo:hi], values[lo*stride:hi*stride], spread)
		}
	}
	if workers == 1 {
		work()
		return preds, ctx.Err()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(work)
	}
	wg.Wait()
	return preds, ctx.Err()
}

// newPredictions returns n predictions and the storage of their values:
// per structure, Values (and with spread Low and High) of len(s.models)
// each.
func (s *Set) newPredictions(n int, spread bool) ([]Prediction, []float64) {
	per := len(s.models)
	if spread {
		per *= 3
	}
	return make([]Prediction, n), make([]float64, n*per)
}

func fillErr(preds []Prediction, err error) {
	for i := range preds {
		preds[i] = Prediction{Err: err}
	}
}

// predictChunk featurises structs into w's graphs, then runs each model
// on every structure featurised, filling preds (values is their storage,
// len(s.models) a structure, three times that with spread). When ctx is
// cancelled before the chunk is done, every prediction of the chunk
// carries its error.
func (s *Set) predictChunk(ctx context.Context, w *worker, structs []*crystal.Structure, preds []Prediction, values []float64, spread bool) {
	if err := ctx.Err(); err != nil {
		fillErr(preds, err)
		return
	}
	if len(w.graphs) < len(structs) {
		w.graphs = append(w.graphs, make([]Graph, len(structs)-len(w.graphs))...)
	}
	nm := len(s.models)
	for i, st := range structs {
		if st == nil {
			preds[i] = Prediction{Err: fmt.Errorf("%w: nil structure", ErrInvalidStructure)}
			continue
		}
		if err := w.f.Featurize(st, &w.graphs[i]); err != nil {
			preds[i] = Prediction{Err: err}
			continue
		}
		g := &w.graphs[i]
		p := Prediction{Padded: g.Padded(), TiedAtoms: g.TiedAtoms(), TieChoices: g.TieChoices()}
		if spread {
			v := values[3*i*nm : 3*(i+1)*nm]
			p.Values, p.Low, p.High = v[:nm], v[nm:2*nm], v[2*nm:]
		} else {
			p.Values = values[i*nm : (i+1)*nm]
		}
		preds[i] = p
	}
	for m, model := range s.models {
		if err := ctx.Err(); err != nil {
			fillErr(preds, err)
			return
		}
		for i := range structs {
			if preds[i].Err != nil {
				continue
			}
			var y, lo, hi float64
			var err error
			if spread {
				y, lo, hi, err = model.EvalWithTieSpread(&w.ws, &w.graphs[i])
			} else {
				y, err = model.Eval(&w.ws, &w.graphs[i])
			}
			if err != nil {
				preds[i] = Prediction{Err: fmt.Errorf("model %s: %w", model.Name, err)}
				continue
			}
			preds[i].Values[m] = y
			if spread {
				preds[i].Low[m], preds[i].High[m] = lo, hi
			}
		}
		yield()
	}
}
