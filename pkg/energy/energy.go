// Package energy gives the energies of crystal structures on the M3GNet
// universal potential (pkg/m3gnet), and what follows from them: a single
// point (total energy, energy per atom, forces, stress), a relaxation of
// positions and cell (pkg/relax: FIRE with the Fréchet cell filter, fmax
// 0.05 eV/Å and at most 500 steps by default), the formation energy per
// atom of the relaxed structure on the Materials Project's scale (MP's
// elemental reference energies after an MP correction scheme,
// pkg/mpcompat; the legacy scheme by default, the one that agrees better
// with the reference formation energies, see pkg/mpcompat) and its energy
// above the convex hull of the reference phases (pkg/hull over the
// reference tables' phases, as pkg/oracle builds it).
//
// A Calculator is safe for concurrent use: each call borrows a workspace
// of the potential from a pool, so a batch spread over goroutines
// (RelaxAll) allocates the network's buffers once per goroutine.
//
// What cannot be computed for a structure that relaxed is not an error of
// the relaxation: a formation energy without an elemental reference, or a
// hull without reference phases for one of its elements, is left out and
// the reason is recorded in Relaxed.Warnings.
package energy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/m3gnet"
	"github.com/crucible-sci/crucible/pkg/mpcompat"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/relax"
)

// DefaultScheme is the MP correction scheme a Calculator applies unless
// told otherwise: against mp_e_form.csv (corrected with it) it gives
// M3GNet's relaxed energies an MAE of 0.028 eV/atom, MP2020 0.086
// (pkg/mpcompat's TestMeasureFormationEnergy).
const DefaultScheme = mpcompat.Legacy

// Hull places a composition with a formation energy per atom (eV/atom)
// relative to a convex hull. *ReferenceHull is the reference phases';
// *hull.Cache satisfies it too.
type Hull interface {
	Query(comp crystal.Composition, formationEnergyPerAtom float64) (hull.Result, error)
}

// Calculator computes energies of structures with a potential, and
// formation energies and hull distances when it has the data for them.
type Calculator struct {
	model  *m3gnet.Model
	compat *mpcompat.Compat // nil: no formation energies
	scheme mpcompat.Scheme
	hull   Hull // nil: no hull distances
	pool   *sync.Pool
}

// New returns a calculator on model. compat (MP's corrections and
// elemental references) and h (the hull) may be nil: the corresponding
// results are then left out of relaxations. The scheme is DefaultScheme.
func New(model *m3gnet.Model, compat *mpcompat.Compat, h Hull) *Calculator {
	return &Calculator{model: model, compat: compat, scheme: DefaultScheme, hull: h,
		pool: &sync.Pool{New: func() any { return m3gnet.NewCalculator(model) }}}
}

// WithScheme returns a calculator sharing c's potential and data that
// applies correction scheme s.
func (c *Calculator) WithScheme(s mpcompat.Scheme) *Calculator {
	d := *c
	d.scheme = s
	return &d
}

// Scheme is the correction scheme of formation energies.
func (c *Calculator) Scheme() mpcompat.Scheme { return c.scheme }

// Model is the potential.
func (c *Calculator) Model() *m3gnet.Model { return c.model }

// Open loads from a Crucible data directory the potential
// (models/m3gnet/), MP's correction schemes and elemental references
// (data/*.yaml, data/*.json.gz) and the reference tables whose phases make
// the hull (data/*.csv), in parallel. Missing files are an error matching
// datadir.ErrMissing that lists them.
func Open(dir string) (*Calculator, error) { return open(dir, nil, true) }

// OpenWithReference is Open with reference tables already loaded (an
// oracle's, pkg/oracle's Oracle.Reference): the hull is built over their
// phases.
func OpenWithReference(dir string, ref *reference.DB) (*Calculator, error) {
	return open(dir, ref, false)
}

// OpenFormation loads the potential and MP's corrections and elemental
// references: a calculator of relaxations and formation energies, without
// hull distances.
func OpenFormation(dir string) (*Calculator, error) { return open(dir, nil, false) }

// open loads the potential and the corrections, and the reference tables
// too with tables; the hull is built over the tables' phases, or ref's.
func open(dir string, ref *reference.DB, tables bool) (*Calculator, error) {
	need := []string{
		m3gnet.DataPath + "/state.pt", m3gnet.DataPath + "/model.json",
		mpcompat.FileMP2020, mpcompat.FileLegacy, mpcompat.FileReferences,
	}
	if tables {
		for _, t := range reference.Tables() {
			need = append(need, datadir.TablesDir+"/"+t.File())
		}
	}
	if err := datadir.Require(dir, need...); err != nil {
		return nil, fmt.Errorf("open energy calculator: %w", err)
	}
	var (
		model            *m3gnet.Model
		compat           *mpcompat.Compat
		mErr, cErr, rErr error
		wg               sync.WaitGroup
	)
	wg.Go(func() { model, mErr = m3gnet.LoadData(dir) })
	wg.Go(func() { compat, cErr = mpcompat.Load(dir) })
	if tables {
		wg.Go(func() { ref, rErr = reference.Load(datadir.Tables(dir)) })
	}
	wg.Wait()
	if err := errors.Join(mErr, cErr, rErr); err != nil {
		return nil, fmt.Errorf("open energy calculator: %w", err)
	}
	if ref == nil {
		return New(model, compat, nil), nil
	}
	h, err := NewReferenceHull(ref)
	if err != nil {
		return nil, err
	}
	return New(model, compat, h), nil
}

