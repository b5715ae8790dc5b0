package m3gnet

import (
	"fmt"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// evPerA3ToGPa converts eV/Å³ to GPa (1 eV/Å³ = 160.21766208 GPa, the
// factor matgl's Potential uses).
const evPerA3ToGPa = 160.21766208

// Result is the output of one evaluation.
type Result struct {
	// Energy is the total energy (eV), on the scale of MP's uncorrected
	// GGA/GGA+U energies.
	Energy float64
	// Forces are −∂E/∂r for each atom (eV/Å).
	Forces []crystal.Vec3
	// Stress is (1/V) ∂E/∂ε for a homogeneous strain ε of the cell (GPa),
	// ASE's sign convention (positive: tensile, the cell would shrink),
	// as matgl's Potential returns it. Zero for a molecule.
	Stress [3][3]float64
}

// Workspace holds the buffers of one evaluation; reused, it makes repeated
// evaluations of similar systems free of allocation. A Workspace is not
// safe for concurrent use.
type Workspace struct {
	finder crystal.NeighborFinder
	nl     crystal.NeighborList
	frac   []crystal.Vec3
	nbrs   []crystal.Neighbor

	// Graph: bond e goes from atom src[e] to the image dst[e] + shift[e].
	src, dst []int32
	shift    []crystal.Vec3
	vec      []crystal.Vec3
	dist     []float64
	kept     []int32
	tri      []triple
	pos, cnt []int32 // IndexMatgl: position in kept; triples per kept bond
	mark     []int32

	rbf, drbf []float64 // bonds × 9
	fc, dfc   []float64 // three-body cutoff of each bond
	cos       []float64 // triples
	ang, dang []float64 // triples × 3: Y_l^0(cos θ) and derivative
	basis     []float64 // triples × 9

	x    [nBlocks + 1][]float64 // atom features entering block b (atoms × 64)
	e    [nBlocks + 1][]float64 // bond features entering block b (bonds × 64)
	embZ []float64              // bond embedding pre-activation
	a    [nBlocks][]float64     // three-body atom network output (atoms × 9)
	n3   [nBlocks][]float64     // three-body sums per bond (bonds × 9)
	b3   [nBlocks]mlpCache
	e1   [nBlocks][]float64 // bond features after the three-body update
	edge [nBlocks]mlpCache
	node [nBlocks]mlpCache
	ro   mlpCache

	// Per-atom parts of the first layer of a convolution MLP: source and
	// destination blocks of the layer and of the gate.
	ps, pd, gs, gd []float64
	// Scratch.
	t1, t2, t3, t4 []float64
	sc             [5][]float64
	// Adjoints.
	gx, gxb []float64
	ge, geb []float64
	gz, gy  []float64
	ga      []float64
	gn3     []float64
	grbf    []float64
	gfc     []float64
	gbasis  []float64
	gvec    []crystal.Vec3
}

// NewWorkspace returns an empty workspace; it grows to the systems it sees.
func NewWorkspace() *Workspace { return &Workspace{} }

// Evaluate computes the energy, forces and stress of sys into res, reusing
// res.Forces when it has the capacity.
func (m *Model) Evaluate(ws *Workspace, sys *System, res *Result) error {
	if err := m.check(sys); err != nil {
		return err
	}
	if err := m.buildGraph(ws, sys); err != nil {
		return err
	}
	e := m.forward(ws, sys)
	m.backward(ws, sys, res)
	res.Energy = e
	return nil
}

// Energy returns the total energy of sys (eV) without derivatives.
func (m *Model) Energy(ws *Workspace, sys *System) (float64, error) {
	if err := m.check(sys); err != nil {
		return 0, err
	}
	if err := m.buildGraph(ws, sys); err != nil {
		return 0, err
	}
	return m.forward(ws, sys), nil
}

func (m *Model) check(sys *System) error {
	if len(sys.Species) == 0 {
		return fmt.Errorf("%w: no atoms", ErrInput)
	}
	if len(sys.Pos) != len(sys.Species) {
		return fmt.Errorf("%w: %d species but %d positions", ErrInput, len(sys.Species), len(sys.Pos))
	}
	for i, e := range sys.Species {
		if !m.Supports(e) {
			return fmt.Errorf("%w: atom %d: element %v is not among the potential's %d", ErrInput, i, e, len(m.elements))
		}
		for _, x := range sys.Pos[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%w: atom %d has position %v", ErrInput, i, sys.Pos[i])
			}
		}
	}
	return nil
}

