// Package evolve is Crucible's default generator: LLEMA's chemistry rules
// (Abhyankar et al., "LLEMA", 2025, App. B.4) as programmatic operators on
// the parents an island supplies, the "mutation & crossover" arm of LLEMA's
// ablation (Table 4), with no language model in the loop.
//
// Propose takes a generation's input (the task, the chosen island's top-k
// successes and failures, the rules sampled for this generation, the
// proposer's filters) and returns proposed structures, each with its
// parents, operator, LLEMA rule and a rationale in words. Every operator is
// a chemical move:
//
//   - substitution of one element on all its sites by a same-group element
//     (rule 1), an element with the same common oxidation state (rule 3),
//     a chemically similar one (rule 2: Shannon radius and Pauling
//     electronegativity kernel), an ion of the same charge whose radius is
//     within 15 % at the site's coordination (rule 13, keeping
//     perovskites' tolerance factor in the formable range), or a
//     substitution steered by the parent's property deficits (rule 10);
//   - partial substitution (ordered solid solutions, rule 2), charge-coupled
//     co-substitution (SrTiO3 → LaAlO3, rule 12) and Grimm–Sommerfeld
//     isoelectronic shifts (GaN → ZnO, rule 14);
//   - prototype filling: the parent's prototype (rule 5) or any prototype of
//     its anonymous formula (rule 9) filled with ions chosen by charge and
//     size (radius-ratio rules, tolerance factor);
//   - anion exchange with rebalanced stoichiometry (rule 4), redox variants
//     (FeO → Fe2O3, LiFeO2 → MgFeO2; rule 7), coordination changes between
//     prototypes of one stoichiometry (rock salt ↔ CsCl ↔ wurtzite; rutile
//     ↔ fluorite ↔ CdI2; rule 6), and crossover of two parents into a
//     product of the precursors (MgO + Al2O3 → MgAl2O4; rule 11).
//
// Moves are weighted by chemical plausibility (similarity of the ions, fit
// of the ions to the prototype's sites by Pauling's radius-ratio rule and
// Goldschmidt's tolerance factor) and by property trends: a parent's
// evaluated properties say which way each constrained property should
// move, and moves that go that way (more ionic bonds and closed shells for
// a wider gap, larger electronegativity differences for a lower formation
// energy, …) are preferred.
//
// Structures come from crystal.Build (a library prototype, lattice from
// the ions' radii) or, for parents outside the library, crystal.Substitute
// (cell kept, volume rescaled); every proposal passes crystal.Validate with
// default options and the task's element rules, and is unique within the
// generation by crystal.Fingerprint. Known compositions (reference
// formulas) are proposed only when nothing novel could be made. Seeds
// chooses seed materials for the islands; RandomSubstitution is the
// unguided baseline.
//
// A Generator runs the same generations faster over a campaign: it
// remembers parents' analyses, the operators' moves on them and what each
// move built (its fingerprint or why it failed), so a move tried in an
// earlier generation is neither built nor fingerprinted again. Its
// proposals are exactly Propose's.
package evolve
