// Package oracle is Crucible's property oracle: the hierarchical oracle of
// LLEMA (§2.3, App. B.1) that the evaluator calls on every candidate.
//
// For each structure, in order:
//
//  1. Validity (crystal.Validate): sane lattice, minimum interatomic
//     distance, atom count and volume per atom limits, the stated formula,
//     the chemistry verdict on the composition (its bonding class and that
//     class's rules, crystal.JudgeComposition); and every element must
//     have CGCNN atom features. Failures are reasons (as data, never a
//     panic). Validity is a flag, not a gate: a structure invalid only by
//     its chemistry or stated formula is still predicted (steps 2 and 3).
//     Only an unreadable structure, a physically impossible one
//     (overlapping atoms, a cell too dense, exploded or too thin), one
//     beyond the atom limit or one the surrogates cannot featurise is not
//     (Result.Predicted false): it gets its exact structure properties
//     (density and volume per atom, facts of the cell as given, useful to
//     see why it failed) and no surrogate or reference values.
//
//  2. Properties. CGCNN inference (pkg/cgcnn, the published checkpoints of
//     Xie & Grossman, PRL 120, 145301 (2018)) for every predicted structure,
//     the checkpoints sharing one featurisation per structure; each value
//     carries the checkpoint's published test MAE as its uncertainty (see
//     Surrogates). Neighbours tied at CGCNN's twelfth-neighbour cut are
//     weighed by a rule of the distances alone (cgcnn.TieTolerance), so
//     that every value is the same, to 1e-9, however the structure is
//     rotated, translated, ordered or written to a file and read back;
//     where the choice among tied neighbours of different elements could
//     change a prediction, its spread is reported as added uncertainty
//     (Value.TieSpread). Then the exact lookup (pkg/reference): when the reduced
//     formula is in the reference tables the candidate is Known (LLEMA
//     §4.2, memorisation) and the reference value wins, with the losing
//     surrogate value reported alongside (Value.Surrogate). The electronic
//     dielectric constant has no surrogate and comes only from the
//     reference (dielectric_electronic, ε∞ ≈ n²). Density and volume per
//     atom are exact, from the structure.
//
//     Crucible's own surrogates (pkg/surrogate: gradient-boosted trees
//     trained on the shipped data) give the properties a request names
//     (Request.Properties, OwnProperties): the static dielectric constant
//     κ and the largest dielectric tensor element (taking the band gap
//     above, so after it), piezo_max_eij (0 exactly by symmetry for a
//     centrosymmetric structure, which wins over a formula's reference
//     value of another polymorph), conductivity (composition only), and
//     piezo_max_dij estimated from piezo_max_eij and the moduli
//     (surrogate.EstimateDij, the uncertainty propagating all three).
//     Each value carries the model's cross-validated uncertainty; a
//     formula in the model's training set gets the set's value. Model
//     files are found in the data directory or the model cache
//     (surrogate.Find) on first need, and with Options.TrainModels
//     trained into the cache when missing (surrogate.Ensure); without a
//     model the property has no value and a warning says how to train it.
//
//  3. Stability, when asked: energy above the convex hull and decomposition
//     (pkg/hull), in the candidate's chemical system, against the
//     reference phases (per composition the lowest Materials Project
//     formation energy, elements at zero) plus the caller's extra entries
//     (a campaign's own stable finds). The candidate's formation energy is
//     the reference value when the formula is known, else CGCNN's.
//     Diagrams are cached per chemical system.
//
// An Oracle is safe for concurrent use.
package oracle
