package hull

import (
	"errors"
	"fmt"
	"math"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Sentinel errors, so a caller can record an expected failure as data.
var (
	// ErrOutsideSystem: a composition has an element that is not one of the
	// diagram's elements.
	ErrOutsideSystem = errors.New("composition outside the chemical system")
	// ErrDuplicateID: two different entries were given the same id.
	ErrDuplicateID = errors.New("duplicate entry id")
	// ErrUnknownID: no entry has the id asked for.
	ErrUnknownID = errors.New("unknown entry id")
	// ErrInvalidEntry: an entry or query has no id, no elements or a
	// non-finite energy.
	ErrInvalidEntry = errors.New("invalid entry")
	// ErrMissingReference: an element has no elemental entry to measure
	// formation energies from.
	ErrMissingReference = errors.New("missing elemental reference")
	// ErrTooManyElements: a diagram has more than MaxElements elements.
	ErrTooManyElements = errors.New("too many elements")
	// ErrNumerical: the linear programme did not converge. It has never been
	// seen; it exists so that a pathological input is an error, not a hang.
	ErrNumerical = errors.New("hull linear programme did not converge")
)

// MaxElements is the largest number of elements a diagram may have.
const MaxElements = 64

// Entry is one phase: a composition and its formation energy per atom (eV),
// measured from the elemental references at zero. Use FormationEnergies to
// turn total energies into formation energies.
type Entry struct {
	ID            string
	Composition   crystal.Composition
	EnergyPerAtom float64
}

// MaxEnergy bounds the magnitude of a formation energy per atom (eV) in a
// diagram. Real ones are within ±20 eV/atom; the bound keeps hostile input
// far from floating-point overflow.
const MaxEnergy = 1e6

// validate checks an entry of a diagram (formation energy).
func (e Entry) validate() error {
	if err := e.validateTotal(); err != nil {
		return err
	}
	if !plausible(e.EnergyPerAtom) {
		return fmt.Errorf("%w: entry %q has energy %v eV/atom (at most ±%g)", ErrInvalidEntry, e.ID, e.EnergyPerAtom, MaxEnergy)
	}
	return nil
}

// plausible reports whether a formation energy is finite and within
// ±MaxEnergy.
func plausible(energy float64) bool { return math.Abs(energy) <= MaxEnergy } // false for NaN

// validateTotal checks an entry that may hold a total energy.
func (e Entry) validateTotal() error {
	switch {
	case e.ID == "":
		return fmt.Errorf("%w: empty id (%s)", ErrInvalidEntry, e.Composition)
	case e.Composition.IsEmpty():
		return fmt.Errorf("%w: entry %q has no elements", ErrInvalidEntry, e.ID)
	case math.IsNaN(e.EnergyPerAtom) || math.IsInf(e.EnergyPerAtom, 0):
		return fmt.Errorf("%w: entry %q has energy %v", ErrInvalidEntry, e.ID, e.EnergyPerAtom)
	}
	return nil
}

// same reports whether two entries with the same id describe the same phase,
// so that giving an entry twice (a redelivered message, a repeated row) is
// harmless.
func (e Entry) same(f Entry) bool {
	return e.ID == f.ID && e.EnergyPerAtom == f.EnergyPerAtom &&
		e.Composition.Equal(f.Composition, 1e-8)
}

// Phase is one product of a decomposition: an entry and its fraction of the
// atoms.
type Phase struct {
	Entry
	Fraction float64
}

// Result is the position of a composition and energy relative to the hull.
type Result struct {
	// HullEnergy is the formation energy per atom of the lowest-energy
	// mixture of phases with the composition: the lower convex hull at that
	// composition.
	HullEnergy float64
	// EAboveHull is the energy per atom minus HullEnergy. For a query it is
	// negative when the candidate lies below the hull (pymatgen's
	// allow_negative=True); for an entry of the diagram it is never negative.
	EAboveHull float64
	// Decomposition is the mixture of stable phases reaching HullEnergy,
	// by decreasing fraction of the atoms; the fractions sum to 1.
	Decomposition []Phase
}

// EntryResult is the Result of one of the diagram's own entries.
type EntryResult struct {
	Entry
	Result
	// Stable reports whether the entry is a vertex of the hull.
	Stable bool
}

// FormationEnergies turns entries whose EnergyPerAtom is a total energy per
// atom into entries with formation energies per atom,
//
//	E_f(x) = E(x) − Σ_k x_k μ_k,
//
// where x_k are the atomic fractions and μ_k the energy per atom of element
// k's reference: refs[k] when given, otherwise the lowest-energy elemental
// entry of k among entries (pymatgen's el_refs). An element with neither is
// ErrMissingReference. Energies above the hull do not depend on this choice:
// it subtracts the same linear function of composition from every entry.
func FormationEnergies(entries []Entry, refs map[crystal.Element]float64) ([]Entry, error) {
	mu := make(map[crystal.Element]float64, len(refs))
	for el, e := range refs {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			return nil, fmt.Errorf("%w: reference energy %v for %s", ErrInvalidEntry, e, el)
		}
		mu[el] = e
	}
	lowest := map[crystal.Element]float64{}
	for _, e := range entries {
		if err := e.validateTotal(); err != nil {
			return nil, err
		}
		if e.Composition.Len() != 1 {
			continue
		}
		el := e.Composition.Elements()[0]
		if cur, ok := lowest[el]; !ok || e.EnergyPerAtom < cur {
			lowest[el] = e.EnergyPerAtom
		}
	}
	for el, e := range lowest {
		if _, ok := mu[el]; !ok {
			mu[el] = e
		}
	}
	out := make([]Entry, len(entries))
	for i, e := range entries {
		n := e.Composition.NumAtoms()
		ref := 0.0
		for _, it := range e.Composition.Items() {
			m, ok := mu[it.Element]
			if !ok {
				return nil, fmt.Errorf("%w: %s (entry %q)", ErrMissingReference, it.Element.Symbol(), e.ID)
			}
			ref += it.Amount / n * m
		}
		out[i] = Entry{ID: e.ID, Composition: e.Composition, EnergyPerAtom: e.EnergyPerAtom - ref}
	}
	return out, nil
}
