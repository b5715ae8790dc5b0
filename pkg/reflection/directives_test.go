package reflection

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

func capOf(f string, limit int) messages.Directive {
	return messages.Directive{Kind: messages.DirectiveCapComposition, Formula: f, Limit: limit, Reason: "earlier"}
}

func excludeOf(e string) messages.Directive {
	return messages.Directive{Kind: messages.DirectiveExcludeElement, Element: e, Reason: "earlier"}
}

func avoidOf(s string) messages.Directive {
	return messages.Directive{Kind: messages.DirectiveAvoidSystem, System: s, Reason: "earlier"}
}

type directiveCase struct {
	name      string
	comps     []discovery.CompositionStat
	rules     task.ElementRules
	bank      []messages.Directive
	opt       Options
	want      []string // keys(out.Directives)
	revoked   []string
	protected []string // elements named as required in a bullet
}

func runDirectiveCases(t *testing.T, tests []directiveCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.comps...)
			in.Task.Elements = tc.rules
			in.Directives = tc.bank
			in.Options = tc.opt
			out := Reflect(in)
			if got := keys(out.Directives); !slices.Equal(got, tc.want) {
				t.Errorf("directives %v, want %v", got, tc.want)
			}
			if got := keys(out.Revoke); !slices.Equal(got, append([]string{}, tc.revoked...)) {
				t.Errorf("revoked %v, want %v", got, tc.revoked)
			}
			for _, d := range out.Directives {
				if d.Reason == "" || d.Validate() != nil {
					t.Errorf("directive %+v: no reason or invalid", d)
				}
			}
			for _, e := range tc.protected {
				found := false
				for _, b := range out.Bullets {
					found = found || strings.HasPrefix(b, e+" is required by the task")
				}
				if !found {
					t.Errorf("no bullet says %s is required: %q", e, out.Bullets)
				}
			}
		})
	}
}

// LiF succeeds in the cases below, so that exclusions have contrast.
var lif = stat("LiF", 2, 1, 1, 0.01)

func TestCapRule(t *testing.T) {
	runDirectiveCases(t, []directiveCase{
		{name: "queried N times without success", comps: []discovery.CompositionStat{lif, stat("NaCl3", 3, 0, 0, 0.4, 0.9)}, want: []string{"cap_composition:NaCl3=3"}},
		{name: "limit is the query count", comps: []discovery.CompositionStat{stat("NaCl3", 7, 0, 0)}, want: []string{"cap_composition:NaCl3=7"}},
		{name: "below N", comps: []discovery.CompositionStat{stat("NaCl3", 2, 0, 0)}, want: []string{}},
		{name: "a hit is never capped", comps: []discovery.CompositionStat{stat("ZnO", 9, 0, 1)}, want: []string{}},
		{name: "a stable result is never capped", comps: []discovery.CompositionStat{stat("ZnO", 9, 1, 0)}, want: []string{}},
		{name: "already capped", comps: []discovery.CompositionStat{stat("NaCl3", 5, 0, 0)}, bank: []messages.Directive{capOf("NaCl3", 3)}, want: []string{}},
		{name: "option N = 5, not reached", comps: []discovery.CompositionStat{stat("NaCl3", 4, 0, 0)}, opt: Options{CapAfter: 5}, want: []string{}},
		{name: "option N = 5, reached", comps: []discovery.CompositionStat{stat("NaCl3", 5, 0, 0)}, opt: Options{CapAfter: 5}, want: []string{"cap_composition:NaCl3=5"}},
		{name: "the task excludes it already", comps: []discovery.CompositionStat{stat("PbO", 4, 0, 0)}, rules: task.ElementRules{Exclude: []string{"Pb"}}, want: []string{}},
		{name: "most queried first", comps: []discovery.CompositionStat{stat("KBr3", 3, 0, 0), stat("NaCl3", 6, 0, 0), stat("CsI3", 3, 0, 0)},
			want: []string{"cap_composition:NaCl3=6", "cap_composition:CsI3=3", "cap_composition:KBr3=3"}},
	})
}

