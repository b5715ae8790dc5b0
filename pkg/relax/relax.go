// Package relax relaxes atomic structures on a potential energy surface:
// FIRE (Bitzek et al., PRL 97, 170201 (2006)) on the positions and, unless
// the cell is fixed, on the cell through the Fréchet cell filter of ASE
// (ase.filters.FrechetCellFilter): the cell is parameterised by the
// logarithm of its deformation gradient, so that the optimiser moves
// positions and strain together. The defaults follow Matbench Discovery's
// protocol (fmax 0.05 eV/Å, at most 500 steps) and ASE's FIRE parameters.
//
// Symmetry is not enforced (no FixSymmetry): a structure keeps its
// symmetry only as far as the forces and stress respect it.
package relax

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
)

// Potential evaluates the energy (eV), forces (eV/Å) and stress (GPa,
// (1/V) ∂E/∂ε, ASE's sign) of a system.
type Potential interface {
	Evaluate(sys *m3gnet.System, res *m3gnet.Result) error
}

// ErrDiverged is returned when the relaxation meets a cell that is no
// longer a cell (singular) or values that are not finite.
var ErrDiverged = errors.New("relaxation diverged")

// Options controls a relaxation. Zero values take the defaults.
type Options struct {
	// FMax is the convergence threshold (eV/Å) on the largest row of the
	// generalised forces: atoms' forces and, with a variable cell, the
	// three rows of the cell's (default 0.05).
	FMax float64
	// MaxSteps bounds the FIRE steps (default 500).
	MaxSteps int
	// FixedCell relaxes the positions only. Molecules always have a
	// fixed (absent) cell.
	FixedCell bool
	// CellFactor scales the logarithmic strain in the optimiser's
	// coordinates (ASE's exp_cell_factor; default the number of atoms).
	CellFactor float64
	// Pressure is an external hydrostatic pressure (GPa; default 0).
	Pressure float64
}

func (o Options) withDefaults(natoms int) Options {
	if o.FMax <= 0 {
		o.FMax = 0.05
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = 500
	}
	if o.CellFactor <= 0 {
		o.CellFactor = float64(natoms)
	}
	return o
}

// FIRE parameters: ASE's defaults (ase.optimize.FIRE).
const (
	fireDt      = 0.1
	fireMaxStep = 0.2 // Å (and cell-factor-scaled strain)
	fireDtMax   = 1.0
	fireNMin    = 5
	fireFInc    = 1.1
	fireFDec    = 0.5
	fireAStart  = 0.1
	fireFA      = 0.99
)

// gpaToEvPerA3 converts GPa to eV/Å³.
const gpaToEvPerA3 = 1 / 160.21766208

// Result is the outcome of a relaxation.
type Result struct {
	// System is the relaxed structure.
	System *m3gnet.System
	// Converged reports whether the largest generalised force fell below
	// FMax within MaxSteps.
	Converged bool
	// Steps is the number of FIRE steps taken.
	Steps int
	// Energy (eV), Forces (eV/Å) and Stress (GPa) of the relaxed system.
	Energy float64
	Forces []crystal.Vec3
	Stress [3][3]float64
	// FMax is the largest generalised force at the end (eV/Å).
	FMax float64
	// InitialEnergy is the energy of the starting structure (eV).
	InitialEnergy float64
}

// Relax minimises the energy of sys (which is not modified) and returns the
// relaxed structure. The context is checked between steps.
func Relax(ctx context.Context, pot Potential, sys *m3gnet.System, opt Options) (*Result, error) {
	n := len(sys.Pos)
	if n == 0 {
		return nil, fmt.Errorf("relax: no atoms")
	}
	opt = opt.withDefaults(n)
	varCell := sys.Periodic && !opt.FixedCell
	rows := n
	if varCell {
		rows += 3
	}
	fl := newFilter(pot, sys, varCell, opt)
	q, f, v := fl.q, fl.f, make([]crystal.Vec3, rows)
	evaluate := fl.evaluate
	res := &fl.res
	cur := fl.cur

	fmax, err := evaluate()
	if err != nil {
		return nil, err
	}
	out := &Result{InitialEnergy: res.Energy}
	dt, alpha, nPos := fireDt, fireAStart, 0
	started := false
	for out.Steps < opt.MaxSteps && fmax >= opt.FMax {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// FIRE as ASE implements it.
		if started {
			vf := dot(v, f)
			if vf > 0 {
				vn, fn := math.Sqrt(dot(v, v)), math.Sqrt(dot(f, f))
				for i := range v {
					v[i] = v[i].Scale(1 - alpha).Add(f[i].Scale(alpha * vn / fn))
				}
				if nPos > fireNMin {
					dt = math.Min(dt*fireFInc, fireDtMax)
					alpha *= fireFA
				}
				nPos++
			} else {
				clear(v)
				alpha = fireAStart
				dt *= fireFDec
				nPos = 0
			}
		}
		started = true
		for i := range v {
			v[i] = v[i].Add(f[i].Scale(dt))
		}
		step := math.Sqrt(dot(v, v)) * dt
		scale := dt
		if step > fireMaxStep {
			scale = dt * fireMaxStep / step
		}
		for i := range q {
			q[i] = q[i].Add(v[i].Scale(scale))
		}
		out.Steps++
		if fmax, err = evaluate(); err != nil {
			return nil, err
		}
	}
	out.Converged = fmax < opt.FMax
	out.FMax = fmax
	out.System = cur.Copy()
	out.Energy = res.Energy
	out.Forces = append([]crystal.Vec3(nil), res.Forces...)
	out.Stress = res.Stress
	return out, nil
}