// OpenPotential loads the potential alone from a Crucible data directory:
// a calculator for single points and relaxations, without formation
// energies or hull distances.
func OpenPotential(dir string) (*Calculator, error) {
	if err := datadir.Require(dir, m3gnet.DataPath+"/state.pt", m3gnet.DataPath+"/model.json"); err != nil {
		return nil, fmt.Errorf("open energy calculator: %w", err)
	}
	model, err := m3gnet.LoadData(dir)
	if err != nil {
		return nil, fmt.Errorf("open energy calculator: %w", err)
	}
	return New(model, nil, nil), nil
}

// Point is the potential's answer for one structure.
type Point struct {
	// Energy is the total energy (eV) on the scale of MP's uncorrected
	// GGA/GGA+U energies; EnergyPerAtom is Energy over the number of
	// sites.
	Energy        float64
	EnergyPerAtom float64
	// Forces are −∂E/∂r on each site, in the structure's site order
	// (eV/Å).
	Forces []crystal.Vec3
	// Stress is (1/V) ∂E/∂ε (GPa), ASE's sign convention: positive is
	// tensile, the cell would shrink.
	Stress [3][3]float64
}

// Point evaluates the potential on st.
func (c *Calculator) Point(st *crystal.Structure) (*Point, error) {
	if st == nil {
		return nil, ErrNoStructure
	}
	calc := c.pool.Get().(*m3gnet.Calculator)
	defer c.pool.Put(calc)
	var res m3gnet.Result
	if err := calc.Evaluate(m3gnet.FromStructure(st), &res); err != nil {
		return nil, err
	}
	return newPoint(res.Energy, res.Forces, res.Stress), nil
}

func newPoint(e float64, f []crystal.Vec3, s [3][3]float64) *Point {
	return &Point{Energy: e, EnergyPerAtom: e / float64(len(f)),
		Forces: append([]crystal.Vec3(nil), f...), Stress: s}
}

// MaxForce is the largest force on a site (eV/Å).
func (p *Point) MaxForce() float64 {
	m := 0.0
	for _, f := range p.Forces {
		m = math.Max(m, f.Norm())
	}
	return m
}

// Formation is a formation energy per atom on MP's scale.
type Formation struct {
	// EnergyPerAtom is (E + Σ corrections − Σ_el n_el μ_el) / N (eV/atom).
	EnergyPerAtom float64
	// Scheme names the correction scheme ("legacy" or "MP2020").
	Scheme string
	// Corrections are the energy adjustments applied.
	Corrections []mpcompat.Adjustment
}

// Stability is a structure's place relative to the hull.
type Stability struct {
	// EAboveHull is the formation energy per atom minus the hull's at the
	// same composition (eV/atom; negative below the hull).
	EAboveHull float64
	// HullEnergy is the hull's formation energy per atom there.
	HullEnergy float64
	// Decomposition maps the reduced formulas of the stable phases of the
	// hull at that composition to their fractions of the atoms.
	Decomposition map[string]float64
}

// ErrNoStructure is returned for a nil structure (in a batch, one that
// could not be read).
var ErrNoStructure = errors.New("energy: no structure")

// ErrNoData is returned by Formation or Stability of a calculator built
// without correction data or without a hull.
var ErrNoData = errors.New("energy: no data for this quantity")

// Formation returns the formation energy per atom of st from its total
// energy (eV, uncorrected MP scale) under the calculator's scheme.
func (c *Calculator) Formation(st *crystal.Structure, energy float64) (*Formation, error) {
	if c.compat == nil {
		return nil, fmt.Errorf("%w: no MP corrections or elemental references loaded", ErrNoData)
	}
	ef, adj, err := c.compat.FormationEnergyPerAtom(c.scheme, st, energy)
	if err != nil {
		return nil, err
	}
	return &Formation{EnergyPerAtom: ef, Scheme: c.scheme.String(), Corrections: adj}, nil
}

