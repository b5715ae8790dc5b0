// Package spacegroup holds the 230 space-group types in the 530 settings of
// Hall's list, generates their operations from Hall symbols, looks settings
// up by Hermann–Mauguin symbol, Hall symbol or ITA number, and finds the
// space group of a crystal structure.
//
// Tables. Each setting is a line of data (ITA number, Hall symbol, HM
// symbols, setting choice, Schoenflies symbol), as listed in the
// International Tables for Crystallography Vol. A and B (§1.4, Appendix
// A1.4.2, after S. R. Hall, Acta Cryst. A37, 517 (1981)). The operations are
// generated from the Hall symbol by ParseHall: the generators the matrix
// symbols denote, shifted to the symbol's origin, closed under composition
// with translations modulo the lattice, in exact arithmetic (translations in
// 1/24). The tests check every setting's order against ITA (point-group
// order times lattice points per cell) and its closure.
//
// Detection follows spglib's approach (A. Togo, K. Shinohara, I. Tanaka,
// Sci. Technol. Adv. Mater. Meth. 4, 2384822 (2024); spglib.readthedocs.io):
// pure translations give a primitive cell; its reduced lattice gives the
// candidate rotations (integer matrices that keep the metric within the
// tolerances); each candidate's translation comes from matching atoms within
// symprec; the rotations' types give the point group, whose axes give the
// conventional basis; and the operations, carried to that basis, are
// matched to the standard setting of each candidate type by solving for the
// origin shift.
//
// The package imports nothing of Crucible: the crystal package's CIF reader
// uses it to expand a CIF that gives only a space-group symbol.
package spacegroup
