// Package novelty decides whether a candidate material is new: whether its
// structure is a known one (not only its formula), and whether it is an
// ordered mixture of known phases.
//
// # Known structures
//
// An Index holds known structures by reduced formula, from the sources of
// a Config (Standard gives the data folder's):
//
//   - the Materials Project CIF sets of the data folder
//     (mp_dielectric_petousis2017.csv, 1,056 structures;
//     mp_piezo_dejong2015.csv, 941), ids "mp-…";
//   - the golden CIFs (COD and MP structures and hand-built prototype
//     cells, 39 of the 51 files: not the P1 rewrites of the COD files, nor
//     two cells that are not known compounds), ids the file names;
//   - the prototype library's archetypes (Archetypes, 99 compounds such as
//     rock-salt LiF and rutile MgF2), built by the library as candidates
//     are, ids "prototype/formula".
//
// Classify reduces the candidate (package match) and compares it with the
// known structures of its reduced formula whose primitive cells have as
// many sites (match.Key), with pymatgen's default tolerances (density is
// not compared: a LiF rock salt at 2.0 g/cm³ is rock-salt LiF). The
// verdict is Known (with the structure matched), NewPolymorph (structures
// of the formula are held, none matches: the candidate is judged against
// the known polymorphs' energy), KnownFormula (the formula is in the
// reference tables but no structure of it is held: known by formula, as
// before structures were compared) or New.
//
// The sources are read on first use, without parsing the CIFs of the MP
// sets (their formula column files them); each known structure is parsed
// and reduced the first time a candidate of its formula needs it, and kept.
//
// A new polymorph is new with respect to the structures held: the MP
// tables list more polymorphs than the CIF sets hold (TiO2: 39 entries, 5
// structures), and Verdict.TableEntries says how many.
//
// # Ordered mixtures of known phases
//
// OrderedMixture applies the rule of the hull: a candidate with E_hull > 0
// whose composition lies inside the hull facet spanned by its isovalent
// end members is a mixture of those known phases, not a discovery.
// Isovalent end members come from the candidate's oxidation states: the
// elements of one charge form a swap set (Na⁺ and Li⁺ in NaLiF2), and an
// end member puts one element of each set on all of the set's sites (NaF,
// LiF). The facet is the hull's decomposition of the candidate's
// composition: it must consist of end members only, at least two. So
// NaLiF2, KLiCl2, CaMgO2, BaCaF4 and KRbF2 above the Materials Project
// hull are mixtures (of NaF + LiF, KCl + LiCl, CaO + MgO, BaF2 + CaF2,
// KF + RbF); BaTiO3 and MgAl2O4 are not (no two cations share a charge),
// nor is a candidate at the composition of a known ternary (the facet is
// the ternary itself). The Shannon radius ratio of each swap set is
// reported; by default it does not limit the swaps, since the mixtures
// the rule is for include immiscible pairs such as K⁺/Li⁺ (a ratio of
// 1.82), and MixtureOptions.MaxRadiusRatio restricts them when wanted.
package novelty
