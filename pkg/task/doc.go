// Package task defines discovery tasks: what a campaign looks for. A Task
// is a goal in words, property constraints, rules on the elements, and
// notes for the proposer's prompt (LLEMA §2.1–2.2, Table 2, App. C).
//
// Properties have canonical snake_case names (band_gap, bulk_modulus,
// e_above_hull, …; see Properties) with units, the aliases goals use
// ("Band gap", "E_hull", "κ") and a Support level saying what in Crucible
// provides them: a CGCNN surrogate, the structure itself, the convex hull,
// exact lookup in the reference tables only, or nothing (unsupported
// properties are reported, never made up).
//
// A constraint is a lower bound f ≥ l, an upper bound f ≤ u or an interval
// l ≤ f ≤ u (LLEMA Eq. 2). A candidate's margin on it is LLEMA's clipped,
// signed Φ (App. B.2), with clip(z) = max(−1, min(1, z)):
//
//	lower:    Φ = clip((f − l) / max(|l|, 1))
//	upper:    Φ = clip((u − f) / max(|u|, 1))
//	interval: Φ = clip(min(f − l, u − f) / max(|u − l|, 1))
//
// The score is S = Σ w_i Φ_i / Σ w_i: LLEMA's weighted sum (Eq. 4) with the
// weights normalised to sum to 1, so the default equal weights are 1/k and
// S ∈ [−1, 1] for any number of constraints. A candidate is feasible (a hit)
// iff every Φ_i ≥ 0; a missing property counts as Φ = −1 and makes it
// infeasible. Stability (energy above hull ≤ the campaign's threshold,
// 0.1 eV/atom by default, LLEMA §3.2) and element rules are separate
// filters, not part of S.
//
// LLEMA's 14 benchmark tasks are built in (Builtins, ByName). User tasks
// come from LLEMA's CSV format, whose natural-language goals ParseGoal
// reads, or from typed YAML/JSON files (ParseFile).
package task
