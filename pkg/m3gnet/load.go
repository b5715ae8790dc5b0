package m3gnet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nlpodyssey/gopickle/pytorch"
	"github.com/nlpodyssey/gopickle/types"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrModel is returned for model files that cannot be read or do not
// describe the network this package evaluates.
var ErrModel = errors.New("not an M3GNet potential")

// Name is the published potential this package was written for.
const Name = "M3GNet-MP-2021.2.8-PES"

// DataPath is where the potential lies inside a Crucible data directory.
var DataPath = filepath.Join("models", "m3gnet", Name)

// Dimensions fixed by the architecture (model.json): 64 features per atom
// and bond, max_n = max_l = 3 so nine radial functions (3 spherical Bessel
// orders × 3 roots) and nine three-body basis functions, three blocks.
const (
	dim     = 64
	maxN    = 3
	maxL    = 3
	nBasis  = maxN * maxL
	nBlocks = 3
)

// config is the part of model.json's init_args this package depends on;
// Load checks each against the values the implementation supports.
type config struct {
	ElementTypes      []string `json:"element_types"`
	DimStateEmbedding int      `json:"dim_state_embedding"`
	MaxN              int      `json:"max_n"`
	MaxL              int      `json:"max_l"`
	NBlocks           int      `json:"nblocks"`
	RBFType           string   `json:"rbf_type"`
	IsIntensive       bool     `json:"is_intensive"`
	ReadoutType       string   `json:"readout_type"`
	TaskType          string   `json:"task_type"`
	Cutoff            float64  `json:"cutoff"`
	ThreebodyCutoff   float64  `json:"threebody_cutoff"`
	NTargets          int      `json:"ntargets"`
	UseSmooth         bool     `json:"use_smooth"`
	UsePhi            bool     `json:"use_phi"`
	ActivationType    string   `json:"activation_type"`
	DimEdgeEmbedding  int      `json:"dim_edge_embedding"`
	DimNodeEmbedding  int      `json:"dim_node_embedding"`
	IncludeState      bool     `json:"include_state"`
	Units             int      `json:"units"`
	// Read but unused by a PES with include_state false and the
	// weighted-atom readout of an extensive target.
	NTypesState    any    `json:"ntypes_state"`
	NItersSet2Set  int    `json:"niters_set2set"`
	NLayersSet2Set int    `json:"nlayers_set2set"`
	Field          string `json:"field"`
	DimStateFeats  any    `json:"dim_state_feats"`
}

// modelFile is model.json as matgl's Potential.save writes it.
type modelFile struct {
	Class        string `json:"@class"`
	Module       string `json:"@module"`
	ModelVersion int    `json:"@model_version"`
	Metadata     any    `json:"metadata"`
	Kwargs       struct {
		Model struct {
			Class        string `json:"@class"`
			Module       string `json:"@module"`
			ModelVersion int    `json:"@model_version"`
			InitArgs     config `json:"init_args"`
		} `json:"model"`
		// The tensors below are also in state.pt, which is what Load uses;
		// here they are printed reprs.
		DataMean     string `json:"data_mean"`
		DataStd      string `json:"data_std"`
		ElementRefs  string `json:"element_refs"`
		CalcForces   bool   `json:"calc_forces"`
		CalcStresses bool   `json:"calc_stresses"`
		CalcHessian  bool   `json:"calc_hessian"`
		CalcMagmom   bool   `json:"calc_magmom"`
	} `json:"kwargs"`
}

// Load reads the potential from dir, which holds model.json and state.pt as
// published by matgl (pretrained_models/M3GNet-MP-2021.2.8-PES). The weights
// are converted from float32 to float64 once.
func Load(dir string) (*Model, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, fmt.Errorf("m3gnet: %w", err)
	}
	cfg, err := parseConfig(raw)
	if err != nil {
		return nil, err
	}
	st, err := readState(filepath.Join(dir, "state.pt"))
	if err != nil {
		return nil, err
	}
	return build(cfg, st)
}

// LoadData loads the potential from a Crucible data directory (the value
// of CRUCIBLE_DATA), where it lies under DataPath.
func LoadData(dataDir string) (*Model, error) { return Load(filepath.Join(dataDir, DataPath)) }