func TestExcludeRule(t *testing.T) {
	tl := []discovery.CompositionStat{lif, stat("TlCl3", 5, 0, 0), stat("TlBr", 3, 0, 0)} // Tl: 8 queries over 2 compositions
	cd := []discovery.CompositionStat{stat("CdS", 5, 0, 0), stat("CdSe", 4, 0, 0)}        // Cd: 9 queries over 2
	runDirectiveCases(t, []directiveCase{
		{name: "M queries over two compositions", comps: tl, want: []string{"exclude_element:Tl"}},
		{name: "M − 1 queries: caps only", comps: []discovery.CompositionStat{lif, stat("TlCl3", 4, 0, 0), stat("TlBr", 3, 0, 0)},
			want: []string{"cap_composition:TlCl3=4", "cap_composition:TlBr=3"}},
		{name: "one composition: a cap", comps: []discovery.CompositionStat{lif, stat("TlCl3", 8, 0, 0)}, want: []string{"cap_composition:TlCl3=8"}},
		{name: "option M = 9", comps: tl, opt: Options{ExcludeAfter: 9}, want: []string{"cap_composition:TlCl3=5", "cap_composition:TlBr=3"}},
		{name: "no contrast: nothing succeeded", comps: tl[1:], want: []string{"cap_composition:TlCl3=5", "cap_composition:TlBr=3"}},
		{name: "no contrast allowed", comps: tl[1:], opt: Options{ExcludeWithoutContrast: true}, want: []string{"exclude_element:Tl"}},
		{name: "an element of a success is never excluded", comps: []discovery.CompositionStat{lif, stat("LiCl3", 5, 0, 0), stat("LiBr3", 3, 0, 0)},
			want: []string{"cap_composition:LiCl3=5", "cap_composition:LiBr3=3"}},
		{name: "required element is protected", comps: tl, rules: task.ElementRules{MustContainAll: []string{"Tl"}},
			want: []string{"cap_composition:TlCl3=5", "cap_composition:TlBr=3"}, protected: []string{"Tl"}},
		{name: "one of several: the others remain", comps: tl, rules: task.ElementRules{MustContainOneOf: []string{"Tl", "Li"}},
			want: []string{"exclude_element:Tl"}},
		{name: "one of several: the last allowed is protected", comps: tl, rules: task.ElementRules{MustContainOneOf: []string{"Tl", "Pb"}},
			bank: []messages.Directive{excludeOf("Pb")}, want: []string{"cap_composition:TlCl3=5", "cap_composition:TlBr=3"}, protected: []string{"Tl"}},
		{name: "one of several: the others forbidden by the task", comps: tl, rules: task.ElementRules{MustContainOneOf: []string{"Tl", "Pb"}, Exclude: []string{"Pb"}},
			want: []string{"cap_composition:TlCl3=5", "cap_composition:TlBr=3"}, protected: []string{"Tl"}},
		{name: "allowed-only keeps two elements", comps: tl, rules: task.ElementRules{AllowedOnly: []string{"Tl", "Cl", "Br", "Li", "F"}}, want: []string{"exclude_element:Tl"}},
		{name: "allowed-only of two", comps: []discovery.CompositionStat{stat("Tl2O", 2, 1, 1), stat("TlCl3", 5, 0, 0), stat("TlCl", 4, 0, 0)},
			rules: task.ElementRules{AllowedOnly: []string{"Tl", "Cl"}}, want: []string{"cap_composition:TlCl3=5", "cap_composition:TlCl=4"}, protected: []string{"Cl"}},
		{name: "already excluded in the bank", comps: tl, bank: []messages.Directive{excludeOf("Tl")}, want: []string{}},
		{name: "the task forbids it already", comps: tl, rules: task.ElementRules{NonToxic: true}, want: []string{}},
		{name: "two elements, most queried first", comps: append(slices.Clone(tl), cd...), want: []string{"exclude_element:Cd", "exclude_element:Tl"}},
		{name: "at most MaxExclusions", comps: append(slices.Clone(tl), cd...), opt: Options{MaxExclusions: 1},
			want: []string{"exclude_element:Cd", "cap_composition:TlCl3=5", "cap_composition:TlBr=3"}},
		// NaCl3, Na2Cl5, NaBr3 fail: Na (12 queries) explains them all, so
		// Cl (9) is not excluded too.
		{name: "greedy: one exclusion explains the failures", comps: []discovery.CompositionStat{lif, stat("NaCl3", 5, 0, 0), stat("Na2Cl5", 4, 0, 0), stat("NaBr3", 3, 0, 0)},
			want: []string{"exclude_element:Na"}},
		// When the task names Na, Cl goes first, and NaBr3 alone is too
		// little evidence against Na.
		{name: "greedy: task elements last", comps: []discovery.CompositionStat{lif, stat("NaCl3", 5, 0, 0), stat("Na2Cl5", 4, 0, 0), stat("NaBr3", 3, 0, 0)},
			rules: task.ElementRules{MustContainOneOf: []string{"Li", "Na"}}, want: []string{"exclude_element:Cl", "cap_composition:NaBr3=3"}},
	})
}