// filter maps the optimiser's coordinates to a system and the potential's
// forces and stress to generalised forces (ASE's FrechetCellFilter).
type filter struct {
	pot     Potential
	opt     Options
	varCell bool
	n       int
	cell0   mat3
	// q holds the positions mapped back to the starting cell,
	// r0 = r F^{−T}, then (variable cell) c·U with U = log F, F the
	// deformation gradient (cell = cell0 Fᵀ, r = r0 Fᵀ, F = 1 at the
	// start) and c the cell factor.
	q   []crystal.Vec3
	f   []crystal.Vec3 // −∂E/∂q
	cur *m3gnet.System
	res m3gnet.Result
}

func newFilter(pot Potential, sys *m3gnet.System, varCell bool, opt Options) *filter {
	n := len(sys.Pos)
	rows := n
	if varCell {
		rows += 3
	}
	fl := &filter{pot: pot, opt: opt, varCell: varCell, n: n, cell0: sys.Cell,
		q: make([]crystal.Vec3, rows), f: make([]crystal.Vec3, rows), cur: sys.Copy()}
	copy(fl.q, sys.Pos)
	return fl
}

// evaluate sets cur from q, evaluates the potential and the generalised
// forces f, and returns the largest row norm of f.
func (fl *filter) evaluate() (float64, error) {
	n, q, f, cur, opt := fl.n, fl.q, fl.f, fl.cur, fl.opt
	res := &fl.res
	F := mat3{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	var U mat3
	if fl.varCell {
		for i := 0; i < 3; i++ {
			U[i] = q[n+i].Scale(1 / opt.CellFactor)
		}
		F = expm3(U)
		Ft := transpose3(F)
		cur.Cell = mul3(fl.cell0, Ft)
		for i := 0; i < n; i++ {
			cur.Pos[i] = rowTimes(q[i], Ft)
		}
	} else {
		copy(cur.Pos, q[:n])
	}
	if err := fl.pot.Evaluate(cur, res); err != nil {
		return 0, err
	}
	if math.IsNaN(res.Energy) || math.IsInf(res.Energy, 0) {
		return 0, fmt.Errorf("%w: energy %v", ErrDiverged, res.Energy)
	}
	for i := 0; i < n; i++ {
		f[i] = rowTimes(res.Forces[i], F) // −∂E/∂r0 = (−∂E/∂r) F
	}
	if fl.varCell {
		Finv, ok := inv3(F)
		if !ok {
			return 0, fmt.Errorf("%w: singular deformation", ErrDiverged)
		}
		vol := math.Abs(det3(cur.Cell))
		// ∂E/∂F = V (σ + p)ᵀ F^{−T} (σ in eV/Å³), and ∂E/∂U = L(Uᵀ, ∂E/∂F),
		// the adjoint of the Fréchet derivative of exp at U applied to it.
		var s mat3
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				s[i][j] = res.Stress[j][i] * gpaToEvPerA3 * vol
			}
			s[i][i] += opt.Pressure * gpaToEvPerA3 * vol
		}
		G := mul3(s, transpose3(Finv))
		dU := expmFrechet(transpose3(U), G)
		for i := 0; i < 3; i++ {
			f[n+i] = crystal.Vec3(dU[i]).Scale(-1 / opt.CellFactor)
		}
	}
	fmax := 0.0
	for _, fi := range f {
		fmax = math.Max(fmax, fi.Norm())
	}
	if math.IsNaN(fmax) || math.IsInf(fmax, 0) {
		return 0, fmt.Errorf("%w: force %v", ErrDiverged, fmax)
	}
	return fmax, nil
}

func rowTimes(r crystal.Vec3, m mat3) crystal.Vec3 {
	var out crystal.Vec3
	for j := 0; j < 3; j++ {
		for k := 0; k < 3; k++ {
			out[j] += r[k] * m[k][j]
		}
	}
	return out
}

func dot(a, b []crystal.Vec3) float64 {
	s := 0.0
	for i := range a {
		s += a[i].Dot(b[i])
	}
	return s
}

func det3(a mat3) float64 {
	return crystal.Vec3(a[0]).Dot(crystal.Vec3(a[1]).Cross(crystal.Vec3(a[2])))
}