func parseConfig(raw []byte) (*config, error) {
	var f modelFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: model.json: %w", ErrModel, err)
	}
	if f.Class != "Potential" || f.Kwargs.Model.Class != "M3GNet" {
		return nil, fmt.Errorf("%w: model.json describes a %s of a %s, want a Potential of an M3GNet", ErrModel, f.Class, f.Kwargs.Model.Class)
	}
	c := &f.Kwargs.Model.InitArgs
	checks := []struct {
		ok   bool
		what string
	}{
		{len(c.ElementTypes) > 0, "element_types is empty"},
		{c.MaxN == maxN && c.MaxL == maxL, fmt.Sprintf("max_n = %d, max_l = %d (supported: 3, 3)", c.MaxN, c.MaxL)},
		{c.NBlocks == nBlocks, fmt.Sprintf("nblocks = %d (supported: 3)", c.NBlocks)},
		{c.RBFType == "SphericalBessel", fmt.Sprintf("rbf_type %q (supported: SphericalBessel)", c.RBFType)},
		{!c.IsIntensive && c.ReadoutType == "weighted_atom" && c.NTargets == 1, "readout is not the weighted-atom sum of one extensive target"},
		{c.TaskType == "regression", fmt.Sprintf("task_type %q", c.TaskType)},
		{!c.UseSmooth && !c.UsePhi, "use_smooth or use_phi is set (supported: both false)"},
		{c.ActivationType == "swish", fmt.Sprintf("activation %q (supported: swish)", c.ActivationType)},
		{c.Units == dim && c.DimNodeEmbedding == dim && c.DimEdgeEmbedding == dim, "feature widths are not 64"},
		{!c.IncludeState && c.DimStateEmbedding == 0, "state features are included (not supported)"},
		{c.Cutoff > 0 && c.ThreebodyCutoff > 0 && c.ThreebodyCutoff <= c.Cutoff, fmt.Sprintf("cutoffs %g, %g Å", c.Cutoff, c.ThreebodyCutoff)},
	}
	for _, ch := range checks {
		if !ch.ok {
			return nil, fmt.Errorf("%w: model.json: %s", ErrModel, ch.what)
		}
	}
	return c, nil
}

// readState decodes state.pt (a zip-format torch.save of an OrderedDict of
// tensors) into flat float64 arrays with their shapes.
func readState(path string) (st map[string]tensor, err error) {
	defer func() {
		// gopickle is not written for corrupt input; report a panic as a
		// bad file.
		if p := recover(); p != nil {
			st, err = nil, fmt.Errorf("%w: %s: malformed pickle: %v", ErrModel, path, p)
		}
	}()
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("m3gnet: %w", err)
	}
	obj, err := pytorch.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrModel, path, err)
	}
	d, ok := obj.(*types.OrderedDict)
	if !ok {
		return nil, fmt.Errorf("%w: %s holds a %T, want a state dict", ErrModel, path, obj)
	}
	st = make(map[string]tensor, d.Len())
	for e := d.List.Front(); e != nil; e = e.Next() {
		ent := e.Value.(*types.OrderedDictEntry)
		key, ok := ent.Key.(string)
		if !ok {
			return nil, fmt.Errorf("%w: state key %v is not a string", ErrModel, ent.Key)
		}
		t, ok := ent.Value.(*pytorch.Tensor)
		if !ok {
			return nil, fmt.Errorf("%w: state %q is a %T, want a tensor", ErrModel, key, ent.Value)
		}
		v, err := tensorValues(t)
		if err != nil {
			return nil, fmt.Errorf("%w: state %q: %w", ErrModel, key, err)
		}
		st[key] = tensor{shape: append([]int(nil), t.Size...), data: v}
	}
	return st, nil
}

type tensor struct {
	shape []int
	data  []float64
}

