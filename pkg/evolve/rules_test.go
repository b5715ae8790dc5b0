package evolve

import (
	"maps"
	"slices"
	"testing"
)

func TestRules(t *testing.T) {
	if len(Rules) != 14 {
		t.Fatalf("%d rules, LLEMA App. B.4 has 14", len(Rules))
	}
	owner := map[string]int{}
	for i, r := range Rules {
		if r.Number != i+1 || r.Name == "" || r.Text == "" {
			t.Errorf("Rules[%d] = %+v", i, r)
		}
		for _, op := range r.Operators {
			if n, dup := owner[op]; dup {
				t.Errorf("operator %s in rules %d and %d", op, n, r.Number)
			}
			owner[op] = r.Number
			if ruleOf(op) != r.Number {
				t.Errorf("ruleOf(%s) = %d, want %d", op, ruleOf(op), r.Number)
			}
		}
	}
	// Quoted from the paper.
	quotes := map[int]string{
		1:  "Same-group elemental substitution: Replace each element with another from the same periodic group.",
		7:  "Oxidation/reduction variant: Adjust stoichiometry for different redox configurations.",
		13: "Tolerance-factor guided substitution: Replace atoms while preserving structural stability rules.",
	}
	for n, want := range quotes {
		r, err := RuleByNumber(n)
		if err != nil {
			t.Fatal(err)
		}
		if r.String() != want {
			t.Errorf("rule %d = %q, want %q", n, r.String(), want)
		}
	}
	// Every operator Propose can use implements a rule; only surface
	// functionalization (8) has none.
	for _, op := range operators {
		if _, ok := owner[op.name]; !ok {
			t.Errorf("operator %s implements no rule", op.name)
		}
	}
	if _, ok := owner[OpScratch]; !ok {
		t.Error("scratch implements no rule")
	}
	for _, r := range Rules {
		if (len(r.Operators) == 0) != (r.Number == 8) {
			t.Errorf("rule %d has operators %v", r.Number, r.Operators)
		}
	}
	if ruleOf(OpRandomSubstitution) != 0 {
		t.Error("the baseline implements a rule")
	}
	for _, n := range []int{0, 15, -1} {
		if _, err := RuleByNumber(n); err == nil {
			t.Errorf("RuleByNumber(%d) succeeded", n)
		}
	}
}

func TestEnabledOperators(t *testing.T) {
	all := enabledOperators(nil)
	tests := []struct {
		name    string
		indices []int
		want    []string
	}{
		{"nil enables all", nil, slices.Sorted(maps.Keys(all))},
		{"rule 1", []int{0}, []string{OpSameGroup}},
		{"rules 2 and 11", []int{1, 10}, []string{OpCrossover, OpPartialSubstitution, OpSimilarElement}},
		{"out of range ignored", []int{0, 14, -3}, []string{OpSameGroup}},
		{"rule 8 alone enables all", []int{7}, slices.Sorted(maps.Keys(all))},
		{"empty enables all", []int{}, slices.Sorted(maps.Keys(all))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(enabledOperators(tt.indices)))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if len(all) != len(operators)+1 { // + scratch
		t.Errorf("%d operators enabled by nil, have %d", len(all), len(operators)+1)
	}
}
