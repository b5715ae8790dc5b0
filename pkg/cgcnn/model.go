package cgcnn

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Model is one CGCNN checkpoint ready for inference: the network of
// Xie & Grossman, PRL 120, 145301 (2018), Eq. (5), as implemented in
// cgcnn/model.py (CrystalGraphConvNet), in float64.
//
// With v_i the features of atom i, u_ij the Gaussian expansion of the
// distance to its neighbour j, ‖ concatenation and BN batch normalisation
// in inference mode, (x − running_mean)/√(running_var + 10⁻⁵)·γ + β:
//
//	v_i⁽⁰⁾ = W_emb a_i + b_emb                         (a_i from atom_init.json)
//	z_ij  = BN₁(W_f [v_i ‖ v_j ‖ u_ij] + b_f) = (z_ij^filter, z_ij^core)
//	v_i  ← softplus(v_i + BN₂(Σ_j sigmoid(z_ij^filter) ⊙ softplus(z_ij^core)))
//	h     = softplus(W_fc softplus(mean_i v_i) + b_fc), then n_h − 1 more
//	        softplus(W h + b) layers
//	y     = W_out h + b_out;  regression: y·std + mean;
//	        classification: exp(log_softmax(y)[1]).
//
// The evaluation is rearranged for speed without changing the function:
// BN₁ is folded into W_f and b_f; W_f is split into its blocks for v_i,
// v_j and u_ij, so the atom parts are computed once per atom (a dense
// product over all atoms) instead of once per edge; the first layer, whose
// input depends only on the element, is evaluated once per element; and
// each edge uses only the Gaussians within gaussHalfWindow steps of its
// distance (see gaussWindow).
//
// A Model is immutable after loading and safe for concurrent use.
type Model struct {
	// Name identifies the checkpoint (its file name without .pth.tar).
	Name string
	// Task says whether the output is a regression value or a class-1
	// probability.
	Task Task
	// Mean and Std de-normalise a regression output (CGCNN's Normalizer).
	Mean, Std float64
	// Hyper-parameters from the checkpoint's args.
	AtomFeaLen, HFeaLen, NConv, NH int

	inLen int       // length of the atom feature vectors (92)
	embW  []float64 // inLen × AtomFeaLen (transposed embedding.weight, in matmulLayout)
	embB  []float64
	convs []convLayer
	// needsFull: the Gaussian window's truncation bound fails for some
	// layer's edge weights, so edges need all NumGaussians Gaussians.
	needsFull bool
	fcs       []dense // conv_to_fc, then fcs.0 … fcs.(n_h−2)
	out       dense
}

// convLayer holds one ConvLayer with BN₁ folded in.
type convLayer struct {
	// atomW is A × 4A (in matmulLayout): column c < 2A is the self
	// block's output c, column 2A + c the neighbour block's, both scaled
	// by BN₁.
	atomW []float64
	bias  []float64 // 4A: BN₁-folded bias of the self block, then 2A zeros
	// edgeW is NumGaussians × 2A: row k is the Gaussian-k column of W_f,
	// scaled by BN₁.
	edgeW []float64
	// BN₂ as an affine map: scale·x + shift.
	bn2Scale, bn2Shift []float64
}

// dense is a Linear layer, weights row-major out × in.
type dense struct {
	w         []float64
	b         []float64
	nOut, nIn int
}

// InputLen is the length of the atom feature vectors the model expects.
func (m *Model) InputLen() int { return m.inLen }

// NeedsFullExpansion reports whether the model's edge weights are too
// large for the Gaussian window (see gaussWindow): its graphs must then be
// made by a Featurizer with Full set.
func (m *Model) NeedsFullExpansion() bool { return m.needsFull }

