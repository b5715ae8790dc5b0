// Package hull computes exact phase diagrams: the lower convex hull of
// formation energy over composition, the energy of a phase above it, and the
// stable phases a composition decomposes into. Stability is the filter that
// decides whether a candidate is a discovery (LLEMA §3.2 and MADE §4.4:
// E_hull ≤ 0.1 eV/atom).
//
// # The hull
//
// An entry is a composition with atomic fractions x ∈ Δ (the simplex over
// the system's d elements) and a formation energy per atom E, measured from
// the elements at zero (FormationEnergies converts total energies). The hull
// energy at a composition x is the lowest energy per atom of any mixture of
// entries with that overall composition (Ong et al., Chem. Mater. 20, 1798
// (2008)):
//
//	H(x) = min Σ_j λ_j E_j   subject to   Σ_j λ_j x_j = x,  λ ≥ 0.
//
// Since every x_j sums to one, so does λ: λ_j is the fraction of the atoms
// in phase j, the decomposition. The energy above the hull of a phase (x, E)
// is E − H(x); for a hypothetical phase it is negative when the phase lies
// below the current hull (pymatgen's allow_negative=True). The stable
// entries are the vertices of the hull: those lying below the hull of all
// the others.
//
// # Method
//
// H(x) is computed directly as the linear programme above, by a revised
// simplex method whose basis is at most d×d (see simplex). Two facts keep
// the programmes small:
//
//   - Only stable entries are needed as columns: the hull of the vertices is
//     the hull of all entries.
//   - Only entries whose elements are a subset of x's can take part (λ ≥ 0
//     and x_j ≥ 0), so a query in Li–O of an 8-element diagram solves a
//     2-row programme over the stable Li–O entries, as pymatgen restricts
//     to the stable entries "in the space".
//
// The stable entries are found by Clarkson's output-sensitive extreme-point
// method (see build): the cost grows with entries × stable entries, never
// with the number of facets, which explodes in high dimension (it grows as
// n^⌊d/2⌋; pymatgen's Qhull-based PhaseDiagram enumerates them all). A
// lower hull by facets would answer a query by a point-location search, but
// building it is hopeless at 8 elements and 20 000 entries; the programme
// costs microseconds per query at that size. Each stable entry keeps a dual
// certificate (chemical potentials μ with μ·x_j ≤ E_j for the other
// vertices and μ·x_v > E_v), so Add updates the hull incrementally: a new
// entry is tested against the hull, and an existing vertex is re-examined
// only if the new entry falls below its certificate.
//
// # Exactness
//
// The answer is exact up to floating-point rounding: the simplex method
// stops at an optimal basis (all reduced costs ≥ −1e-12 eV/atom), the basis
// is then refactorised by Gaussian elimination with partial pivoting and
// optimality checked again, so H(x) is the exact optimum of the programme
// to about 1e-12 eV/atom (against pymatgen 2022.11.7 on 15 Materials
// Project systems the largest difference is 3.4e-14 eV/atom). Two
// tolerances are choices rather than rounding:
//
//   - An entry is stable only if it lies more than 1e-10 eV/atom below the
//     hull of the others. An entry on a facet (a convex combination of
//     stable entries with exactly their energy) is on the hull, with energy
//     above it 0, but not stable, as with Qhull in pymatgen.
//   - Phases with a fraction below 1e-9 are left out of a decomposition.
//
// Entries of the diagram never have a negative energy above the hull (a
// difference within the 1e-10 tolerance is reported as 0).
//
// # Ties
//
// Several entries with one composition (polymorphs): the lowest represents
// the composition and the first given wins an exact tie; the others are
// unstable, with their energy above it. When the hull has a facet with more
// vertices than its dimension needs (coplanar stable phases), a composition
// in it has several optimal decompositions; the simplex method reports one
// basic solution, chosen deterministically from the entries' order.
//
// # Use
//
// New builds a diagram; Query places a hypothetical phase; Result, Results
// and EAboveHull report on the entries; Add extends the diagram. A Cache
// keeps one diagram per chemical system, built on first use from reference
// entries and extended with a campaign's own finds.
package hull
