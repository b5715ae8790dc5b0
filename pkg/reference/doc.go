// Package reference loads the composition-level reference tables (Materials
// Project data as packaged by Matbench and CrabNet) and answers exact
// lookups by reduced formula: the first stage of LLEMA's hierarchical
// oracle (LLEMA §2.3, App. B.1: "when properties are available in the
// Materials Project, we use them directly"), the memorisation test of
// LLEMA §4.2 (is a generated formula already known?) and the reference
// phases of the convex hulls.
//
// # Tables
//
// Each table is a CSV file "formula,target" (see Tables). Formulas are
// written as stored upstream: unreduced ("K12O16V4"), with parentheses
// ("Sr(AlH)2"), and repeated, one row per polymorph. Every formula is
// parsed with crystal.ParseFormula and keyed by its reduced formula
// (crystal.Composition.ReducedFormula, pymatgen's), so "Cl1Na1",
// "Cl6Na6" and a NaCl structure all meet at "NaCl".
//
// # One value per property
//
// The tables carry no material ids, so the rows of one formula in one table
// cannot be linked to the rows of the same formula in another (the band
// gap of the ground-state polymorph is not identifiable). Polymorphs are
// therefore combined per table (see Stats and DB.Property):
//
//   - formation energy and energy above hull: the lowest entry, the
//     ground state, which is also the polymorph a convex hull uses;
//   - band gap, bulk and shear modulus, refractive index: the median of the
//     polymorphs' values (the mean of the two middle ones for an even
//     count), with the count and the range reported alongside. The median
//     is robust to a single exotic polymorph (a high-pressure phase, a
//     metastable layered form) that the lowest or highest value would
//     single out.
//
// The moduli come from Matbench's log10 tables (10 987 entries, the data
// CGCNN-style models are benchmarked on) when the formula is there; the
// median is taken in log10 and converted to GPa (for an even count this is
// the geometric mean of the two middle values). A formula only in
// CrabNet's GPa tables takes their median.
//
// The electronic (high-frequency) dielectric constant, dielectric_electronic,
// is ε∞ ≈ n², from the refractive index n of the dielectric table (Matbench
// matbench_dielectric). The static dielectric constant κ
// (dielectric_constant), the piezoelectric and the conductivity values of
// known compounds come from the training sets of pkg/surrogate, through
// the oracle.
//
// # Hull reference phases
//
// HullEntries gives, per reduced composition, the lowest mp_e_form entry
// as a hull.Entry with id "mpef-<row>" (the 0-based data row, the ids of
// the golden phase diagrams); elemental entries are at 0 eV/atom in the
// table, and a hull adds a reference at zero for any element without one.
//
// A DB is immutable after loading and safe for concurrent use.
package reference