// setWeights takes the network's tensors from the state dict, checks their
// shapes against the hyper-parameters and prepares the folded layout.
func (m *Model) setWeights(sd map[string]*tensor) error {
	w := &weights{sd: sd, used: make(map[string]bool)}
	A, H := m.AtomFeaLen, m.HFeaLen

	emb, ok := sd["embedding.weight"]
	if !ok || len(emb.shape) != 2 || emb.shape[0] != A || emb.shape[1] < 1 {
		got := "missing"
		if ok {
			got = fmt.Sprint(emb.shape)
		}
		return fmt.Errorf("%w: state_dict key embedding.weight: want shape [%d n_atom_features], got %s", ErrCheckpoint, A, got)
	}
	m.inLen = emb.shape[1]
	embW, err := w.get("embedding.weight", A, m.inLen)
	if err != nil {
		return err
	}
	m.embW = matmulLayout(transpose(embW, A, m.inLen), m.inLen, A)
	if m.embB, err = w.get("embedding.bias", A); err != nil {
		return err
	}

	m.convs = make([]convLayer, m.NConv)
	for l := range m.convs {
		p := fmt.Sprintf("convs.%d.", l)
		fw, err := w.get(p+"fc_full.weight", 2*A, 2*A+NumGaussians)
		if err != nil {
			return err
		}
		fb, err := w.get(p+"fc_full.bias", 2*A)
		if err != nil {
			return err
		}
		s1, t1, err := batchNorm(w, p+"bn1", 2*A)
		if err != nil {
			return err
		}
		s2, t2, err := batchNorm(w, p+"bn2", A)
		if err != nil {
			return err
		}
		c := convLayer{
			atomW:    make([]float64, A*4*A),
			bias:     make([]float64, 4*A),
			edgeW:    make([]float64, NumGaussians*2*A),
			bn2Scale: s2,
			bn2Shift: t2,
		}
		in := 2*A + NumGaussians
		for o := 0; o < 2*A; o++ {
			row := fw[o*in : (o+1)*in]
			for k := 0; k < A; k++ {
				c.atomW[k*4*A+o] = s1[o] * row[k]       // v_i block
				c.atomW[k*4*A+2*A+o] = s1[o] * row[A+k] // v_j block
			}
			for k := 0; k < NumGaussians; k++ {
				c.edgeW[k*2*A+o] = s1[o] * row[2*A+k]
			}
			// torch's inference batch norm: x·α + (β − μ·α), α = γ/√(σ²+ε).
			c.bias[o] = s1[o]*fb[o] + t1[o]
		}
		m.needsFull = m.needsFull || !windowSuffices(c.edgeW, 2*A)
		c.atomW = matmulLayout(c.atomW, A, 4*A)
		m.convs[l] = c
	}

	fc, err := denseLayer(w, "conv_to_fc", H, A)
	if err != nil {
		return err
	}
	m.fcs = []dense{fc}
	for k := 0; k < m.NH-1; k++ {
		fc, err := denseLayer(w, fmt.Sprintf("fcs.%d", k), H, H)
		if err != nil {
			return err
		}
		m.fcs = append(m.fcs, fc)
	}
	nOut := 1
	if m.Task == Classification {
		nOut = 2
	}
	if m.out, err = denseLayer(w, "fc_out", nOut, H); err != nil {
		return err
	}
	return nil
}

// batchNorm returns BatchNorm1d's inference transform as scale α and shift
// β − μ·α, the form torch evaluates (aten batch_norm_cpu_transform_input).
func batchNorm(w *weights, prefix string, n int) (scale, shift []float64, err error) {
	gamma, err := w.get(prefix+".weight", n)
	if err != nil {
		return nil, nil, err
	}
	beta, err := w.get(prefix+".bias", n)
	if err != nil {
		return nil, nil, err
	}
	mean, err := w.get(prefix+".running_mean", n)
	if err != nil {
		return nil, nil, err
	}
	variance, err := w.get(prefix+".running_var", n)
	if err != nil {
		return nil, nil, err
	}
	scale = make([]float64, n)
	shift = make([]float64, n)
	for i := range scale {
		if !(variance[i] >= 0) {
			return nil, nil, fmt.Errorf("%w: state_dict key %s.running_var: element %d is %v, want ≥ 0", ErrCheckpoint, prefix, i, variance[i])
		}
		scale[i] = gamma[i] / math.Sqrt(variance[i]+bnEps)
		shift[i] = beta[i] - mean[i]*scale[i]
	}
	return scale, shift, nil
}

func denseLayer(w *weights, prefix string, out, in int) (dense, error) {
	wt, err := w.get(prefix+".weight", out, in)
	if err != nil {
		return dense{}, err
	}
	b, err := w.get(prefix+".bias", out)
	if err != nil {
		return dense{}, err
	}
	return dense{w: wt, b: b, nOut: out, nIn: in}, nil
}

