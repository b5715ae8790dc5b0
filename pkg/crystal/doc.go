// Package crystal holds the crystal-chemistry core every other part of
// Crucible builds on: periodic structures and their compositions, the
// file formats they come in, the checks that decide whether a proposed
// structure is a valid crystal, and the structural keys and templates the
// generators use. It is pure Go with no state beyond read-only tables.
//
// # Structures and compositions
//
// A Structure is a Lattice (three row vectors, Å) and sites: an Element
// and fractional coordinates (Vec3) each. LatticeFromParameters builds a
// cell from a, b, c (Å) and α, β, γ (degrees) as pymatgen does (to the
// bit for right angles), which CGCNN's neighbour ties depend on. A
// Composition is an
// amount per element; ParseFormula reads formulas as pymatgen does ("Fe2O3",
// "Ca3(PO4)2", "Li0.5CoO2") and Composition.ReducedFormula writes them in
// pymatgen's element order. Element carries the periodic table's facts
// (mass, group, electronegativity, oxidation states, Shannon radii,
// crustal abundance, toxicity) for Z = 1–94, generated into
// elements_table.go by tools/elementgen.
//
// # Files
//
// ReadFile and ParseStructure read CIF (ParseCIF: symmetry operations
// applied, partial occupancy rejected), pymatgen's Structure JSON
// (ParsePymatgenJSON) and a generator's candidate answer {formula,
// lattice, species, coords} (ParseCandidateJSON), telling them apart by
// content (DetectFormat). WriteCIF and MarshalPymatgenJSON write them
// back. Malformed input is a typed error (ErrBadCIF, ErrBadStructureJSON,
// ErrFormulaMismatch, …), never a panic.
//
// # Validity
//
// Validate runs the oracle's structural checks: lattice, minimum
// interatomic distance (0.5 Å by default, periodic images included),
// atoms per cell, volume per atom, the stated formula, and charge
// neutrality with the Pauling electronegativity test
// (AssignOxidationStates; LLEMA App. B.1). Failures are reported with
// stable ReasonCodes, so a campaign records "invalid: overlap" as data.
//
// # Neighbours
//
// Structure.Neighbors and Structure.NearestNeighbors list periodic images
// within a cutoff, or the k nearest. With TiesAsPymatgen the k-nearest
// search keeps, among neighbours equidistant with the k-th, those pymatgen's
// neighbour search lists first, which CGCNN's published models were
// trained on (pymatgen_order.go).
//
// # Fingerprints and prototypes
//
// Fingerprint is a deterministic key of a structure (its reduced formula
// and a hash of its bond-graph topology) that the proposer deduplicates
// candidates by; Dissimilarity and Similar compare two structures
// directly. The prototype library (rock salt, perovskite, spinel, wurtzite
// and the rest, prototype_library.go) fits a composition to a structure
// type and builds it with lattice parameters from ionic radii (Matching,
// Build, BuildAll); Substitute swaps an element on its sites.
package crystal
