// Package debate is the debate judge: role agents grounded in Crucible's
// tools argue over a stable hit for several rounds, and a judge
// consolidates their arguments into a report with a verdict (discovery,
// reject, needs-relaxation, needs-calculation).
//
// The design follows Materealize's thinking mode (Materealize §"thinking
// mode", Fig. 4 and Extended Data Fig. 4): role-specialised agents, each
// grounded in its own tools, state positions over at most five rounds, an
// agreement score is tracked and the debate breaks early when it settles,
// and a judge agent writes a structured report. Materealize's roles
// (precursor, thermodynamics, surface & kinetics, literature) map here to
// four roles over Crucible's own evidence:
//
//   - thermodynamics: the energy above hull under the best oracle tier, its
//     calibrated uncertainty, the competing phases and the sensitivity of
//     the energy above hull to the phase set;
//   - synthesis: the known phases of the chemical system, a precursor set
//     and its reaction with the reaction energy from the hull data, and
//     hazard flags of the elements;
//   - property confidence: each constraint's margin against its calibrated
//     uncertainty (tie spread included) and the metal classifier;
//   - novelty: the structure-aware novelty class (known structure, new
//     polymorph, ordered mixture of known phases) and the campaign's
//     earlier discoveries.
//
// Tools are Go functions over the evaluation, the hull of the reference
// phases, the reference data and the campaign's history, described to
// models as OpenAI function-calling tools; every call and its result is
// recorded. Offline, each role's position is computed by deterministic
// rules from the same tool results (Rules), so a debate needs no model; an
// Agent (a model) may replace any role, and a Judge the rules judge, with
// the rules standing in for a failed agent.
//
// The package is pure: no broker, no store, no clock.
package debate