// truncationBound is the largest contribution to a pre-activation that
// leaving out the Gaussians beyond the window may drop: half a unit in the
// last place of 1.
const truncationBound = 0x1p-54

// windowSuffices reports whether, for every output of an edge block
// (NumGaussians × n), the Gaussians outside the window (each below
// exp(−gaussHalfWindow²)) contribute less than truncationBound in total.
func windowSuffices(edgeW []float64, n int) bool {
	tail := math.Exp(-gaussHalfWindow * gaussHalfWindow)
	for c := 0; c < n; c++ {
		sum := 0.0
		for k := 0; k < NumGaussians; k++ {
			sum += math.Abs(edgeW[k*n+c])
		}
		if sum*tail > truncationBound {
			return false
		}
	}
	return true
}

func transpose(a []float64, rows, cols int) []float64 {
	t := make([]float64, len(a))
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			t[j*rows+i] = a[i*cols+j]
		}
	}
	return t
}

// Workspace holds the buffers of a forward pass. One Workspace serves any
// number of passes, of any model and structure size, but only one at a
// time: use one per goroutine.
type Workspace struct {
	emb   []float64 // kinds × A
	pq    []float64 // rows × 4A
	v     []float64 // atoms × A
	vNext []float64
	z     []float64 // edges of an atom × 2A
	zt    []float64 // edges of an atom × 2A, scratch of gateSum
	acc   []float64 // A
	tied  []float64 // A: the gated messages of a group of tied edges
	h     []float64
	h2    []float64
}

// Predict evaluates the model on each graph. The graphs must have been
// featurised with an atom feature table of the model's InputLen.
func (m *Model) Predict(graphs []*Graph) ([]float64, error) {
	var ws Workspace
	out := make([]float64, len(graphs))
	for i, g := range graphs {
		y, err := m.Eval(&ws, g)
		if err != nil {
			return nil, fmt.Errorf("graph %d: %w", i, err)
		}
		out[i] = y
	}
	return out, nil
}

// Eval evaluates the model on one graph using the buffers of ws: the
// de-normalised regression value, or the class-1 probability of a
// classifier. Neighbours tied at the cut count with the graph's weights
// (the even split of TieTolerance's rule).
func (m *Model) Eval(ws *Workspace, g *Graph) (float64, error) {
	return m.eval(ws, g, g.weight)
}

// EvalTieChoice is Eval with the c-th alternative weights of the tied
// neighbours, c < g.TieChoices(): the value under another admissible
// filling of the slots at the cut (see TieTolerance).
func (m *Model) EvalTieChoice(ws *Workspace, g *Graph, c int) (float64, error) {
	if c < 0 || c >= len(g.alts) {
		return 0, fmt.Errorf("cgcnn: tie choice %d of %d", c, len(g.alts))
	}
	return m.eval(ws, g, g.alts[c])
}

// EvalWithTieSpread returns Eval's value and the lowest and highest of it
// and the values under every alternative of EvalTieChoice (lo = hi = y
// when the graph has none).
func (m *Model) EvalWithTieSpread(ws *Workspace, g *Graph) (y, lo, hi float64, err error) {
	if y, err = m.Eval(ws, g); err != nil {
		return 0, 0, 0, err
	}
	lo, hi = y, y
	for c := range g.alts {
		yc, err := m.eval(ws, g, g.alts[c])
		if err != nil {
			return 0, 0, 0, err
		}
		lo, hi = min(lo, yc), max(hi, yc)
	}
	return y, lo, hi, nil
}

// eval is the forward pass with the weights w of the tied edges (the
// others have g.weight's whatever w says).
func (m *Model) eval(ws *Workspace, g *Graph, w []float64) (float64, error) {
	x, err := m.convolve(ws, g, w)
	if err != nil {
		return 0, err
	}
	n := g.n
	A := m.AtomFeaLen

	// Mean pooling, then the fully connected head.
	width := max(A, m.HFeaLen, m.out.nOut)
	ws.h = grow(ws.h, width)
	ws.h2 = grow(ws.h2, width)
	cur, spare := ws.h[:A], ws.h2
	meanPool(cur, x, n)
	softplusVec(cur, cur)
	for _, fc := range m.fcs {
		next := spare[:fc.nOut]
		fc.apply(next, cur)
		softplusVec(next, next)
		cur, spare = next, cur[:cap(cur)]
	}
	y := spare[:m.out.nOut]
	m.out.apply(y, cur)
	if m.Task == Classification {
		return classOneProbability(y[0], y[1]), nil
	}
	return y[0]*m.Std + m.Mean, nil
}

