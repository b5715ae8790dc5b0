package m3gnet

import (
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// backward differentiates the energy computed by forward with respect to
// every bond vector (reverse mode, by hand: each step below is the adjoint
// of a step of forward, in reverse order), then gathers the forces
// F_i = −∂E/∂r_i and the virial Σ_bonds r ⊗ ∂E/∂r, which is V·σ for the
// strain derivative σ = (1/V) ∂E/∂ε of positions and cell deformed
// together (r → r(1 + ε), matgl Potential.forward).
func (m *Model) backward(ws *Workspace, sys *System, res *Result) {
	n, nb, nt := len(sys.Species), len(ws.src), len(ws.tri)
	wide := max(n, nb) * dim
	ws.gx = grow(ws.gx, n*dim)
	ws.gxb = grow(ws.gxb, n*dim)
	ws.ge = grow(ws.ge, nb*dim)
	ws.geb = grow(ws.geb, nb*dim)
	ws.gz = grow(ws.gz, wide)
	ws.gy = grow(ws.gy, wide)
	ws.t3 = grow(ws.t3, wide)
	ws.t4 = grow(ws.t4, wide)
	for i := range ws.sc {
		ws.sc[i] = grow(ws.sc[i], wide)
	}
	ws.grbf = grow(ws.grbf, nb*nBasis)
	ws.gfc = grow(ws.gfc, nb)
	ws.gbasis = grow(ws.gbasis, nt*nBasis)
	clear(ws.grbf)
	clear(ws.gfc)
	clear(ws.gbasis)

	// Readout: ∂E/∂out_i = data_std for every atom.
	gout := ws.t3[:n]
	for i := range gout {
		gout[i] = m.scale
	}
	m.readout.back(&ws.ro, gout, ws.gz, ws.gy, &ws.sc, n)
	gx := ws.gx[:n*dim]
	clear(gx)
	l, gt := &m.readout.layers[0], &m.readout.gates[0]
	mulAdd(gx, ws.gz, l.w, n, l.out, l.in)
	mulAdd(gx, ws.gy, gt.w, n, gt.out, gt.in)
	ge := ws.ge[:nb*dim]
	clear(ge) // the bond features of the last block are not read out

	for b := nBlocks - 1; b >= 0; b-- {
		m.backwardBlock(ws, b, n, nb, nt)
	}

	// Bond embedding: e⁰ = silu(W g(r) + b).
	gz := ws.gz[:nb*dim]
	for i, z := range ws.embZ[:nb*dim] {
		gz[i] = ws.ge[i] * dsilu(z)
	}
	mulAdd(ws.grbf, gz, m.edgeEmbed.w, nb, dim, nBasis)

	// Geometry: from the basis functions to bond lengths and angles, and
	// from those to bond vectors.
	ws.gvec = grow(ws.gvec, nb)
	gvec := ws.gvec
	clear(gvec)
	for t := range ws.tri[:nt] {
		tr := &ws.tri[t]
		gb := ws.gbasis[t*nBasis : (t+1)*nBasis]
		g := ws.rbf[int(tr.jb)*nBasis : (int(tr.jb)+1)*nBasis]
		dg := ws.drbf[int(tr.jb)*nBasis : (int(tr.jb)+1)*nBasis]
		y, dy := ws.ang[t*maxL:(t+1)*maxL], ws.dang[t*maxL:(t+1)*maxL]
		gr, gc := 0.0, 0.0
		for l := 0; l < maxL; l++ {
			for k := l * maxN; k < (l+1)*maxN; k++ {
				gr += gb[k] * dg[k] * y[l]
				gc += gb[k] * g[k] * dy[l]
			}
		}
		r := ws.dist[tr.jb]
		u := ws.vec[tr.jb]
		gvec[tr.jb] = gvec[tr.jb].Add(u.Scale(gr / r))
		c := ws.cos[t]
		if gc == 0 || c <= -1+cosClamp || c >= 1-cosClamp {
			continue
		}
		// cos θ = a·b/(|a||b|): ∂/∂a = b/(|a||b|) − cos θ a/|a|².
		va, vb := ws.vec[tr.ja], ws.vec[tr.jb]
		ra, rb := ws.dist[tr.ja], ws.dist[tr.jb]
		ga := vb.Scale(1 / (ra * rb)).Sub(va.Scale(c / (ra * ra)))
		gbv := va.Scale(1 / (ra * rb)).Sub(vb.Scale(c / (rb * rb)))
		gvec[tr.ja] = gvec[tr.ja].Add(ga.Scale(gc))
		gvec[tr.jb] = gvec[tr.jb].Add(gbv.Scale(gc))
	}
	for e := 0; e < nb; e++ {
		gr := ws.gfc[e] * ws.dfc[e]
		g := ws.grbf[e*nBasis : (e+1)*nBasis]
		dg := ws.drbf[e*nBasis : (e+1)*nBasis]
		for k := range g {
			gr += g[k] * dg[k]
		}
		if r := ws.dist[e]; r > 0 {
			gvec[e] = gvec[e].Add(ws.vec[e].Scale(gr / r))
		}
	}

	// Bond e is r_dst + shift − r_src.
	res.Forces = grow(res.Forces, n)
	clear(res.Forces)
	var vir [3][3]float64
	for e := 0; e < nb; e++ {
		g := gvec[e]
		s, d := ws.src[e], ws.dst[e]
		res.Forces[d] = res.Forces[d].Sub(g)
		res.Forces[s] = res.Forces[s].Add(g)
		v := ws.vec[e]
		for k := 0; k < 3; k++ {
			for j := 0; j < 3; j++ {
				vir[k][j] += v[k] * g[j]
			}
		}
	}
	res.Stress = [3][3]float64{}
	if sys.Periodic {
		c := sys.Cell
		vol := math.Abs(crystal.Vec3(c[0]).Dot(crystal.Vec3(c[1]).Cross(crystal.Vec3(c[2]))))
		for k := 0; k < 3; k++ {
			for j := 0; j < 3; j++ {
				res.Stress[k][j] = vir[k][j] / vol * evPerA3ToGPa
			}
		}
	}
}

// backwardBlock takes ws.gx and ws.ge, the adjoints of the atom and bond
// features leaving block b, to those entering it, adding to ws.grbf,
// ws.gfc and ws.gbasis on the way.
func (m *Model) backwardBlock(ws *Workspace, b, n, nb, nt int) {
	blk := &m.blocks[b]
	gx, ge := ws.gx[:n*dim], ws.ge[:nb*dim]
	gxb, geb := ws.gxb[:n*dim], ws.geb[:nb*dim]

	// Atom update. x' = x + Σ_{bonds into i} u ⊙ w, w = W_n g(r).
	copy(gxb, gx)
	gmess := ws.t3[:nb*dim]
	for k := 0; k < nb; k++ {
		copy(gmess[k*dim:(k+1)*dim], gx[int(ws.dst[k])*dim:(int(ws.dst[k])+1)*dim])
	}
	u := ws.t1[:nb*dim]
	blk.nodeMLP.output(&ws.node[b], u, nb)
	w := ws.t2[:nb*dim]
	mulBias(w, ws.rbf, blk.nodeW.wt, nil, nb, nBasis, dim)
	gu := ws.t4[:nb*dim]
	for i := range gu {
		gu[i] = gmess[i] * w[i]
		gmess[i] *= u[i] // now the adjoint of w
	}
	mulAdd(ws.grbf, gmess, blk.nodeW.w, nb, dim, nBasis)
	// The bond features e2 entering the atom update are those leaving the
	// block, whose adjoint is ge.
	copy(geb, ge)
	m.convBack(ws, &blk.nodeMLP, &ws.node[b], gu, gxb, geb, n, nb)

	// Bond update. e2 = e1 + v ⊙ w, w = W_e g(r).
	v := ws.t1[:nb*dim]
	blk.edgeMLP.output(&ws.edge[b], v, nb)
	mulBias(w, ws.rbf, blk.edgeW.wt, nil, nb, nBasis, dim)
	gv := ws.t4[:nb*dim]
	gw := ws.t3[:nb*dim]
	for i := range gv {
		gv[i] = geb[i] * w[i]
		gw[i] = geb[i] * v[i]
	}
	mulAdd(ws.grbf, gw, blk.edgeW.w, nb, dim, nBasis)
	// geb is now the adjoint of e1 (the residual path), plus what flows
	// through the MLP.
	m.convBack(ws, &blk.edgeMLP, &ws.edge[b], gv, gxb, geb, n, nb)

	// Three-body update. e1 = e + silu(W n3) ⊙ σ(W_g n3).
	ws.gn3 = grow(ws.gn3, nb*nBasis)
	gn3 := ws.gn3
	clear(gn3)
	gcopy := ws.t3[:nb*dim]
	copy(gcopy, geb)
	blk.bond3.back(&ws.b3[b], gcopy, ws.gz, ws.gy, &ws.sc, nb)
	l, gt := &blk.bond3.layers[0], &blk.bond3.gates[0]
	mulAdd(gn3, ws.gz, l.w, nb, l.out, l.in)
	mulAdd(gn3, ws.gy, gt.w, nb, gt.out, gt.in)
	a := ws.a[b]
	ws.ga = grow(ws.ga, n*nBasis)
	ga := ws.ga
	clear(ga)
	for t := range ws.tri[:nt] {
		tr := &ws.tri[t]
		wc := ws.fc[tr.c1] * ws.fc[tr.c2]
		g := gn3[int(tr.tgt)*nBasis : (int(tr.tgt)+1)*nBasis]
		bs := ws.basis[t*nBasis : (t+1)*nBasis]
		at := a[int(tr.end)*nBasis : (int(tr.end)+1)*nBasis]
		gat := ga[int(tr.end)*nBasis : (int(tr.end)+1)*nBasis]
		gb := ws.gbasis[t*nBasis : (t+1)*nBasis]
		gwc := 0.0
		for k := range g {
			gb[k] += g[k] * at[k] * wc
			gat[k] += g[k] * bs[k] * wc
			gwc += g[k] * bs[k] * at[k]
		}
		ws.gfc[tr.c1] += gwc * ws.fc[tr.c2]
		ws.gfc[tr.c2] += gwc * ws.fc[tr.c1]
	}
	// φ = σ(W x + b).
	for i, s := range a {
		ga[i] *= s * (1 - s)
	}
	mulAdd(gxb, ga, blk.atom3.w, n, nBasis, dim)

	copy(gx, gxb)
	copy(ge, geb) // e1 = e + …: the residual carries the adjoint through
}

// convBack back-propagates gout through a convolution MLP whose input rows
// are [x_src, x_dst, e]: it adds the adjoint of the atom features to gx
// (atoms × 64) and of the bond features to ge (bonds × 64).
func (m *Model) convBack(ws *Workspace, g *gated, c *mlpCache, gout, gx, ge []float64, n, nb int) {
	g.back(c, gout, ws.gz, ws.gy, &ws.sc, nb)
	l, gt := &g.layers[0], &g.gates[0]
	gz, gy := ws.gz[:nb*dim], ws.gy[:nb*dim]
	mulAdd(ge, gz, l.blocks[2], nb, dim, dim)
	mulAdd(ge, gy, gt.blocks[2], nb, dim, dim)
	// Gather per atom, then apply the atom blocks once per atom.
	ws.ps = grow(ws.ps, n*dim)
	ws.pd = grow(ws.pd, n*dim)
	ws.gs = grow(ws.gs, n*dim)
	ws.gd = grow(ws.gd, n*dim)
	clear(ws.ps)
	clear(ws.pd)
	clear(ws.gs)
	clear(ws.gd)
	for k := 0; k < nb; k++ {
		s, d := int(ws.src[k])*dim, int(ws.dst[k])*dim
		z, y := gz[k*dim:(k+1)*dim], gy[k*dim:(k+1)*dim]
		ps, pd := ws.ps[s:s+dim], ws.pd[d:d+dim]
		gs, gd := ws.gs[s:s+dim], ws.gd[d:d+dim]
		for i := range z {
			ps[i] += z[i]
			pd[i] += z[i]
			gs[i] += y[i]
			gd[i] += y[i]
		}
	}
	mulAdd(gx, ws.ps, l.blocks[0], n, dim, dim)
	mulAdd(gx, ws.pd, l.blocks[1], n, dim, dim)
	mulAdd(gx, ws.gs, gt.blocks[0], n, dim, dim)
	mulAdd(gx, ws.gd, gt.blocks[1], n, dim, dim)
}
