// Package match decides whether two crystal structures are the same
// structure, as pymatgen's StructureMatcher does (S. P. Ong et al.,
// Comput. Mater. Sci. 68, 314 (2013); pymatgen.analysis.structure_matcher),
// with its default options, implemented anew in Go.
//
// # Tolerances
//
// The defaults are pymatgen's (see Options; a zero field takes them):
//
//   - LTol 0.2: a lattice vector of one structure may stand for a vector of
//     the other when their lengths differ by a factor below 1.2;
//   - AngleTol 5°: the angles between the chosen vectors within 5° of the
//     other cell's;
//   - STol 0.3: every site within 0.3·(V/n)^(1/3) of its partner (V/n the
//     volume per site of the average lattice, below), after the best
//     translation;
//   - PrimitiveTol 0.25 Å: a pure translation must carry every atom within
//     0.25 Å, along each cell vector, of an atom of its element.
//
// The species comparison is exact: elements must be equal (pymatgen's
// SpeciesComparator on structures without oxidation states).
//
// # Steps
//
//  1. Reduce (each structure, once; Reduced caches the result):
//     Niggli reduction (Křivý & Gruber 1976 with the tolerant comparisons
//     of Grosse-Kunstleve et al. 2004, ε = 1e-5·V^(1/3)), then the
//     primitive cell: the pure translations are found among the vectors
//     joining atoms of the least numerous element, each refined to the
//     mean displacement of all atoms and snapped to the grid 1/g (g the
//     greatest common divisor of the element counts, of which every
//     translation group's order is a divisor), and kept when it maps each
//     atom within PrimitiveTol; they must form a group, whose lattice (the
//     Hermite normal form of the translations' integer coordinates) is the
//     primitive lattice, Niggli-reduced again; each atom's images are
//     merged at their mean position.
//  2. The element counts of the two primitive cells must be equal (hence
//     Key: reduced formula and number of primitive sites).
//  3. Both lattices are scaled to the geometric mean of their volumes
//     (unless NoScale): density is not compared. (Unscaled, it is compared
//     only through LTol: distances are measured on the average lattice,
//     so a cell 20 % denser still matches; twice as dense does not.)
//  4. Lattice mappings: every basis of a's lattice whose vectors have
//     lengths within LTol of b's three lengths and angles within AngleTol
//     of b's angles, with determinant ±1 (so mirror images, and hence
//     enantiomorphs, match, as in pymatgen).
//  5. For each mapping, a's sites are written in the new basis and
//     distances are measured on the average lattice (the mean of the two
//     cells' lengths and angles). For each translation that carries b's
//     first atom of its least numerous element onto an atom of a of that
//     element, a cheap test first asks that every atom of b have an atom
//     of a of its element within 2·STol·(V/n)^(1/3) across each family of
//     lattice planes; then the atoms are paired element by element by the
//     Hungarian method, minimising the sum of squared shortest distances
//     (pairs further apart than that bound, in the reduced basis, are not
//     allowed); the mean displacement is removed (the translation that
//     minimises the sum of squares for that pairing), and the displacements
//     are divided by (V/n)^(1/3).
//  6. The structures match when, for some mapping and translation, the
//     largest displacement is below STol (pymatgen's fit). Result reports
//     that least largest displacement and, separately, the least RMS
//     displacement over all mappings (pymatgen's get_rms_dist).
//
// Unlike pymatgen, which stops at the first mapping within STol, every
// mapping is tried (unless one is exact), so the RMS reported does not
// depend on the order of the search.
//
// # Agreement with pymatgen
//
// testdata/pymatgen_fit.csv holds pymatgen 2022.11.7's fit and get_rms_dist
// on 1,336 pairs: hand-built structures (rock salt, CsCl-type, zinc blende,
// wurtzite, rutile, anatase, perovskite) against rotated, translated,
// permuted, supercell, strained (5 %, 15 %, 30 %, axial and shear) and
// displaced copies of themselves and against their polymorphs, and pairs
// of Materials Project structures of one formula from the dielectric and
// piezoelectric sets (make_fixture.py writes it). Match agrees on all but
// one pair, explained in the test: a ZnTe cell whose atoms are 0.19 Å off
// a centring translation, which the primitive search here accepts within
// 0.25 Å and pymatgen, measuring the same tolerance along other cell
// vectors, does not. The RMS displacements agree to 1e-5.
//
// # What it does not do
//
// It does not match a structure with a supercell of another when the
// primitive search fails to reduce it (pymatgen's attempt_supercell),
// nor a subset of sites (allow_subset), nor disordered or partially
// occupied sites, nor species by anything but element (no oxidation
// states, spins, or anonymous matching of different elements). It does
// not compare densities (scaling is on by default) or energies. The
// primitive tolerance is measured along the Niggli cell's vectors, a box
// that is not a sphere, as pymatgen's is; translations are accepted when
// every atom has some atom of its element within the tolerance, not
// checked for a one-to-one pairing until the images are merged. Space
// groups are not part of the key: distortions within STol change them
// (a cubic cell strained by 5 % is tetragonal), and so do mirror images
// (P3_121 and P3_221 quartz match), so pruning by space group would lose
// matches pymatgen finds.
package match