// forward evaluates the network on the graph in ws and returns the energy
// (Chen & Ong 2022, Methods; matgl M3GNet.forward and Potential.forward).
func (m *Model) forward(ws *Workspace, sys *System) float64 {
	n, nb, nt := len(sys.Species), len(ws.src), len(ws.tri)

	// Radial basis and three-body cutoff of each bond.
	ws.rbf = grow(ws.rbf, nb*nBasis)
	ws.drbf = grow(ws.drbf, nb*nBasis)
	ws.fc = grow(ws.fc, nb)
	ws.dfc = grow(ws.dfc, nb)
	for e, r := range ws.dist[:nb] {
		m.sbf.eval(r, ws.rbf[e*nBasis:(e+1)*nBasis], ws.drbf[e*nBasis:(e+1)*nBasis])
		ws.fc[e], ws.dfc[e] = polyCutoff(r, m.cutoff3)
	}
	// Three-body basis: g_ln(r_jb) Y_l^0(cos θ), θ the angle between
	// bonds ja and jb (matgl SphericalBesselWithHarmonics with
	// use_phi = false; the radial part is the bond basis at the same
	// cutoff).
	ws.cos = grow(ws.cos, nt)
	ws.ang = grow(ws.ang, nt*maxL)
	ws.dang = grow(ws.dang, nt*maxL)
	ws.basis = grow(ws.basis, nt*nBasis)
	for t := range ws.tri[:nt] {
		tr := &ws.tri[t]
		u, v := ws.vec[tr.ja], ws.vec[tr.jb]
		c := u.Dot(v) / (ws.dist[tr.ja] * ws.dist[tr.jb])
		c = math.Max(-1+cosClamp, math.Min(1-cosClamp, c))
		ws.cos[t] = c
		var y, dy [maxL]float64
		legendre(c, &y, &dy)
		copy(ws.ang[t*maxL:], y[:])
		copy(ws.dang[t*maxL:], dy[:])
		g := ws.rbf[int(tr.jb)*nBasis:]
		for l := 0; l < maxL; l++ {
			for k := l * maxN; k < (l+1)*maxN; k++ {
				ws.basis[t*nBasis+k] = g[k] * y[l]
			}
		}
	}

	// Embedding: atoms by element, bonds by a dense layer of the basis.
	ws.x[0] = grow(ws.x[0], n*dim)
	for i, el := range sys.Species {
		r := m.row[el]
		copy(ws.x[0][i*dim:(i+1)*dim], m.embedding[r*dim:(r+1)*dim])
	}
	ws.embZ = grow(ws.embZ, nb*dim)
	ws.e[0] = grow(ws.e[0], nb*dim)
	mulBias(ws.embZ, ws.rbf, m.edgeEmbed.wt, m.edgeEmbed.b, nb, nBasis, dim)
	for i, z := range ws.embZ[:nb*dim] {
		ws.e[0][i] = silu(z)
	}

	ws.t1 = grow(ws.t1, max(n, nb)*dim)
	ws.t2 = grow(ws.t2, max(n, nb)*dim)
	for b := range m.blocks {
		m.forwardBlock(ws, b, n, nb, nt)
	}

	// Readout: a gated MLP per atom, summed (matgl WeightedReadOut).
	ws.ro.ensure(&m.readout, n)
	m.readout.first(&ws.ro, ws.x[nBlocks], n)
	out := ws.t1[:n]
	m.readout.rest(&ws.ro, out, ws.t2, n)
	sum := 0.0
	for _, o := range out {
		sum += o
	}
	energy := m.scale*sum + m.shift
	for _, el := range sys.Species {
		energy += m.ref[m.row[el]]
	}
	return energy
}

