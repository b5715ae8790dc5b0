// Package spacegroup holds the 230 space-group types in the 530 settings of
// Hall's list, generates their operations from Hall symbols, looks settings
// up by Hermann–Mauguin symbol, Hall symbol or ITA number, and finds the
// space group of a crystal structure.
//
// # Tables
//
// Each setting is a line of data (ITA number, Hall symbol, HM symbols,
// setting choice, Schoenflies symbol), as listed in the International
// Tables for Crystallography Vol. A and B (§1.4, Appendix A1.4.2, after
// S. R. Hall, Acta Cryst. A37, 517 (1981)). ParseHall generates the
// operations: the generators the matrix symbols denote, shifted to the
// symbol's origin, closed under composition with translations modulo the
// lattice, in exact arithmetic (translations in 1/24). The tests check every
// setting's order against ITA (point-group order times lattice points per
// cell) and its closure. ByHM, ByHall and ByNumber look settings up;
// ByNumber and symbols without an origin or axes suffix give the standard
// setting of ITA with origin choice 2 and hexagonal axes (Setting.Choice
// says which).
//
// # Detection
//
// Detect follows spglib's approach (A. Togo, K. Shinohara, I. Tanaka, Sci.
// Technol. Adv. Mater. Meth. 4, 2384822 (2024); spglib.readthedocs.io),
// implemented anew:
//
//  1. The input cell is Delaunay-reduced (Selling's algorithm, ITA
//     §3.1.2.3), so that the nearest periodic image of a fractional
//     difference is found by rounding each component.
//  2. Pure translations: vectors carrying the first atom of the least
//     numerous type onto an atom of its type that map every atom onto an
//     atom of its type within SymPrec (Å). They span the primitive lattice;
//     the primitive cell, Delaunay-reduced again, holds each atom's images
//     merged at their mean position.
//  3. Lattice point group: integer matrices with columns among the 26
//     vectors with entries in {−1, 0, 1} that keep every cell length within
//     SymPrec and every cell angle within AngleTolerance (degrees).
//  4. Crystal operations: for each lattice rotation, the translation that
//     maps every atom onto an atom of its type within SymPrec, refined to
//     the mean displacement. A rotation with two such translations means
//     the tolerance is too loose, and the rotations must form a group.
//  5. Identification: the rotation types (determinant, trace) give the
//     crystal class and the candidate types; the rotation axes and the
//     shortest lattice vectors perpendicular to the principal axis give
//     candidate conventional bases; and the operations, carried to a
//     candidate basis, must equal a candidate's standard setting up to an
//     origin shift o, which solves (W − I)·o ≡ t − w (mod lattice) for all
//     operations at once (every solution class of three independent rows is
//     tried; each must reproduce every operation within SymPrec).
//
// When a step fails the search is repeated with both tolerances reduced by
// 5 %, up to 20 times, as spglib does. The Dataset gives the number and
// symbol, the operations of the input cell, the transformation to the
// standard conventional cell and that cell's atoms; AsymmetricUnit and
// StdParameters give what a symmetrised CIF needs (positions and cell
// parameters made exact). Entropy computes MADE's space-group entropy of a
// set of structures.
//
// The package imports nothing of Crucible: the crystal package uses it to
// expand a CIF that gives only a space-group symbol and to write symmetrised
// CIFs (WriteSymmetrizedCIF), and Structure.SpaceGroup calls Detect.
package spacegroup