// tensorValues reads a tensor's elements in row-major order, following its
// strides.
func tensorValues(t *pytorch.Tensor) ([]float64, error) {
	var src []float64
	switch s := t.Source.(type) {
	case *pytorch.FloatStorage:
		src = make([]float64, len(s.Data))
		for i, x := range s.Data {
			src[i] = float64(x)
		}
	case *pytorch.DoubleStorage:
		src = s.Data
	default:
		return nil, fmt.Errorf("storage %T (want float32 or float64)", t.Source)
	}
	if len(t.Stride) != len(t.Size) {
		return nil, fmt.Errorf("size %v and stride %v differ in rank", t.Size, t.Stride)
	}
	n := 1
	for _, s := range t.Size {
		n *= s
	}
	out := make([]float64, n)
	idx := make([]int, len(t.Size))
	for i := range out {
		off := t.StorageOffset
		for k, j := range idx {
			off += j * t.Stride[k]
		}
		if off < 0 || off >= len(src) {
			return nil, fmt.Errorf("element %d at storage offset %d of %d", i, off, len(src))
		}
		out[i] = src[off]
		for k := len(idx) - 1; k >= 0; k-- {
			idx[k]++
			if idx[k] < t.Size[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out, nil
}

// linear is a torch.nn.Linear layer y = W x + b, W of shape out × in. w is
// W row-major (for the backward pass, x̄ = Wᵀ ȳ, as rows of W scaled by
// ȳ) and wt its transpose (in × out, for the forward pass, y = Σ_k x_k
// row k of wt); b is nil without bias.
type linear struct {
	in, out int
	w, wt   []float64
	b       []float64
	// For the first layer of a convolution MLP (input [x_src, x_dst, e]):
	// the three out × 64 column blocks of w, contiguous.
	blocks [3][]float64
}

// splitBlocks fills l.blocks.
func (l *linear) splitBlocks() {
	for b := range l.blocks {
		m := make([]float64, l.out*dim)
		for o := 0; o < l.out; o++ {
			copy(m[o*dim:(o+1)*dim], l.w[o*l.in+b*dim:o*l.in+(b+1)*dim])
		}
		l.blocks[b] = m
	}
}

// gated is matgl's GatedMLP: out = layers(x) ⊙ gates(x), both stacks of
// linear layers with SiLU between them; the last layer of layers ends in
// SiLU when activateLast, and gates end in a sigmoid.
type gated struct {
	layers, gates []linear
	activateLast  bool
}

// block holds the weights of one M3GNet block: the three-body interaction
// (atom network φ_a, a linear map with sigmoid; bond network, a one-layer
// gated MLP without bias) and the graph convolution (gated MLPs for the
// bond and atom updates, each multiplied by a linear map of the radial
// basis).
type block struct {
	atom3   linear
	bond3   gated
	edgeMLP gated
	edgeW   linear
	nodeMLP gated
	nodeW   linear
}

// Model is the M3GNet potential, ready to evaluate. It is immutable and
// safe for concurrent use; each goroutine needs its own Workspace.
type Model struct {
	elements  []crystal.Element // row order of the embedding and references
	row       [crystal.MaxZ + 1]int
	cutoff    float64 // bond graph, Å
	cutoff3   float64 // three-body, Å
	scale     float64 // data_std
	shift     float64 // data_mean
	ref       []float64
	embedding []float64 // len(elements) × 64
	edgeEmbed linear
	blocks    [nBlocks]block
	readout   gated
	sbf       besselBasis
	indexing  Indexing
}

// Cutoff is the radius of the bond graph (Å).
func (m *Model) Cutoff() float64 { return m.cutoff }

// ThreeBodyCutoff is the radius within which bonds form angles (Å).
func (m *Model) ThreeBodyCutoff() float64 { return m.cutoff3 }

// Supports reports whether the potential was trained on element e.
func (m *Model) Supports(e crystal.Element) bool {
	return e.Valid() && int(e) < len(m.row) && m.row[e] >= 0
}

func build(cfg *config, st map[string]tensor) (*Model, error) {
	used := make(map[string]bool, len(st))
	get := func(key string, shape ...int) ([]float64, error) {
		t, ok := st[key]
		if !ok {
			return nil, fmt.Errorf("%w: state.pt has no %q", ErrModel, key)
		}
		if len(t.shape) != len(shape) {
			return nil, fmt.Errorf("%w: %q has shape %v, want %v", ErrModel, key, t.shape, shape)
		}
		for i := range shape {
			if t.shape[i] != shape[i] {
				return nil, fmt.Errorf("%w: %q has shape %v, want %v", ErrModel, key, t.shape, shape)
			}
		}
		used[key] = true
		return t.data, nil
	}
	lin := func(prefix string, in, out int, bias bool) (linear, error) {
		w, err := get(prefix+".weight", out, in)
		if err != nil {
			return linear{}, err
		}
		l := linear{in: in, out: out, w: w, wt: make([]float64, in*out)}
		for o := 0; o < out; o++ {
			for i := 0; i < in; i++ {
				l.wt[i*out+o] = w[o*in+i]
			}
		}
		if bias {
			if l.b, err = get(prefix+".bias", out); err != nil {
				return linear{}, err
			}
		}
		return l, nil
	}
	// gatedMLP reads a GatedMLP with widths dims (dims[0] the input); the
	// torch Sequential interleaves activations, so linear layer k is
	// module 2k.
	gatedMLP := func(prefix string, dims []int, bias, activateLast bool) (gated, error) {
		g := gated{activateLast: activateLast}
		for k := 0; k+1 < len(dims); k++ {
			l, err := lin(fmt.Sprintf("%s.layers.%d", prefix, 2*k), dims[k], dims[k+1], bias)
			if err != nil {
				return gated{}, err
			}
			gt, err := lin(fmt.Sprintf("%s.gates.%d", prefix, 2*k), dims[k], dims[k+1], bias)
			if err != nil {
				return gated{}, err
			}
			g.layers = append(g.layers, l)
			g.gates = append(g.gates, gt)
		}
		return g, nil
	}

	nel := len(cfg.ElementTypes)
	m := &Model{cutoff: cfg.Cutoff, cutoff3: cfg.ThreebodyCutoff}
	for i := range m.row {
		m.row[i] = -1
	}
	for i, sym := range cfg.ElementTypes {
		e, err := crystal.ElementBySymbol(sym)
		if err != nil {
			return nil, fmt.Errorf("%w: element_types[%d]: %w", ErrModel, i, err)
		}
		if m.row[e] >= 0 {
			return nil, fmt.Errorf("%w: element %s listed twice", ErrModel, sym)
		}
		m.row[e] = i
		m.elements = append(m.elements, e)
	}

	var err error
	scalar := func(key string) (float64, error) {
		v, err := get(key)
		if err != nil {
			return 0, err
		}
		return v[0], nil
	}
	if m.scale, err = scalar("data_std"); err != nil {
		return nil, err
	}
	if m.shift, err = scalar("data_mean"); err != nil {
		return nil, err
	}
	for _, key := range []string{"model.bond_expansion.rbf.cutoff", "model.basis_expansion.sbf.cutoff"} {
		rc, err := scalar(key)
		if err != nil {
			return nil, err
		}
		if rc != cfg.Cutoff {
			return nil, fmt.Errorf("%w: %s = %g Å but model.json's cutoff is %g Å", ErrModel, key, rc, cfg.Cutoff)
		}
	}
	if m.ref, err = get("element_refs.property_offset", nel); err != nil {
		return nil, err
	}
	if _, err = get("element_refs.onehot", nel, nel); err != nil {
		return nil, err
	}
	if m.embedding, err = get("model.embedding.layer_node_embedding.weight", nel, dim); err != nil {
		return nil, err
	}
	if m.edgeEmbed, err = lin("model.embedding.layer_edge_embedding.layers.0", nBasis, dim, true); err != nil {
		return nil, err
	}
	for i := range m.blocks {
		b := &m.blocks[i]
		p := fmt.Sprintf("model.three_body_interactions.%d", i)
		if b.atom3, err = lin(p+".update_network_atom.layers.0", dim, nBasis, true); err != nil {
			return nil, err
		}
		if b.bond3, err = gatedMLP(p+".update_network_bond", []int{nBasis, dim}, false, true); err != nil {
			return nil, err
		}
		p = fmt.Sprintf("model.graph_layers.%d.conv", i)
		if b.edgeMLP, err = gatedMLP(p+".edge_update_func", []int{3 * dim, dim, dim, dim}, true, true); err != nil {
			return nil, err
		}
		if b.edgeW, err = lin(p+".edge_weight_func", nBasis, dim, false); err != nil {
			return nil, err
		}
		if b.nodeMLP, err = gatedMLP(p+".node_update_func", []int{3 * dim, dim, dim, dim}, true, true); err != nil {
			return nil, err
		}
		if b.nodeW, err = lin(p+".node_weight_func", nBasis, dim, false); err != nil {
			return nil, err
		}
		for _, g := range []*gated{&b.edgeMLP, &b.nodeMLP} {
			g.layers[0].splitBlocks()
			g.gates[0].splitBlocks()
		}
	}
	if m.readout, err = gatedMLP("model.final_layer.gated", []int{dim, dim, dim, dim, 1}, true, false); err != nil {
		return nil, err
	}
	for key := range st {
		if !used[key] {
			return nil, fmt.Errorf("%w: state.pt has %q, which this implementation does not use", ErrModel, key)
		}
	}
	m.sbf = newBesselBasis(cfg.Cutoff)
	return m, nil
}