// CrystalFeatures returns CGCNN's learned crystal representation of a
// graph: the atom feature vectors after the last convolution, averaged
// over the atoms (the pooling of CrystalGraphConvNet.forward, before the
// softplus and the fully connected head), AtomFeaLen numbers written to
// dst when it is large enough. Eval's value is the head applied to them.
func (m *Model) CrystalFeatures(ws *Workspace, g *Graph, dst []float64) ([]float64, error) {
	x, err := m.convolve(ws, g, g.weight)
	if err != nil {
		return nil, err
	}
	dst = grow(dst, m.AtomFeaLen)
	meanPool(dst, x, g.n)
	return dst, nil
}

// meanPool sets dst (length A) to the mean of the n rows of x (n × A).
func meanPool(dst, x []float64, n int) {
	A := len(dst)
	clear(dst)
	for i := 0; i < n; i++ {
		for k, v := range x[i*A : (i+1)*A] {
			dst[k] += v
		}
	}
	for k := range dst {
		dst[k] /= float64(n)
	}
}

// convolve runs the embedding and the convolutions on g, the tied edges
// weighted by w, and returns the atom features, n × AtomFeaLen, in a
// buffer of ws.
func (m *Model) convolve(ws *Workspace, g *Graph, w []float64) ([]float64, error) {
	if g.n == 0 {
		return nil, ErrNoSites
	}
	if g.feaLen != m.inLen {
		return nil, fmt.Errorf("cgcnn: model %s takes %d atom features, the graph has %d", m.Name, m.inLen, g.feaLen)
	}
	if g.width != NumGaussians && m.NeedsFullExpansion() {
		return nil, fmt.Errorf("cgcnn: model %s needs graphs with the full Gaussian expansion (Featurizer.Full)", m.Name)
	}
	A := m.AtomFeaLen
	n, nk := g.n, len(g.kinds)
	ws.emb = grow(ws.emb, nk*A)
	ws.pq = grow(ws.pq, max(n, nk)*4*A)
	ws.v = grow(ws.v, n*A)
	ws.vNext = grow(ws.vNext, n*A)
	ws.z = grow(ws.z, g.maxDeg*2*A)
	ws.zt = grow(ws.zt, g.maxDeg*2*A)
	ws.acc = grow(ws.acc, A)
	ws.tied = grow(ws.tied, A)

	// Embedding of each element present.
	matmulBias(ws.emb, g.kindFea, m.embW, m.embB, nk, A, m.inLen)

	// Layer 0 works on the element embeddings (row of atom i = kindOf[i]);
	// later layers on the atoms' own features.
	x, rows, rowOf := ws.emb, nk, g.kindOf
	for l := range m.convs {
		c := &m.convs[l]
		pq := ws.pq[:rows*4*A]
		matmulBias(pq, x, c.atomW, c.bias, rows, 4*A, A)

		for i := 0; i < n; i++ {
			ri := i
			if rowOf != nil {
				ri = int(rowOf[i])
			}
			self := pq[ri*4*A : ri*4*A+2*A]
			lo, split, hi := int(g.start[i]), int(g.split[i]), int(g.start[i+1])
			for e := lo; e < hi; e++ {
				s := e - lo
				rj := int(g.nbr[e])
				if rowOf != nil {
					rj = int(rowOf[rj])
				}
				// The graph holds Gaussians k0 … k0+width−1 of the edge.
				k0 := int(g.win[e])
				edgeRow(ws.z[s*2*A:(s+1)*2*A], self, pq[rj*4*A+2*A:(rj+1)*4*A],
					g.gauss[e*g.width:(e+1)*g.width], c.edgeW[k0*2*A:], 2*A, g.width)
			}
			// Σ w·message over the edges, by runs of equal weight (the
			// edges before split weigh g.weight's, the others w's).
			acc := ws.acc
			clear(acc)
			for e := lo; e < hi; {
				we := g.weight[e]
				if e >= split {
					we = w[e]
				}
				end := e + 1
				for end < hi && end != split && (end < split && g.weight[end] == we || end > split && w[end] == we) {
					end++
				}
				switch we {
				case 0:
				case 1:
					gateSum(acc, ws.z[(e-lo)*2*A:], ws.zt, A, end-e)
				default:
					t := ws.tied
					clear(t)
					gateSum(t, ws.z[(e-lo)*2*A:], ws.zt, A, end-e)
					for k, x := range t {
						acc[k] += we * x
					}
				}
				e = end
			}
			xi := x[ri*A : (ri+1)*A]
			vi := ws.vNext[i*A : (i+1)*A]
			for k := range acc {
				vi[k] = xi[k] + (acc[k]*c.bn2Scale[k] + c.bn2Shift[k])
			}
			softplusVec(vi, vi)
		}
		ws.v, ws.vNext = ws.vNext, ws.v
		x, rows, rowOf = ws.v, n, nil
	}

	return x, nil
}

