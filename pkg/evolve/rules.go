package evolve

import (
	"fmt"
	"slices"
)

// Rule is one of LLEMA's chemistry-informed evolution rules (App. B.4,
// "Evolutionary generation rules"), the heuristics LLEMA injects into its
// prompts after generation 0. Name and Text are quoted from the paper;
// Operators are this package's operators that implement the rule (none for
// rule 8, which concerns surfaces).
type Rule struct {
	// Number is the rule's number in LLEMA App. B.4, 1–14.
	Number int
	Name   string
	Text   string
	// Operators name the operators implementing the rule (Operator*).
	Operators []string
}

// String writes the rule as LLEMA's prompt lists it: "Name: Text".
func (r Rule) String() string { return r.Name + ": " + r.Text }

// Names of the operators, as they appear in Proposal.Operator.
const (
	OpSameGroup           = "same-group"
	OpSimilarElement      = "similar-element"
	OpPartialSubstitution = "partial-substitution"
	OpOxidationState      = "oxidation-state"
	OpAnionExchange       = "anion-exchange"
	OpPrototypeFill       = "prototype-fill"
	OpCoordinationChange  = "coordination-change"
	OpRedox               = "redox"
	OpTemplateFill        = "template-fill"
	OpPropertyDirected    = "property-directed"
	OpCrossover           = "crossover"
	OpChargeCoupled       = "charge-coupled"
	OpIonicRadius         = "ionic-radius"
	OpIsoelectronic       = "isoelectronic"
	// OpScratch builds compositions from nothing (empty pools); it applies
	// rule 9 without a parent.
	OpScratch = "scratch"
	// OpRandomSubstitution is the unguided baseline (RandomSubstitution);
	// it implements no rule.
	OpRandomSubstitution = "random-substitution"
)

// Rules are LLEMA's 14 evolution rules, quoted from LLEMA App. B.4
// (Abhyankar et al., "LLEMA", 2025), each with the operators that
// implement it here. Rules[i] has Number i+1; a generation's rule indices
// (Input.Rules) index this slice.
var Rules = []Rule{
	{1, "Same-group elemental substitution", "Replace each element with another from the same periodic group.",
		[]string{OpSameGroup}},
	{2, "Stoichiometry-preserving substitution", "Keep the formula ratios but replace with chemically similar elements.",
		[]string{OpSimilarElement, OpPartialSubstitution}},
	{3, "Oxidation state substitution", "Replace elements with others having the same oxidation state.",
		[]string{OpOxidationState}},
	{4, "Functional group substitution", "Swap one functional group with another of similar chemical behavior.",
		[]string{OpAnionExchange}},
	{5, "Crystal prototype substitution", "Maintain the structural prototype (e.g., perovskite ABX3) and replace elements.",
		[]string{OpPrototypeFill}},
	{6, "Coordination geometry mutation", "Change the ligand coordination number around a central atom.",
		[]string{OpCoordinationChange}},
	{7, "Oxidation/reduction variant", "Adjust stoichiometry for different redox configurations.",
		[]string{OpRedox}},
	{8, "Surface functionalization", "Add functional groups to a known material surface.",
		nil},
	{9, "Template-guided combinatorics", "Fill in a known formula structure with compatible elements.",
		[]string{OpTemplateFill, OpScratch}},
	{10, "Inverse property conditioning", "Generate candidates with properties conditioned on a specified target.",
		[]string{OpPropertyDirected}},
	{11, "Retrosynthesis-based forward design", "Suggest plausible products from precursors.",
		[]string{OpCrossover}},
	{12, "Functional analog discovery", "Replace with another compound serving the same role.",
		[]string{OpChargeCoupled}},
	{13, "Tolerance-factor guided substitution", "Replace atoms while preserving structural stability rules.",
		[]string{OpIonicRadius}},
	{14, "Periodicity-preserving analog search", "Replace atoms while maintaining periodic trends.",
		[]string{OpIsoelectronic}},
}

// RuleByNumber returns LLEMA's rule n (1–14).
func RuleByNumber(n int) (Rule, error) {
	if n < 1 || n > len(Rules) {
		return Rule{}, fmt.Errorf("evolve: no rule %d (LLEMA has rules 1–%d)", n, len(Rules))
	}
	return Rules[n-1], nil
}

// ruleOf returns the number of the rule an operator implements (0 for the
// baseline).
func ruleOf(op string) int {
	for _, r := range Rules {
		if slices.Contains(r.Operators, op) {
			return r.Number
		}
	}
	return 0
}

// enabledOperators returns the operators of the rules with the given
// indices into Rules; nil indices enable every operator. Indices outside
// Rules are ignored; when the rules given have no operator at all (rule 8
// alone) every operator is enabled, so a generation never stalls on the
// rule sample.
func enabledOperators(indices []int) map[string]bool {
	out := map[string]bool{}
	if indices != nil {
		for _, i := range indices {
			if i < 0 || i >= len(Rules) {
				continue
			}
			for _, op := range Rules[i].Operators {
				out[op] = true
			}
		}
	}
	if len(out) == 0 {
		for _, r := range Rules {
			for _, op := range r.Operators {
				out[op] = true
			}
		}
	}
	return out
}
