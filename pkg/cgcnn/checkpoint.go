package cgcnn

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/nlpodyssey/gopickle/types"
)

// Task is what a checkpoint predicts.
type Task int

const (
	// Regression predicts one value, de-normalised as y·std + mean.
	Regression Task = iota
	// Classification predicts two classes; Crucible reports the
	// probability of class 1, exp(log-softmax[1]).
	Classification
)

func (t Task) String() string {
	if t == Classification {
		return "classification"
	}
	return "regression"
}

// checkpointSuffix is the extension of the published checkpoints.
const checkpointSuffix = ".pth.tar"

// bnEps is the ε of torch.nn.BatchNorm1d, which CGCNN uses with defaults.
const bnEps = 1e-5

// LoadCheckpoint reads a published CGCNN checkpoint (a legacy-format
// torch.save file such as band-gap.pth.tar). The model is named after the
// file, without its .pth.tar extension.
func LoadCheckpoint(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cgcnn: %w", err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("cgcnn: %s: %w", path, err)
	}
	m.Name = strings.TrimSuffix(filepath.Base(path), checkpointSuffix)
	return m, nil
}

// Load reads a CGCNN checkpoint: the dict torch.save wrote in CGCNN's
// main.py, with "state_dict", "normalizer" {mean, std} and "args"
// (atom_fea_len, h_fea_len, n_conv, n_h, task). Weights stored as float32
// are widened to float64 exactly. Every tensor the network needs must be
// present with the shape that args implies; anything else in the file
// (optimizer state, epoch) is ignored. The returned model has no Name.
func Load(r io.Reader) (*Model, error) {
	data, err := readAllLimited(r, maxCheckpointBytes)
	if err != nil {
		return nil, err
	}
	obj, err := readLegacyTorch(data)
	if err != nil {
		return nil, err
	}
	top, ok := obj.(*types.Dict)
	if !ok {
		return nil, fmt.Errorf("%w: the saved object is %T, want a dict with state_dict, normalizer and args", ErrCheckpoint, obj)
	}
	ck := checkpointDict{top}

	args, err := ck.dict("args")
	if err != nil {
		return nil, err
	}
	m := &Model{}
	for _, f := range []struct {
		key string
		dst *int
	}{
		{"atom_fea_len", &m.AtomFeaLen},
		{"h_fea_len", &m.HFeaLen},
		{"n_conv", &m.NConv},
		{"n_h", &m.NH},
	} {
		v, ok := args.Get(f.key)
		n, isInt := v.(int)
		if !ok || !isInt || n < 1 || n > 4096 {
			return nil, fmt.Errorf("%w: args[%q] = %v, want a positive int", ErrCheckpoint, f.key, v)
		}
		*f.dst = n
	}
	switch task, _ := args.Get("task"); task {
	case "regression":
		m.Task = Regression
	case "classification":
		m.Task = Classification
	default:
		return nil, fmt.Errorf("%w: args[\"task\"] = %v, want \"regression\" or \"classification\"", ErrCheckpoint, task)
	}

	norm, err := ck.dict("normalizer")
	if err != nil {
		return nil, err
	}
	if m.Mean, err = number(norm, "normalizer", "mean"); err != nil {
		return nil, err
	}
	if m.Std, err = number(norm, "normalizer", "std"); err != nil {
		return nil, err
	}

	sd, err := ck.stateDict()
	if err != nil {
		return nil, err
	}
	if err := m.setWeights(sd); err != nil {
		return nil, err
	}
	return m, nil
}

type checkpointDict struct{ d *types.Dict }

func (c checkpointDict) dict(key string) (*types.Dict, error) {
	v, ok := c.d.Get(key)
	if !ok {
		return nil, fmt.Errorf("%w: no %q entry", ErrCheckpoint, key)
	}
	d, ok := v.(*types.Dict)
	if !ok {
		return nil, fmt.Errorf("%w: %q is %T, want a dict", ErrCheckpoint, key, v)
	}
	return d, nil
}

// stateDict returns the tensors of state_dict by name.
func (c checkpointDict) stateDict() (map[string]*tensor, error) {
	v, ok := c.d.Get("state_dict")
	if !ok {
		return nil, fmt.Errorf("%w: no \"state_dict\" entry", ErrCheckpoint)
	}
	out := make(map[string]*tensor)
	add := func(k, v any) error {
		name, ok := k.(string)
		if !ok {
			return fmt.Errorf("%w: state_dict key %v is not a string", ErrCheckpoint, k)
		}
		t, ok := v.(*tensor)
		if !ok {
			return fmt.Errorf("%w: state_dict[%q] is %T, want a tensor", ErrCheckpoint, name, v)
		}
		out[name] = t
		return nil
	}
	switch d := v.(type) {
	case *types.OrderedDict:
		for e := d.List.Front(); e != nil; e = e.Next() {
			entry := e.Value.(*types.OrderedDictEntry)
			if err := add(entry.Key, entry.Value); err != nil {
				return nil, err
			}
		}
	case *types.Dict:
		for _, entry := range *d {
			if err := add(entry.Key, entry.Value); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: state_dict is %T, want a dict", ErrCheckpoint, v)
	}
	return out, nil
}

func number(d *types.Dict, where, key string) (float64, error) {
	v, ok := d.Get(key)
	var x float64
	switch n := v.(type) {
	case float64:
		x = n
	case int:
		x = float64(n)
	case *tensor:
		vals, err := n.float64s()
		if err != nil || len(vals) != 1 {
			return 0, fmt.Errorf("%w: %s[%q] is a tensor of shape %v, want a scalar", ErrCheckpoint, where, key, n.shape)
		}
		x = vals[0]
	default:
		ok = false
	}
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%w: %s[%q] = %v, want a finite number", ErrCheckpoint, where, key, v)
	}
	return x, nil
}

// weights fetches state_dict tensors with the shapes the args imply.
type weights struct {
	sd   map[string]*tensor
	used map[string]bool
}

func (w *weights) get(name string, shape ...int) ([]float64, error) {
	t, ok := w.sd[name]
	if !ok {
		return nil, fmt.Errorf("%w: state_dict has no %q (want shape %v)", ErrCheckpoint, name, shape)
	}
	if !equalInts(t.shape, shape) {
		return nil, fmt.Errorf("%w: state_dict key %s: want shape %v, got %v", ErrCheckpoint, name, shape, t.shape)
	}
	vals, err := t.float64s()
	if err != nil {
		return nil, fmt.Errorf("%w: state_dict key %s: %w", ErrCheckpoint, name, err)
	}
	for i, x := range vals {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: state_dict key %s: element %d is %v", ErrCheckpoint, name, i, x)
		}
	}
	w.used[name] = true
	return vals, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
