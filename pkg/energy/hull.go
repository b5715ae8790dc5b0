package energy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// ErrNoHull is returned by ReferenceHull.Query for a composition whose hull
// would be meaningless (an element no reference phase contains) or too
// costly (more elements than MaxHullElements).
var ErrNoHull = errors.New("no hull")

// MaxHullElements is the largest number of elements of a composition
// placed on the hull, as pkg/oracle's default.
const MaxHullElements = 8

// ReferenceHull is the convex hull of the reference tables' phases
// (formation energies per atom, MP's legacy-corrected scale), built per
// chemical system on first use and cached, as pkg/oracle builds it. It is
// safe for concurrent use.
type ReferenceHull struct {
	db    *reference.DB
	cache *hull.Cache
}

// NewReferenceHull returns the hull of db's phases.
func NewReferenceHull(db *reference.DB) (*ReferenceHull, error) {
	c, err := hull.NewCache(db.HullEntries())
	if err != nil {
		return nil, fmt.Errorf("reference phases: %w", err)
	}
	return &ReferenceHull{db: db, cache: c}, nil
}

// Query places comp with a formation energy per atom relative to the hull
// of its chemical system.
func (h *ReferenceHull) Query(comp crystal.Composition, formationEnergyPerAtom float64) (hull.Result, error) {
	els := comp.Elements()
	if len(els) > MaxHullElements {
		return hull.Result{}, fmt.Errorf("%w: %d elements, at most %d", ErrNoHull, len(els), MaxHullElements)
	}
	var orphans []string
	for _, el := range els {
		if !h.db.HasPhases(el) {
			orphans = append(orphans, el.Symbol())
		}
	}
	if len(orphans) > 0 {
		return hull.Result{}, fmt.Errorf("%w: no reference phase contains %s", ErrNoHull, strings.Join(orphans, ", "))
	}
	return h.cache.Query(comp, formationEnergyPerAtom)
}