// Cost is the arithmetic of one forward pass of a model on a graph.
type Cost struct {
	// DenseFLOPs counts the multiply-adds of the dense products (two
	// FLOPs each) as evaluated: embedding of each element, atom blocks of
	// each convolution once per atom (per element in the first layer),
	// the edge block over each edge's Gaussian window, and the head.
	DenseFLOPs float64
	// ReferenceFLOPs counts the same products in the reference's
	// formulation: embedding per atom, the full [v_i ‖ v_j ‖ u_ij]
	// product per edge.
	ReferenceFLOPs float64
	// Activations counts the gated messages sigmoid·softplus (one per
	// edge and feature) and the softplus of the atom updates and head.
	Activations float64
}

// Cost returns the arithmetic of evaluating m on g.
func (m *Model) Cost(g *Graph) Cost {
	A, H := float64(m.AtomFeaLen), float64(m.HFeaLen)
	n, nk := float64(g.n), float64(len(g.kinds))
	edges := 0.0
	if g.n > 0 {
		edges = float64(g.start[g.n])
	}
	conv := float64(m.NConv)
	head := A*H + float64(m.NH-1)*H*H + H*float64(m.out.nOut)
	c := Cost{
		DenseFLOPs: 2 * (nk*float64(m.inLen)*A + // embedding per element
			nk*A*4*A + (conv-1)*n*A*4*A + // atom blocks: first layer per element
			conv*edges*float64(g.width)*2*A + // edge block over the window
			head),
		ReferenceFLOPs: 2 * (n*float64(m.inLen)*A + conv*edges*(2*A+NumGaussians)*2*A + head),
		Activations:    conv*(edges*A+n*A) + A + float64(m.NH)*H,
	}
	return c
}

// apply sets dst = W·x + b.
func (d dense) apply(dst, x []float64) {
	copy(dst, d.b)
	blas64.Implementation().Dgemv(blas.NoTrans, d.nOut, d.nIn, 1, d.w, d.nIn, x, 1, 1, dst, 1)
}

// classOneProbability is exp(log_softmax(y)[1]) computed as torch's
// LogSoftmax does: y₁ − max − log(Σ exp(y − max)).
func classOneProbability(y0, y1 float64) float64 {
	m := math.Max(y0, y1)
	lse := math.Log(math.Exp(y0-m) + math.Exp(y1-m))
	return math.Exp(y1 - m - lse)
}

// matmulBiasGo sets c = x·w + bias for row-major x (m × k), w (k × n),
// c (m × n), bias (n) added to every row, with gonum's BLAS. The product is
// cut into tiles small enough that gonum runs each serially: the callers
// parallelise over structures, and nested goroutines would only add
// overhead.
func matmulBiasGo(c, x, w, bias []float64, m, n, k int) {
	const rowTile, colTile = 64, 128 // gonum goes parallel at 4 blocks of 64×64
	for r := 0; r < m; r++ {
		copy(c[r*n:(r+1)*n], bias[:n])
	}
	impl := blas64.Implementation()
	for i := 0; i < m; i += rowTile {
		mi := min(rowTile, m-i)
		for j := 0; j < n; j += colTile {
			nj := min(colTile, n-j)
			impl.Dgemm(blas.NoTrans, blas.NoTrans, mi, nj, k, 1, x[i*k:], k, w[j:], n, 1, c[i*n+j:], n)
		}
	}
}