func TestAvoidSystemRule(t *testing.T) {
	nacl := []discovery.CompositionStat{lif, stat("NaCl3", 5, 0, 0), stat("Na2Cl5", 4, 0, 0), stat("NaCl5", 3, 0, 0)}
	noExclusion := Options{ExcludeAfter: 100}
	runDirectiveCases(t, []directiveCase{
		{name: "three capped compositions", comps: nacl, opt: noExclusion, want: []string{"avoid_system:Cl-Na"}},
		{name: "option: four needed", comps: nacl, opt: Options{ExcludeAfter: 100, AvoidAfterCaps: 4},
			want: []string{"cap_composition:NaCl3=5", "cap_composition:Na2Cl5=4", "cap_composition:NaCl5=3"}},
		{name: "a success in the system", comps: append(slices.Clone(nacl), stat("NaCl", 1, 1, 0)), opt: noExclusion,
			want: []string{"cap_composition:NaCl3=5", "cap_composition:Na2Cl5=4", "cap_composition:NaCl5=3"}},
		{name: "the bank's caps count", comps: []discovery.CompositionStat{lif, stat("NaCl5", 3, 0, 0)}, opt: noExclusion,
			bank: []messages.Directive{capOf("NaCl3", 5), capOf("Na2Cl5", 4)}, want: []string{"avoid_system:Cl-Na"}},
		{name: "already avoided", comps: nacl, opt: noExclusion, bank: []messages.Directive{avoidOf("Cl-Na")}, want: []string{}},
		{name: "an exclusion covers it", comps: nacl, want: []string{"exclude_element:Cl"}},
	})
}

func TestRevokeContradictedDirectives(t *testing.T) {
	runDirectiveCases(t, []directiveCase{
		{name: "capped composition now has a hit", comps: []discovery.CompositionStat{stat("LiF", 4, 0, 1)}, bank: []messages.Directive{capOf("LiF", 3)},
			want: []string{}, revoked: []string{"cap_composition:LiF=3"}},
		{name: "capped composition still failing", comps: []discovery.CompositionStat{stat("LiF", 4, 0, 0)}, bank: []messages.Directive{capOf("LiF", 3)},
			want: []string{}},
		{name: "excluded element in a stable composition", comps: []discovery.CompositionStat{stat("LiF", 1, 1, 0)}, bank: []messages.Directive{excludeOf("Li")},
			want: []string{}, revoked: []string{"exclude_element:Li"}},
		{name: "avoided system with a hit", comps: []discovery.CompositionStat{stat("Li2F2", 1, 0, 1)}, bank: []messages.Directive{avoidOf("F-Li")},
			want: []string{}, revoked: []string{"avoid_system:F-Li"}},
		{name: "a revoked cap is not counted for avoidance", comps: []discovery.CompositionStat{stat("NaCl", 2, 0, 1), stat("NaCl5", 3, 0, 0)},
			bank: []messages.Directive{capOf("NaCl", 2), capOf("NaCl3", 5), capOf("Na2Cl5", 4)}, opt: Options{ExcludeAfter: 100},
			want: []string{"cap_composition:NaCl5=3"}, revoked: []string{"cap_composition:NaCl=2"}},
	})
}

