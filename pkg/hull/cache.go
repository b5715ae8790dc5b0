package hull

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Cache keeps one Diagram per chemical system, built on first use from a
// pool of entries: a reference data set plus the entries added since (an
// evaluator's campaign finds). The diagram of a system holds every pool
// entry whose elements are a subset of the system's. It is safe for
// concurrent use; concurrent first requests for a system build it once.
//
// A Cache mixes everything added to it into every system it touches, so an
// evaluator serving several campaigns keeps one Cache per campaign over the
// same reference entries (compositions are immutable and shared, so that
// costs one slice of entries and the diagrams actually used).
type Cache struct {
	mu      sync.Mutex
	pool    []Entry
	sets    []elementSet // elements of each pool entry
	ids     map[string]int
	systems map[string]*cachedDiagram
}

type cachedDiagram struct {
	set     elementSet
	ready   chan struct{} // closed when d and err are set
	built   bool          // guarded by Cache.mu
	pending []Entry       // added while building; guarded by Cache.mu
	d       *Diagram
	err     error
}

// elementSet is a set of elements as a bit set over atomic numbers.
type elementSet [2]uint64

func setOf(els []crystal.Element) elementSet {
	var s elementSet
	for _, el := range els {
		s[el/64] |= 1 << (el % 64)
	}
	return s
}

func (s elementSet) subsetOf(t elementSet) bool { return s[0]&^t[0] == 0 && s[1]&^t[1] == 0 }

// NewCache returns a cache over the reference entries (formation energies
// per atom). Entries are checked as New checks them; an exact repeat of an
// entry counts once.
func NewCache(reference []Entry) (*Cache, error) {
	c := &Cache{
		pool:    reference[:0:0],
		ids:     make(map[string]int, len(reference)),
		systems: map[string]*cachedDiagram{},
	}
	if err := c.addToPool(reference); err != nil {
		return nil, err
	}
	return c, nil
}

// addToPool checks every entry first, so that a failing batch adds nothing.
func (c *Cache) addToPool(entries []Entry) error {
	batch := map[string]Entry{}
	for _, e := range entries {
		if err := e.validate(); err != nil {
			return err
		}
		prev, ok := batch[e.ID]
		if i, inPool := c.ids[e.ID]; inPool {
			prev, ok = c.pool[i], true
		}
		if ok && !prev.same(e) {
			return fmt.Errorf("%w: %q (%s and %s)", ErrDuplicateID, e.ID, prev.Composition, e.Composition)
		}
		batch[e.ID] = e
	}
	for _, e := range entries {
		if _, ok := c.ids[e.ID]; ok {
			continue
		}
		c.ids[e.ID] = len(c.pool)
		c.pool = append(c.pool, e)
		c.sets = append(c.sets, setOf(e.Composition.Elements()))
	}
	return nil
}

// Diagram returns the diagram of the chemical system of the given elements,
// building it on first use. A build that fails (it cannot for entries that
// NewCache and Add accepted, barring ErrNumerical) is remembered.
func (c *Cache) Diagram(elements ...crystal.Element) (*Diagram, error) {
	els := slices.Clone(elements)
	slices.Sort(els)
	els = slices.Compact(els)
	if len(els) == 0 {
		return nil, fmt.Errorf("%w: empty chemical system", ErrInvalidEntry)
	}
	for _, el := range els {
		if !el.Valid() {
			return nil, fmt.Errorf("%w: atomic number %d", crystal.ErrUnknownElement, int(el))
		}
	}
	key := systemKey(els)
	c.mu.Lock()
	cd, ok := c.systems[key]
	if ok {
		c.mu.Unlock()
		<-cd.ready
		return cd.d, cd.err
	}
	cd = &cachedDiagram{set: setOf(els), ready: make(chan struct{})}
	c.systems[key] = cd
	var entries []Entry
	for i, s := range c.sets {
		if s.subsetOf(cd.set) {
			entries = append(entries, c.pool[i])
		}
	}
	c.mu.Unlock()

	d, err := New(entries, WithElements(els...))
	c.mu.Lock()
	if err == nil && len(cd.pending) > 0 {
		err = d.Add(cd.pending...)
	}
	if err != nil {
		d, err = nil, fmt.Errorf("diagram %s: %w", key, err)
	}
	cd.d, cd.err, cd.built, cd.pending = d, err, true, nil
	c.mu.Unlock()
	close(cd.ready)
	return d, err
}

// Query places a hypothetical phase relative to the hull of its own
// chemical system (the diagram of exactly its elements).
func (c *Cache) Query(comp crystal.Composition, energyPerAtom float64) (Result, error) {
	if comp.IsEmpty() {
		return Result{}, fmt.Errorf("%w: empty composition", ErrInvalidEntry)
	}
	d, err := c.Diagram(comp.Elements()...)
	if err != nil {
		return Result{}, err
	}
	return d.Query(comp, energyPerAtom)
}

// Add puts entries into the pool and into every cached diagram whose system
// contains their elements (and so into every diagram built later). An exact
// repeat of an entry is ignored; a different entry with a used id is
// ErrDuplicateID.
func (c *Cache) Add(entries ...Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := len(c.pool)
	if err := c.addToPool(entries); err != nil {
		return err
	}
	for i := first; i < len(c.pool); i++ {
		for key, cd := range c.systems {
			if !c.sets[i].subsetOf(cd.set) {
				continue
			}
			if !cd.built {
				cd.pending = append(cd.pending, c.pool[i])
				continue
			}
			if cd.d == nil {
				continue
			}
			if err := cd.d.Add(c.pool[i]); err != nil {
				return fmt.Errorf("diagram %s: %w", key, err)
			}
		}
	}
	return nil
}

// Systems returns the chemical systems with a cached diagram, sorted.
func (c *Cache) Systems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.systems))
	for k := range c.systems {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func systemKey(els []crystal.Element) string {
	syms := make([]string, len(els))
	for i, el := range els {
		syms[i] = el.Symbol()
	}
	sort.Strings(syms)
	return strings.Join(syms, "-")
}
