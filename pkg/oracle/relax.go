package oracle

import (
	"context"
	"errors"
	"fmt"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/energy"
	"github.com/crucible-sci/crucible/pkg/mpcompat"
	"github.com/crucible-sci/crucible/pkg/relax"
	"github.com/crucible-sci/crucible/pkg/task"
)

// SourceM3GNet: computed from the total energy of the structure relaxed
// with the M3GNet potential (the relax tier).
const SourceM3GNet Source = "m3gnet"

// M3GNetFormationEnergyMAE is the uncertainty (eV/atom) given to a
// formation energy from a relaxed M3GNet energy with the legacy MP
// correction: its mean absolute error against MP's formation energies on
// the MP structures shipped with CIFs, relaxed (pkg/mpcompat,
// TestMeasureFormationEnergy). Those structures were in the potential's
// training set, so on new structures the error is larger; this is a lower
// bound.
const M3GNetFormationEnergyMAE = 0.028

// ReasonRelax (warning): the relax tier could not relax the structure (an
// element outside the potential, a relaxation that diverged); the
// screened values stand.
const ReasonRelax crystal.ReasonCode = "relax"

// RelaxOptions configure a Relaxer. Zero values take the defaults of
// Matbench Discovery's protocol (relax.Options).
type RelaxOptions struct {
	// FMax is the force threshold (eV/Å; default 0.05).
	FMax float64
	// MaxSteps bounds the FIRE steps (default 500).
	MaxSteps int
	// MP2020 corrects formation energies with MP's 2020 scheme instead of
	// the legacy one, which agrees better with the reference formation
	// energies (see pkg/mpcompat).
	MP2020 bool
}

// Relaxer is the oracle's relax tier: it relaxes a structure with the
// M3GNet universal potential (FIRE on positions and cell) and turns the
// relaxed total energy into a formation energy with MP's elemental
// references and corrections, both by pkg/energy. It is safe for
// concurrent use; each call relaxes on the calling goroutine.
type Relaxer struct {
	calc *energy.Calculator
	opts RelaxOptions
}

// OpenRelaxer loads the potential and MP's corrections and references
// from a data directory (models/m3gnet/, data/). Missing files are an
// error matching ErrMissingData.
func OpenRelaxer(dir string, opts RelaxOptions) (*Relaxer, error) {
	c, err := energy.OpenFormation(dir)
	if err != nil {
		return nil, fmt.Errorf("open relax tier: %w", err)
	}
	return NewRelaxer(c, opts), nil
}

// NewRelaxer assembles a relax tier on a calculator with MP's corrections
// (its hull, if any, is not used: the oracle places the relaxed structure
// itself).
func NewRelaxer(c *energy.Calculator, opts RelaxOptions) *Relaxer {
	return &Relaxer{calc: c.WithScheme(opts.scheme()), opts: opts}
}

// scheme is the correction scheme of the options.
func (o RelaxOptions) scheme() mpcompat.Scheme {
	if o.MP2020 {
		return mpcompat.MP2020
	}
	return mpcompat.Legacy
}

// Relaxation is the relax tier's outcome for one structure.
type Relaxation struct {
	// Structure is the relaxed structure, coordinates wrapped into the
	// cell.
	Structure *crystal.Structure
	// Converged: the largest generalised force fell below FMax within
	// MaxSteps. Steps is the number of FIRE steps taken.
	Converged bool
	Steps     int
	// FMax is the largest generalised force at the end (eV/Å).
	FMax float64
	// InitialEnergy and Energy are the total energies (eV) of the
	// structure as proposed and as relaxed, on MP's uncorrected scale.
	InitialEnergy, Energy float64
	// FormationEnergy is the relaxed formation energy per atom (eV/atom)
	// with Scheme's corrections and elemental references.
	FormationEnergy float64
	Scheme          mpcompat.Scheme
	Corrections     []mpcompat.Adjustment
}

// EnergyPerAtom is the relaxed total energy per atom (eV/atom).
func (r *Relaxation) EnergyPerAtom() float64 {
	return r.Energy / float64(r.Structure.NumSites())
}

// Relax relaxes s (which is not modified). An element outside the
// potential, a relaxation that diverges or an element without an MP
// reference energy is an error; a relaxation that does not converge within
// MaxSteps is not (Relaxation.Converged is false).
func (r *Relaxer) Relax(ctx context.Context, s *crystal.Structure) (*Relaxation, error) {
	for _, el := range s.Composition().Elements() {
		if !r.calc.Model().Supports(el) {
			return nil, fmt.Errorf("relax: %s is not an element of the potential", el.Symbol())
		}
	}
	res, err := r.calc.Relax(ctx, s, relax.Options{FMax: r.opts.FMax, MaxSteps: r.opts.MaxSteps})
	if err != nil {
		return nil, fmt.Errorf("relax: %w", err)
	}
	f := res.Formation
	if f == nil {
		_, err := r.calc.Formation(res.Structure, res.Energy)
		return nil, fmt.Errorf("relax: formation energy: %w", err)
	}
	if !isFinite(f.EnergyPerAtom) {
		return nil, fmt.Errorf("relax: formation energy %v", f.EnergyPerAtom)
	}
	return &Relaxation{
		Structure: res.Structure, Converged: res.Converged, Steps: res.Steps, FMax: res.FMax,
		InitialEnergy: res.InitialEnergy, Energy: res.Energy,
		FormationEnergy: f.EnergyPerAtom, Scheme: r.calc.Scheme(), Corrections: f.Corrections,
	}, nil
}

// EvaluateRelaxed is the relax tier of the oracle: it relaxes the
// request's structure and evaluates the relaxed structure as Evaluate
// does, every surrogate re-predicted on it, with the relaxed M3GNet
// formation energy (SourceM3GNet, CGCNN's value beside it as
// Value.Surrogate) in place of CGCNN's for the stability calculation. A
// known formula keeps its reference formation energy, as in the screen.
// When the structure cannot be relaxed, the error says why (the caller
// keeps the screened values); the context's error ends it as well.
func (o *Oracle) EvaluateRelaxed(ctx context.Context, r *Relaxer, req Request) (Result, *Relaxation, error) {
	if req.Structure == nil {
		return Result{}, nil, errors.New("relax: no structure")
	}
	rx, err := r.Relax(ctx, req.Structure)
	if err != nil {
		return Result{}, nil, err
	}
	req.Structure, req.relaxed = rx.Structure, true
	req.formationEnergy = &Value{Value: rx.FormationEnergy, Unit: task.UnitOf("formation_energy_per_atom"),
		Source: SourceM3GNet, Uncertainty: M3GNetFormationEnergyMAE}
	res, err := o.Evaluate(ctx, []Request{req})
	if err != nil {
		return Result{}, nil, err
	}
	return res[0], rx, nil
}
