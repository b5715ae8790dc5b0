package reference

import (
	"math"
	"slices"
	"strconv"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/hull"
	"github.com/crucible-sci/crucible/pkg/task"
)

// DB holds the loaded reference tables. It is immutable and safe for
// concurrent use.
type DB struct {
	reduced  map[string]int32 // reduced formula → id, over every table
	tables   map[string]*tableData
	entries  []hull.Entry
	elements [crystal.MaxZ + 1]bool // elements of some formation-energy row
}

func newDB(reduced map[string]int32, loaded []*tableData) *DB {
	db := &DB{reduced: reduced, tables: make(map[string]*tableData, len(loaded))}
	for _, td := range loaded {
		db.tables[td.table.Name] = td
	}
	if fe := db.tables[FormationEnergy.Name]; fe != nil {
		// The groups are in order of first appearance; ordered by the row
		// of their entry instead, hulls (and the choice between coplanar
		// phases) follow the table.
		order := make([]int, len(fe.stats))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return fe.stats[a].MinRow - fe.stats[b].MinRow })
		db.entries = make([]hull.Entry, len(order))
		for k, i := range order {
			s := fe.stats[i]
			db.entries[k] = hull.Entry{ID: EntryID(s.MinRow), Composition: fe.comps[i], EnergyPerAtom: s.Min}
			for _, it := range fe.comps[i].Items() {
				db.elements[it.Element] = true
			}
		}
	}
	return db
}

// EntryID is the hull entry id of the formation-energy row (0-based, header
// excluded): "mpef-<row>".
func EntryID(row int) string { return entryPrefix + strconv.Itoa(row) }

const entryPrefix = "mpef-"

// Lookup returns the statistics of a reduced formula (as written by
// crystal.Composition.ReducedFormula) in a table.
func (db *DB) Lookup(t Table, reducedFormula string) (Stats, bool) {
	td := db.tables[t.Name]
	id, ok := db.reduced[reducedFormula]
	if td == nil || !ok || td.index[id] < 0 {
		return Stats{}, false
	}
	return td.stats[td.index[id]], true
}

// Size returns the number of rows and of distinct reduced formulas of a
// table (0, 0 for a table that is not loaded).
func (db *DB) Size(t Table) (rows, formulas int) {
	td := db.tables[t.Name]
	if td == nil {
		return 0, 0
	}
	return td.rows, len(td.stats)
}

// Known reports whether the reduced formula is in any table: the compound
// is in the Materials Project, and a candidate proposing it recalls a known
// material (LLEMA §4.2, memorisation).
func (db *DB) Known(reducedFormula string) bool {
	_, ok := db.reduced[reducedFormula]
	return ok
}

// HullEntries returns the reference phases for convex hulls: per reduced
// composition the lowest formation-energy entry, with id EntryID(row),
// ordered by row. The slice is a copy; the compositions are shared and
// immutable.
func (db *DB) HullEntries() []hull.Entry { return slices.Clone(db.entries) }

// HasPhases reports whether some formation-energy entry contains el, so
// that a hull with el means more than its elemental reference.
func (db *DB) HasPhases(el crystal.Element) bool { return el.Valid() && db.elements[el] }

// Rule says how the polymorphs of a formula were combined into one value.
type Rule string

const (
	// Lowest: the lowest entry, the ground state.
	Lowest Rule = "lowest"
	// Median: the median of the entries.
	Median Rule = "median"
)

// Value is a property value from the reference tables.
type Value struct {
	// Property is the canonical property name (task registry).
	Property string
	// Value is in Unit, the property's canonical unit.
	Value float64
	Unit  string
	// Table is the table the value comes from.
	Table string
	// Rule says how polymorphs were combined; Count is the number of
	// entries behind the value and Min, Max their range, in Unit.
	Rule       Rule
	Count      int
	Min, Max   float64
	MinFormula string
}

// Properties with reference values, in registry order.
var referenceProperties = []string{
	"formation_energy_per_atom", "band_gap", "bulk_modulus", "shear_modulus",
	"e_above_hull", "dielectric_electronic",
}

// PropertyNames returns the canonical names of the properties the tables
// can give a value for.
func PropertyNames() []string { return slices.Clone(referenceProperties) }

// Property returns the reference value of a property (canonical name) for a
// reduced formula, following the package's polymorph rules:
//
//	formation_energy_per_atom  lowest mp_e_form entry
//	e_above_hull               lowest mp_e_hull entry (MP's own hull)
//	band_gap                   median of mp_gap
//	bulk_modulus               10^median of mp_log10_bulk_modulus_vrh, else median of mp_bulk_modulus
//	shear_modulus              10^median of mp_log10_shear_modulus_vrh, else median of mp_shear_modulus
//	dielectric_electronic      n² with n the median of dielectric (ε∞ ≈ n²)
//
// The second result is false when the formula has no entry (or the property
// none of these).
func (db *DB) Property(name, reducedFormula string) (Value, bool) {
	switch name {
	case "formation_energy_per_atom":
		return db.value(name, FormationEnergy, reducedFormula, Lowest, identity)
	case "e_above_hull":
		return db.value(name, EnergyAboveHull, reducedFormula, Lowest, identity)
	case "band_gap":
		return db.value(name, BandGap, reducedFormula, Median, identity)
	case "bulk_modulus":
		if v, ok := db.value(name, Log10BulkModulus, reducedFormula, Median, exp10); ok {
			return v, true
		}
		return db.value(name, BulkModulus, reducedFormula, Median, identity)
	case "shear_modulus":
		if v, ok := db.value(name, Log10ShearModulus, reducedFormula, Median, exp10); ok {
			return v, true
		}
		return db.value(name, ShearModulus, reducedFormula, Median, identity)
	case "dielectric_electronic":
		return db.value(name, RefractiveIndex, reducedFormula, Median, square)
	}
	return Value{}, false
}

// Properties returns every reference value of a reduced formula, by
// property name.
func (db *DB) Properties(reducedFormula string) map[string]Value {
	out := map[string]Value{}
	for _, name := range referenceProperties {
		if v, ok := db.Property(name, reducedFormula); ok {
			out[name] = v
		}
	}
	return out
}

func identity(x float64) float64 { return x }
func exp10(x float64) float64    { return math.Pow(10, x) }

// square maps a refractive index to ε∞ = n²; n ≥ 0 in the table, so the
// map is monotone and the range maps to the range.
func square(n float64) float64 { return n * n }

// value converts a table's statistics with a monotone increasing function
// f into the property's unit.
func (db *DB) value(name string, t Table, reduced string, rule Rule, f func(float64) float64) (Value, bool) {
	s, ok := db.Lookup(t, reduced)
	if !ok {
		return Value{}, false
	}
	v := Value{
		Property: name, Unit: task.UnitOf(name), Table: t.Name, Rule: rule,
		Count: s.Count, Min: f(s.Min), Max: f(s.Max), MinFormula: s.MinFormula,
	}
	switch rule {
	case Lowest:
		v.Value = f(s.Min)
	default:
		v.Value = f(s.Median)
	}
	return v, true
}

// Formulas returns the reduced formula of every formation-energy entry, in
// table order: the known compounds with reference phases (seed materials
// are chosen from them).
func (db *DB) Formulas() []string {
	out := make([]string, len(db.entries))
	for i, e := range db.entries {
		out[i] = e.Composition.ReducedFormula()
	}
	return out
}
