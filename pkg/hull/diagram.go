package hull

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Diagram is the phase diagram of a chemical system: its entries and the
// lower convex hull of their formation energies over composition. It is safe
// for concurrent use; Add excludes queries while it runs.
type Diagram struct {
	mu sync.RWMutex

	elems []crystal.Element       // by atomic number
	index map[crystal.Element]int // element → coordinate

	entries []Entry
	byID    map[string]int
	pts     points
	group   []int          // entry → composition group
	reps    []int          // group → representative: lowest energy, first given on ties
	byKey   map[string]int // composition key → group

	refs     []int             // coordinate → entry index of that element's representative
	stable   []int             // entry indices of the hull's vertices, ascending
	isStable []bool            // by entry
	cert     map[int][]float64 // vertex → chemical potentials that certify it

	work sync.Pool // *work
}

// Option configures New.
type Option func(*config)

type config struct {
	elements []crystal.Element
}

// WithElements fixes the diagram's elements instead of taking the union of
// the entries' elements; an entry with another element is then an error
// (ErrOutsideSystem). Elements without an entry get a reference at zero.
func WithElements(elements ...crystal.Element) Option {
	return func(c *config) { c.elements = append([]crystal.Element(nil), elements...) }
}

// RefID is the id given to the elemental reference at zero energy that New
// adds for an element with no elemental entry at or below zero ("ref-Fe").
func RefID(el crystal.Element) string { return "ref-" + el.Symbol() }

// New builds the phase diagram of entries (formation energies per atom).
//
// The elements are the union of the entries' elements unless WithElements
// is given. An element whose elemental entries are all above zero, or that
// has none, gets a reference entry at zero with id RefID(el): formation
// energies are measured from the elements at zero, so the reference is
// always available. Several entries with one composition (polymorphs) are
// allowed: the lowest in energy represents the composition on the hull, the
// first given when several are equally low. An entry given twice with the
// same id, composition and energy counts once; the same id with different
// data is ErrDuplicateID.
func New(entries []Entry, opts ...Option) (*Diagram, error) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	elems := cfg.elements
	if elems == nil {
		seen := map[crystal.Element]bool{}
		for i, e := range entries {
			if err := e.validate(); err != nil {
				return nil, fmt.Errorf("entry %d: %w", i, err)
			}
			for _, el := range e.Composition.Elements() {
				if !seen[el] {
					seen[el] = true
					elems = append(elems, el)
				}
			}
		}
	}
	elems = slices.Clone(elems)
	slices.Sort(elems)
	elems = slices.Compact(elems)
	switch {
	case len(elems) == 0:
		return nil, fmt.Errorf("%w: a diagram needs at least one element", ErrInvalidEntry)
	case len(elems) > MaxElements:
		return nil, fmt.Errorf("%w: %d elements, at most %d", ErrTooManyElements, len(elems), MaxElements)
	}
	for _, el := range elems {
		if !el.Valid() {
			return nil, fmt.Errorf("%w: atomic number %d", crystal.ErrUnknownElement, int(el))
		}
	}
	d := &Diagram{
		elems: elems,
		index: make(map[crystal.Element]int, len(elems)),
		byID:  make(map[string]int, len(entries)+len(elems)),
		byKey: make(map[string]int, len(entries)+len(elems)),
		pts:   points{dim: len(elems)},
		refs:  make([]int, len(elems)),
		cert:  map[int][]float64{},
	}
	for k, el := range elems {
		d.index[el] = k
	}
	n := len(entries) + len(elems)
	d.entries = make([]Entry, 0, n)
	d.pts.x = make([]float64, 0, n*len(elems))
	d.pts.e = make([]float64, 0, n)
	d.pts.mask = make([]uint64, 0, n)
	for i, e := range entries {
		if _, _, err := d.insert(e); err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
	}
	for k, el := range elems {
		g, ok := d.byKey[d.unitKey(k)]
		if !ok || d.pts.e[d.reps[g]] > 0 {
			ref, err := crystal.NewComposition(crystal.ElementAmount{Element: el, Amount: 1})
			if err != nil {
				return nil, err
			}
			if _, _, err := d.insert(Entry{ID: RefID(el), Composition: ref}); err != nil {
				return nil, fmt.Errorf("reference for %s: %w", el.Symbol(), err)
			}
			g = d.byKey[d.unitKey(k)]
		}
		d.refs[k] = d.reps[g]
	}
	if err := d.build(); err != nil {
		return nil, err
	}
	return d, nil
}

