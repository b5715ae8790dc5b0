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
// applied, partial occupancy rejected), VASP POSCAR/CONTCAR (ParsePOSCAR),
// extended XYZ (ParseXYZ), pymatgen's Structure JSON (ParsePymatgenJSON)
// and a generator's candidate answer {formula, lattice, species, coords}
// (ParseCandidateJSON), telling them apart by file name and content
// (DetectFileFormat). WriteStructure writes CIF, POSCAR, pymatgen JSON and
// extended XYZ. Malformed input is a typed error (ErrBadCIF, ErrBadStructureJSON,
// ErrFormulaMismatch, …), never a panic.
//
// # Validity
//
// Validate runs the oracle's structural checks: lattice, minimum
// interatomic distance (0.5 Å by default, periodic images included),
// atoms per cell, volume per atom, the stated formula, and the chemistry
// of the composition (JudgeComposition, below). Failures are reported with
// stable ReasonCodes, so a campaign records "invalid: overlap" as data.
//
// # Chemistry
//
// JudgeComposition judges a composition by the chemistry it has. It first
// sorts it into a bonding class, then applies the rules that fit that
// class; every verdict names its class, and an ionic one the assignment of
// oxidation states found. Validate uses it for a structure's composition.
//
// element: one element. Valid, oxidation state 0.
//
// intermetallic: metals only (Element.IsMetal). Oxidation states are all 0
// and charge balance does not apply; the composition must be plausible: at
// most MaxIntermetallicElements metals (the five principal elements of
// high-entropy alloys) and no metal more than MaxIntermetallicRatio times
// as abundant as another (the most lopsided ordered intermetallics are near
// 1:22, Be22Re).
//
// ionic: metals and non-metals whose charges balance. States are drawn
// from the oxidation states observed in the ICSD as pymatgen tabulates
// them (Element.ICSDOxidationStates, pymatgen 2022.11.7 periodic_table.json;
// all known states for the few elements with none observed), with these
// changes:
//
//   - fixed valence: the alkali metals are +1, the alkaline earths, Zn and
//     Cd +2, Al, Sc, Y, La and Lu +3 and nothing else (pymatgen's Sc²⁺ and
//     La²⁺ are the formal states of metallic reduced halides, judged as
//     metal-rich below);
//   - extended states, tried only when the ICSD states fail and F, O, Cl,
//     Br or I is present: the other known positive states of the
//     transition metals of groups 4–12 and the p-block metals (Mn⁶⁺ in
//     manganates, Ru⁷⁺ in perruthenates, Fe⁴⁺ in ferrates) and every known
//     state of the non-metals (Cl⁷⁺ in perchlorates) except O⁻;
//   - Zintl anions: beside a less electronegative metal, the negative
//     states pymatgen knows for the p-block metals, Au and Pt (Sn⁴⁻, Pb⁴⁻,
//     Bi³⁻, Au⁻, Pt²⁻: Sr₃PbO, CsAu); the electron count below lets the
//     p-block metals down to the octet (In⁵⁻ … Bi³⁻: Ca₆In₂NF);
//   - Kr²⁺ and Xe²⁺,⁴⁺,⁶⁺,⁸⁺ (Greenwood & Earnshaw), which pymatgen's
//     tables lack.
//
// An assignment must sum to zero and pass the Pauling test of SMACT
// (Davies et al., Chem 1, 617 (2016)): every cation less electronegative
// than every anion. One state per element is tried first; then mixed
// valence, the atoms of an element split over several states of one sign
// (Fe3O4 = Fe²⁺Fe³⁺₂O₄), over up to four formula units (PdF3 = Pd²⁺Pd⁴⁺F₆).
// Assignments are ranked as pymatgen's Composition.oxi_state_guesses ranks
// them: by Σ count × occurrence of each ion among the bond-valence
// analysed sites of the ICSD (pymatgen/analysis/icsd_bv.yaml, "occurrence";
// see icsdOccurrence), so Cu2ZnSnS4 comes out Cu⁺Zn²⁺Sn⁴⁺S²⁻. A composition
// that balances is ionic, whatever else it may also be: TiN is reported as
// Ti³⁺N³⁻, Mo2C as Mo²⁺C⁴⁻, formal states as pymatgen gives them.
//
// Compositions of metals and non-metals that no assignment balances are
// judged by electron count: every element gets a range for the mean charge
// of its atoms, and the composition is allowed when the ranges admit a
// total of zero. Metals range over their ionic states; non-metals are
// anions at their isolated closed-shell charge (C⁴⁻, N³⁻, S²⁻, F⁻), and
// positive up to their highest state only beside a more electronegative
// non-metal. What widens the ranges is the chemistry the elements have:
//
//   - anion–anion bonds (polyanionic): B, C, Si, Ge, P, As, Sb, S, Se and Te
//     form networks, chains and clusters, up to charge 0 (LaB6, CaC2, NdP5,
//     Cs2Te13); N up to −1/3 (azide N₃⁻); O up to −1 (peroxide) beside a
//     metal of group 1, 2 or 12 and up to −1/3 (superoxide, ozonide) beside
//     Na, K, Rb or Cs; Cl and Br up to −1/3 (X₃⁻) and I up to −1/5 (I₅⁻)
//     beside K, Rb, Cs or Tl. H and F form no such bonds;
//   - metal–metal bonds (metal_rich): beside B, C, N, Si, P, S, Ge, As, Se,
//     Sb, Te or H only, every metal may keep electrons, down to charge 0
//     (FeSi, Hf2S, Ca2N). With F, O, Cl, Br or I only the metals that form
//     subfluorides, suboxides or reduced halides may: Ag (Ag₂F, +½); Rb, Cs
//     and groups 4–5 with O (Cs₁₁O₃, Ti₃O; 0) and the lanthanides Ce–Yb
//     (monoxides, +2); Sc, Y, La, the lanthanides and actinides, groups 4–5,
//     Mo, W and Re with Cl, Br and I (ScCl, LaI₂, Nb₆I₁₁; +1) and the
//     subvalent clusters of Ga, In, Tl, Bi and Hg (+½). Late transition and
//     p-block metals bonded into such a framework may then be at 0, as may
//     the framework (La₂Ni₂I). With B, C, N, Si, … beside the hard anions
//     (Gd₂CCl, Y₉C₄I₈O) a framework metal needs to form reduced compounds
//     with one of them, not all.
//
// A composition with F, O, Cl, Br or I so balanced is polyanionic when the
// metals keep their ionic states, else metal_rich; if nothing balances it
// is rejected with charge_neutrality (electronegativity when an
// assignment balances only against the Pauling test). So the fixed-valence
// metals with fluorine balance only in the ratios ionic chemistry allows:
// NaF2, MgF3, LiMgF4 and Na2F are rejected; so are AlO3 (no peroxide of
// Al), NaO4 (beyond the ozonide) and NaCl2 (no sodium polyhalide). A
// composition of metals with only B, C, N, Si, P, S, Ge, As, Se, Sb, Te
// or H so balanced is metal_rich when the mean electronegativity of its
// non-metals exceeds that of its metals by less than 0.5 (FeSi, MoSi2) or
// when metal–metal bonding is needed, else polyanionic (TiB2, LaB6); if
// nothing balances (NaH2: hydride needs more electrons than Na gives) it
// is rejected with electron_count.
//
// covalent: non-metals only. Balanced over the ICSD and then all known
// states with the Pauling test (SiC, XeF2); else by electron count with
// bonds between like atoms (B4C; O up to −1, halogens −1); else rejected
// with electron_count.
//
// Every class: He, Ne and Ar form no compounds, at most
// MaxChemistryElements elements and MaxFormulaAtoms atoms per reduced
// formula (implausible_composition).
//
// Measured against the Materials Project's stable compositions (e_hull = 0
// in mp_e_hull.csv) and generated junk in chemistry_test.go.
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