func TestDirectivesAreBounded(t *testing.T) {
	// 30 failing binary fluorides and chlorides of different metals.
	metals := []string{"Li", "Na", "K", "Rb", "Cs", "Be", "Mg", "Ca", "Sr", "Ba", "Sc", "Y", "Ti", "Zr", "Hf"}
	var comps []discovery.CompositionStat
	for i, m := range metals {
		comps = append(comps, stat(m+"F7", 3+i%4, 0, 0), stat(m+"Cl7", 3, 0, 0))
	}
	in := input(comps...)
	in.Options.ExcludeAfter = 1000
	out := Reflect(in)
	if len(out.Directives) != DefaultMaxDirectives {
		t.Fatalf("%d directives, want %d", len(out.Directives), DefaultMaxDirectives)
	}
	for i := 1; i < len(out.Directives); i++ {
		a, b := out.Directives[i-1], out.Directives[i]
		if a.Limit < b.Limit || (a.Limit == b.Limit && a.Formula > b.Formula) {
			t.Errorf("directive %d (%s) before %d (%s): not by queries, then formula", i-1, a.Key(), i, b.Key())
		}
	}
	in.Options.MaxDirectives = 4
	if n := len(Reflect(in).Directives); n != 4 {
		t.Errorf("MaxDirectives 4: %d directives", n)
	}
	// Exclusions take the budget first; the caps they would make redundant
	// are dropped only when the exclusion is emitted.
	in = input(lif, stat("TlCl3", 5, 0, 0), stat("TlBr", 3, 0, 0), stat("CdS", 5, 0, 0), stat("CdSe", 4, 0, 0))
	in.Options.MaxDirectives = 1
	if got, want := keys(Reflect(in).Directives), []string{"exclude_element:Cd"}; !slices.Equal(got, want) {
		t.Errorf("budget 1: %v, want %v", got, want)
	}
	in.Options.MaxDirectives = 3
	in.Options.MaxExclusions = 1
	if got, want := keys(Reflect(in).Directives), []string{"exclude_element:Cd", "cap_composition:TlCl3=5", "cap_composition:TlBr=3"}; !slices.Equal(got, want) {
		t.Errorf("budget 3: %v, want %v", got, want)
	}
}

func ExampleReflect() {
	in := Input{
		Campaign: "wbg-1", Episode: 1, StabilityThreshold: 0.1,
		Task: task.Task{Name: "Wide gaps", Constraints: []task.Constraint{task.AtLeast("band_gap", 2.5)}},
		Compositions: []discovery.CompositionStat{
			{Formula: "GaN", Queries: 3, Hits: 2, Stable: 1},
			{Formula: "NaCl3", Queries: 4},
		},
		Counters:         messages.Counters{Evaluated: 7, Valid: 7, Hits: 2, Stable: 1, StableHits: 1},
		EpisodeEvaluated: 7,
	}
	out := Reflect(in)
	for _, d := range out.Directives {
		fmt.Println(d.Kind, d.Formula, d.Limit)
	}
	for _, op := range out.Ops {
		fmt.Println(op.Edit, op.Experience.Key, op.Experience.Support)
	}
	// Output:
	// cap_composition NaCl3 4
	// add comp:GaN 3
	// add comp:NaCl3 4
}