// Stability places a composition with a formation energy per atom
// relative to the calculator's hull.
func (c *Calculator) Stability(comp crystal.Composition, formationEnergyPerAtom float64) (*Stability, error) {
	if c.hull == nil {
		return nil, fmt.Errorf("%w: no hull", ErrNoData)
	}
	r, err := c.hull.Query(comp, formationEnergyPerAtom)
	if err != nil {
		return nil, err
	}
	st := &Stability{EAboveHull: r.EAboveHull, HullEnergy: r.HullEnergy,
		Decomposition: make(map[string]float64, len(r.Decomposition))}
	for _, ph := range r.Decomposition {
		st.Decomposition[ph.Composition.ReducedFormula()] += ph.Fraction
	}
	return st, nil
}

// Relaxed is the outcome of a relaxation.
type Relaxed struct {
	// Point is the potential's answer at the relaxed structure.
	Point
	// Structure is the relaxed structure, fractional coordinates wrapped
	// into the cell.
	Structure *crystal.Structure
	// InitialEnergy is the total energy of the structure as given (eV).
	InitialEnergy float64
	// Steps is the number of FIRE steps; Converged reports whether the
	// largest generalised force (atoms and, with a variable cell, the
	// cell's rows) fell below the threshold within the step limit, and
	// FMax is that force at the end (eV/Å).
	Steps     int
	Converged bool
	FMax      float64
	// Formation is the formation energy of the relaxed structure; nil
	// when it cannot be computed (Warnings says why).
	Formation *Formation
	// Stability is the relaxed structure's place relative to the hull; nil
	// without a formation energy or when it cannot be computed.
	Stability *Stability
	// Warnings are the reasons for what was left out.
	Warnings []string
}

// Relax relaxes st (positions and, unless opt.FixedCell, the cell) and
// computes the formation energy and hull distance of the result. A
// structure the potential cannot evaluate (an element outside its 89,
// atoms on top of each other) or a relaxation that diverges is an error;
// missing data for the formation energy or the hull is a warning.
func (c *Calculator) Relax(ctx context.Context, st *crystal.Structure, opt relax.Options) (*Relaxed, error) {
	if st == nil {
		return nil, ErrNoStructure
	}
	calc := c.pool.Get().(*m3gnet.Calculator)
	defer c.pool.Put(calc)
	r, err := relax.Relax(ctx, calc, m3gnet.FromStructure(st), opt)
	if err != nil {
		return nil, err
	}
	rst, err := r.System.Structure()
	if err != nil {
		return nil, fmt.Errorf("%w: relaxed cell: %v", relax.ErrDiverged, err)
	}
	out := &Relaxed{Point: *newPoint(r.Energy, r.Forces, r.Stress), Structure: rst.Wrapped(),
		InitialEnergy: r.InitialEnergy, Steps: r.Steps, Converged: r.Converged, FMax: r.FMax}
	c.assess(out)
	return out, nil
}

// assess adds the formation energy and the hull distance, or the reasons
// they are missing.
func (c *Calculator) assess(r *Relaxed) {
	f, err := c.Formation(r.Structure, r.Energy)
	if err != nil {
		r.Warnings = append(r.Warnings, "no formation energy: "+err.Error())
		return
	}
	r.Formation = f
	s, err := c.Stability(r.Structure.Composition(), f.EnergyPerAtom)
	if err != nil {
		r.Warnings = append(r.Warnings, "no energy above the hull: "+err.Error())
		return
	}
	r.Stability = s
}

// RelaxAll relaxes many structures on up to workers goroutines (≤ 0: one)
// and returns one result and one error per structure, in order. A
// cancelled context stops the relaxations in progress and skips the rest.
func (c *Calculator) RelaxAll(ctx context.Context, sts []*crystal.Structure, opt relax.Options, workers int) ([]*Relaxed, []error) {
	out := make([]*Relaxed, len(sts))
	errs := make([]error, len(sts))
	each(len(sts), workers, func(i int) {
		if errs[i] = ctx.Err(); errs[i] == nil {
			out[i], errs[i] = c.Relax(ctx, sts[i], opt)
		}
	})
	return out, errs
}

// PointAll evaluates many structures on up to workers goroutines (≤ 0:
// one), in order.
func (c *Calculator) PointAll(sts []*crystal.Structure, workers int) ([]*Point, []error) {
	out := make([]*Point, len(sts))
	errs := make([]error, len(sts))
	each(len(sts), workers, func(i int) { out[i], errs[i] = c.Point(sts[i]) })
	return out, errs
}

// each calls f(0..n−1) on up to workers goroutines.
func each(n, workers int, f func(i int)) {
	workers = max(1, min(workers, n))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				f(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// ParseScheme reads a correction scheme's name: "legacy" or "mp2020" (any
// case).
func ParseScheme(name string) (mpcompat.Scheme, error) {
	switch strings.ToLower(name) {
	case "legacy":
		return mpcompat.Legacy, nil
	case "mp2020":
		return mpcompat.MP2020, nil
	}
	return 0, fmt.Errorf("correction scheme %q: want legacy or mp2020", name)
}