// forwardBlock runs block b: the three-body update of the bond features,
// then the graph convolution of bonds and atoms (matgl ThreeBodyInteractions
// and M3GNetGraphConv).
func (m *Model) forwardBlock(ws *Workspace, b, n, nb, nt int) {
	blk := &m.blocks[b]
	x, e := ws.x[b], ws.e[b]

	// Three-body: φ = σ(W x + b) per atom; each triple adds
	// basis ⊙ φ(end atom) · f_c(r_c1) f_c(r_c2) to its bond; the bond
	// features gain the gated MLP of that sum.
	ws.a[b] = grow(ws.a[b], n*nBasis)
	a := ws.a[b]
	mulBias(a, x, blk.atom3.wt, blk.atom3.b, n, dim, nBasis)
	for i, z := range a {
		a[i] = sigmoid(z)
	}
	ws.n3[b] = grow(ws.n3[b], nb*nBasis)
	n3 := ws.n3[b]
	clear(n3)
	for t := range ws.tri[:nt] {
		tr := &ws.tri[t]
		w := ws.fc[tr.c1] * ws.fc[tr.c2]
		if w == 0 {
			continue
		}
		bs := ws.basis[t*nBasis : (t+1)*nBasis]
		at := a[int(tr.end)*nBasis : (int(tr.end)+1)*nBasis]
		dst := n3[int(tr.tgt)*nBasis : (int(tr.tgt)+1)*nBasis]
		for k := range dst {
			dst[k] += bs[k] * at[k] * w
		}
	}
	ws.b3[b].ensure(&blk.bond3, nb)
	blk.bond3.first(&ws.b3[b], n3, nb)
	ws.e1[b] = grow(ws.e1[b], nb*dim)
	e1 := ws.e1[b]
	blk.bond3.rest(&ws.b3[b], e1, ws.t2, nb)
	for i := range e1 {
		e1[i] += e[i]
	}

	// Bond update: e ← e + GatedMLP([x_src, x_dst, e]) ⊙ (W_e g(r)).
	ws.edge[b].ensure(&blk.edgeMLP, nb)
	m.convFirst(ws, &blk.edgeMLP, &ws.edge[b], x, e1, n, nb)
	v := ws.t1[:nb*dim]
	blk.edgeMLP.rest(&ws.edge[b], v, ws.t2, nb)
	ws.e[b+1] = grow(ws.e[b+1], nb*dim)
	e2 := ws.e[b+1]
	w := ws.t2[:nb*dim]
	mulBias(w, ws.rbf, blk.edgeW.wt, nil, nb, nBasis, dim)
	for i := range e2 {
		e2[i] = e1[i] + v[i]*w[i]
	}

	// Atom update: x_i ← x_i + Σ_{bonds into i} GatedMLP([x_src, x_dst, e]) ⊙ (W_n g(r)).
	ws.node[b].ensure(&blk.nodeMLP, nb)
	m.convFirst(ws, &blk.nodeMLP, &ws.node[b], x, e2, n, nb)
	u := ws.t1[:nb*dim]
	blk.nodeMLP.rest(&ws.node[b], u, ws.t2, nb)
	mulBias(w, ws.rbf, blk.nodeW.wt, nil, nb, nBasis, dim)
	ws.x[b+1] = grow(ws.x[b+1], n*dim)
	xn := ws.x[b+1]
	copy(xn, x[:n*dim])
	for k := 0; k < nb; k++ {
		dst := xn[int(ws.dst[k])*dim : (int(ws.dst[k])+1)*dim]
		uk, wk := u[k*dim:(k+1)*dim], w[k*dim:(k+1)*dim]
		for c := range dst {
			dst[c] += uk[c] * wk[c]
		}
	}
}

// convFirst computes the first layer and gate of a convolution MLP on the
// rows [x_src, x_dst, e] of every bond. The 192 × 64 weights are split
// into their source, destination and bond blocks: the atom blocks are
// applied once per atom and gathered per bond.
func (m *Model) convFirst(ws *Workspace, g *gated, c *mlpCache, x, e []float64, n, nb int) {
	ws.ps = grow(ws.ps, n*dim)
	ws.pd = grow(ws.pd, n*dim)
	ws.gs = grow(ws.gs, n*dim)
	ws.gd = grow(ws.gd, n*dim)
	l, gt := &g.layers[0], &g.gates[0]
	const blk = dim * dim
	mulBias(ws.ps, x, l.wt[:blk], nil, n, dim, dim)
	mulBias(ws.pd, x, l.wt[blk:2*blk], nil, n, dim, dim)
	mulBias(ws.gs, x, gt.wt[:blk], nil, n, dim, dim)
	mulBias(ws.gd, x, gt.wt[blk:2*blk], nil, n, dim, dim)
	mulBias(c.z[0], e, l.wt[2*blk:], l.b, nb, dim, dim)
	mulBias(c.y[0], e, gt.wt[2*blk:], gt.b, nb, dim, dim)
	for k := 0; k < nb; k++ {
		s, d := int(ws.src[k])*dim, int(ws.dst[k])*dim
		z, y := c.z[0][k*dim:(k+1)*dim], c.y[0][k*dim:(k+1)*dim]
		ps, pd := ws.ps[s:s+dim], ws.pd[d:d+dim]
		gs, gd := ws.gs[s:s+dim], ws.gd[d:d+dim]
		for i := range z {
			z[i] += ps[i] + pd[i]
			y[i] += gs[i] + gd[i]
		}
	}
}