// insert adds one entry to the tables. When the entry becomes the
// representative of its composition (a new composition, or lower than the
// polymorphs so far) it reports newRep and the previous representative (−1
// for a new composition). An exact repeat of an existing entry changes
// nothing.
func (d *Diagram) insert(e Entry) (prev int, newRep bool, err error) {
	if err := e.validate(); err != nil {
		return 0, false, err
	}
	if i, ok := d.byID[e.ID]; ok {
		if d.entries[i].same(e) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("%w: %q (%s and %s)", ErrDuplicateID, e.ID, d.entries[i].Composition, e.Composition)
	}
	dim := d.pts.dim
	j := len(d.entries)
	d.pts.x = slices.Grow(d.pts.x, dim)[:(j+1)*dim]
	x := d.pts.x[j*dim:]
	clear(x)
	var mask uint64
	n := e.Composition.NumAtoms()
	for _, it := range e.Composition.Items() {
		k, ok := d.index[it.Element]
		if !ok {
			d.pts.x = d.pts.x[:j*dim]
			return 0, false, fmt.Errorf("%w: entry %q (%s) has %s, the diagram is %s",
				ErrOutsideSystem, e.ID, e.Composition, it.Element.Symbol(), d.system())
		}
		x[k] = it.Amount / n
		mask |= 1 << k
	}
	d.entries = append(d.entries, e)
	d.byID[e.ID] = j
	d.pts.e = append(d.pts.e, e.EnergyPerAtom)
	d.pts.mask = append(d.pts.mask, mask)
	d.isStable = append(d.isStable, false)
	key := compositionKey(x)
	g, ok := d.byKey[key]
	if !ok {
		d.byKey[key] = len(d.reps)
		d.group = append(d.group, len(d.reps))
		d.reps = append(d.reps, j)
		return -1, true, nil
	}
	d.group = append(d.group, g)
	if old := d.reps[g]; e.EnergyPerAtom < d.pts.e[old] {
		d.reps[g] = j
		return old, true, nil
	}
	return 0, false, nil
}

// compositionKey identifies a composition by its atomic fractions rounded
// to 1e-10, so that Fe2O3 and Fe4O6 are the same composition.
func compositionKey(x []float64) string {
	var buf [128]byte
	b := buf[:0]
	for k, v := range x {
		if v == 0 {
			continue
		}
		b = strconv.AppendInt(b, int64(k), 36)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(math.Round(v*1e10)), 36)
		b = append(b, ',')
	}
	return string(b)
}

func (d *Diagram) unitKey(k int) string {
	x := make([]float64, d.pts.dim)
	x[k] = 1
	return compositionKey(x)
}

func (d *Diagram) system() string {
	syms := make([]string, len(d.elems))
	for i, el := range d.elems {
		syms[i] = el.Symbol()
	}
	sort.Strings(syms)
	return strings.Join(syms, "-")
}

// Elements returns the diagram's elements by atomic number.
func (d *Diagram) Elements() []crystal.Element { return slices.Clone(d.elems) }

// System returns the chemical system, element symbols sorted and joined by
// dashes ("Fe-Li-O"), as crystal.Composition.ChemicalSystem writes it.
func (d *Diagram) System() string { return d.system() }

// Len returns the number of entries, including added references.
func (d *Diagram) Len() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return len(d.entries)
}

