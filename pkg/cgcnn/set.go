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
// featurised once and every model runs on that graph. A Set is safe for
// concurrent use; each call borrows a worker (featurizer, graph and
// workspace) from a pool, so steady-state evaluation does not allocate per
// atom.
type Set struct {
	atoms  *AtomFeatures
	models []*Model
	pool   sync.Pool // *worker
}

type worker struct {
	f  *Featurizer
	g  Graph
	ws Workspace
}

// Prediction is the outcome for one structure.
type Prediction struct {
	// Values has one entry per model, in the order of Set.Models().
	Values []float64
	// Padded is the number of neighbour slots CGCNN filled with padding
	// because atoms have fewer than MaxNeighbors neighbours within Radius
	// (Graph.Padded): the structure is sparser than the training data.
	Padded int
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
	preds, values := s.newPredictions(len(structs))
	w := s.pool.Get().(*worker)
	defer s.pool.Put(w)
	for i, st := range structs {
		if err := ctx.Err(); err != nil {
			fillErr(preds[i:], err)
			return preds, err
		}
		preds[i] = s.predictOne(w, st, values[i*len(s.models):(i+1)*len(s.models)])
		yield()
	}
	return preds, nil
}

// yield lets other goroutines run between structures. Inference keeps a
// core busy for milliseconds; a service sharing the process (the
// evaluator's own I/O, or all four services in local mode) would otherwise
// wait for a whole batch before its network replies are handled. It costs
// about 0.1 µs a structure.
func yield() { runtime.Gosched() }

// PredictParallel is Predict spread over up to workers goroutines, each
// taking the next structure as it finishes one. workers < 1 means 1.
func (s *Set) PredictParallel(ctx context.Context, structs []*crystal.Structure, workers int) ([]Prediction, error) {
	workers = max(1, min(workers, len(structs)))
	if workers == 1 {
		return s.Predict(ctx, structs)
	}
	preds, values := s.newPredictions(len(structs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			w := s.pool.Get().(*worker)
			defer s.pool.Put(w)
			for {
				i := int(next.Add(1) - 1)
				if i >= len(structs) {
					return
				}
				if err := ctx.Err(); err != nil {
					preds[i] = Prediction{Err: err}
					continue
				}
				preds[i] = s.predictOne(w, structs[i], values[i*len(s.models):(i+1)*len(s.models)])
				yield()
			}
		})
	}
	wg.Wait()
	return preds, ctx.Err()
}

func (s *Set) newPredictions(n int) ([]Prediction, []float64) {
	return make([]Prediction, n), make([]float64, n*len(s.models))
}

func fillErr(preds []Prediction, err error) {
	for i := range preds {
		preds[i] = Prediction{Err: err}
	}
}

// predictOne featurises st into w's graph and runs every model on it.
func (s *Set) predictOne(w *worker, st *crystal.Structure, dst []float64) Prediction {
	if st == nil {
		return Prediction{Err: fmt.Errorf("%w: nil structure", ErrInvalidStructure)}
	}
	if err := w.f.Featurize(st, &w.g); err != nil {
		return Prediction{Err: err}
	}
	for m, model := range s.models {
		y, err := model.Eval(&w.ws, &w.g)
		if err != nil {
			return Prediction{Err: fmt.Errorf("model %s: %w", model.Name, err)}
		}
		dst[m] = y
	}
	return Prediction{Values: dst, Padded: w.g.Padded()}
}