// Entries returns every entry in the order given, the added references
// last.
func (d *Diagram) Entries() []Entry {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.entries)
}

// Stable returns the entries that are vertices of the hull, in the order
// given. Of several polymorphs equally low in energy only the first given
// is stable; an entry lying on the hull between other stable entries (on a
// facet, within 1e-10 eV/atom) is not.
func (d *Diagram) Stable() []Entry {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]Entry, len(d.stable))
	for i, j := range d.stable {
		out[i] = d.entries[j]
	}
	return out
}

// IsStable reports whether the entry with the given id is a vertex of the
// hull.
func (d *Diagram) IsStable(id string) (bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	j, ok := d.byID[id]
	if !ok {
		return false, fmt.Errorf("%w: %q", ErrUnknownID, id)
	}
	return d.isStable[j], nil
}

// EAboveHull returns the energy above the hull of the entry with the given
// id in eV/atom: zero for a stable entry, positive otherwise.
func (d *Diagram) EAboveHull(id string) (float64, error) {
	r, err := d.Result(id)
	if err != nil {
		return 0, err
	}
	return r.EAboveHull, nil
}

// Result returns the hull energy, energy above the hull and decomposition of
// the entry with the given id. A stable entry decomposes into itself; an
// entry on the hull but not a vertex has EAboveHull 0 and decomposes into
// the vertices around it.
func (d *Diagram) Result(id string) (EntryResult, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	j, ok := d.byID[id]
	if !ok {
		return EntryResult{}, fmt.Errorf("%w: %q", ErrUnknownID, id)
	}
	w := d.getWork()
	defer d.work.Put(w)
	r, err := d.entryResult(w, j)
	if err != nil {
		return EntryResult{}, fmt.Errorf("entry %q: %w", id, err)
	}
	return r, nil
}

// Results returns the Result of every entry, in the order of Entries.
// Entries with the same composition share one hull calculation (and one
// Decomposition slice: treat it as read-only).
func (d *Diagram) Results() ([]EntryResult, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	w := d.getWork()
	defer d.work.Put(w)
	out := make([]EntryResult, len(d.entries))
	hull := make([]Result, len(d.reps))
	done := make([]bool, len(d.reps))
	for j, e := range d.entries {
		g := d.group[j]
		if !done[g] {
			r, err := d.hullAt(w, d.reps[g])
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", e.ID, err)
			}
			hull[g], done[g] = r, true
		}
		out[j] = d.entryResultFrom(j, hull[g])
	}
	return out, nil
}

func (d *Diagram) entryResult(w *work, j int) (EntryResult, error) {
	r, err := d.hullAt(w, d.reps[d.group[j]])
	if err != nil {
		return EntryResult{}, err
	}
	return d.entryResultFrom(j, r), nil
}

// entryResultFrom completes the hull result at entry j's composition with
// j's energy. Within the diagram no entry is below the hull, so a negative
// difference (at most stableTol, for an entry within tolerance of a facet)
// is reported as zero.
func (d *Diagram) entryResultFrom(j int, hull Result) EntryResult {
	r := hull
	r.EAboveHull = math.Max(d.pts.e[j]-hull.HullEnergy, 0)
	return EntryResult{Entry: d.entries[j], Result: r, Stable: d.isStable[j]}
}

// hullAt returns the hull energy and decomposition at the composition of
// entry j (a representative).
func (d *Diagram) hullAt(w *work, j int) (Result, error) {
	if d.isStable[j] {
		return Result{HullEnergy: d.pts.e[j], Decomposition: []Phase{{Entry: d.entries[j], Fraction: 1}}}, nil
	}
	mask := d.pts.mask[j]
	w.setTarget(d, d.pts.x[j*d.pts.dim:(j+1)*d.pts.dim], mask)
	h, err := d.solve(w, mask, -1)
	if err != nil {
		return Result{}, err
	}
	return Result{HullEnergy: h, Decomposition: d.decomposition(w)}, nil
}

// Query places a hypothetical phase — a composition of the diagram's
// elements (or a subset of them) and its formation energy per atom — relative
// to the hull without adding it. EAboveHull is negative when the phase lies
// below the current hull. A composition with another element is
// ErrOutsideSystem.
func (d *Diagram) Query(c crystal.Composition, energyPerAtom float64) (Result, error) {
	if c.IsEmpty() {
		return Result{}, fmt.Errorf("%w: empty composition", ErrInvalidEntry)
	}
	if !plausible(energyPerAtom) {
		return Result{}, fmt.Errorf("%w: query %s has energy %v eV/atom (at most ±%g)", ErrInvalidEntry, c, energyPerAtom, MaxEnergy)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	w := d.getWork()
	defer d.work.Put(w)
	if cap(w.x) < d.pts.dim {
		w.x = make([]float64, d.pts.dim)
	}
	x := w.x[:d.pts.dim]
	clear(x)
	var mask uint64
	n := c.NumAtoms()
	for _, it := range c.Items() {
		k, ok := d.index[it.Element]
		if !ok {
			return Result{}, fmt.Errorf("%w: %s has %s, the diagram is %s", ErrOutsideSystem, c, it.Element.Symbol(), d.system())
		}
		x[k] = it.Amount / n
		mask |= 1 << k
	}
	var r Result
	if g, ok := d.byKey[compositionKey(x)]; ok && d.isStable[d.reps[g]] {
		rep := d.reps[g]
		r = Result{HullEnergy: d.pts.e[rep], Decomposition: []Phase{{Entry: d.entries[rep], Fraction: 1}}}
	} else {
		w.setTarget(d, x, mask)
		h, err := d.solve(w, mask, -1)
		if err != nil {
			return Result{}, fmt.Errorf("query %s: %w", c, err)
		}
		r = Result{HullEnergy: h, Decomposition: d.decomposition(w)}
	}
	r.EAboveHull = energyPerAtom - r.HullEnergy
	return r, nil
}

// work is the scratch space of one hull calculation.
type work struct {
	s      simplex
	rows   []int
	start  []int
	cols   []int
	target []float64
	x      []float64
}

func (d *Diagram) getWork() *work {
	if w, ok := d.work.Get().(*work); ok {
		return w
	}
	return &work{}
}

// setTarget sets the rows (the elements of mask), the target fractions x
// restricted to them, and the starting basis of elemental references.
func (w *work) setTarget(d *Diagram, x []float64, mask uint64) {
	w.rows, w.target, w.start = w.rows[:0], w.target[:0], w.start[:0]
	for m := mask; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		w.rows = append(w.rows, k)
		w.target = append(w.target, x[k])
		w.start = append(w.start, d.refs[k])
	}
}

// solve runs the hull programme for the target set in w over the stable
// entries whose elements lie within mask, leaving out entry exclude.
func (d *Diagram) solve(w *work, mask uint64, exclude int) (float64, error) {
	w.cols = w.cols[:0]
	for _, j := range d.stable {
		if j != exclude && d.pts.mask[j]&^mask == 0 {
			w.cols = append(w.cols, j)
		}
	}
	return w.s.solve(&d.pts, w.rows, w.target, w.cols, w.start)
}

// decomposition reads the phases of the last solution in w, by decreasing
// fraction (ties by entry order).
func (d *Diagram) decomposition(w *work) []Phase {
	out := make([]Phase, 0, len(w.s.basis))
	for i, j := range w.s.basis {
		if w.s.lam[i] > fractionTol {
			out = append(out, Phase{Entry: d.entries[j], Fraction: w.s.lam[i]})
		}
	}
	slices.SortFunc(out, func(a, b Phase) int {
		if a.Fraction != b.Fraction {
			if a.Fraction > b.Fraction {
				return -1
			}
			return 1
		}
		return d.byID[a.ID] - d.byID[b.ID]
	})
	return out
}
