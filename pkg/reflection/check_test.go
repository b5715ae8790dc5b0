package reflection

import (
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

func TestCheckDirectives(t *testing.T) {
	// ZnO succeeded; NaCl3 failed 4 times, TlCl 1 time; Mg-O-Si failed 3
	// times over two compositions.
	in := input(stat("ZnO", 3, 1, 1), stat("NaCl3", 4, 0, 0), stat("TlCl", 1, 0, 0), stat("Mg2SiO4", 2, 0, 0), stat("MgSiO3", 1, 0, 0))
	in.Task.Elements = task.ElementRules{MustContainOneOf: []string{"O", "Cl"}}
	in.Directives = []messages.Directive{{Kind: messages.DirectiveCapComposition, Formula: "MgSiO3", Limit: 1, Reason: "bank"}}
	proposed := []messages.Directive{
		{Kind: messages.DirectiveExcludeElement, Element: "Zn", Reason: "wrong: Zn is in a success"},
		{Kind: messages.DirectiveExcludeElement, Element: "Na", Reason: "4 failures"},
		{Kind: messages.DirectiveExcludeElement, Element: "Tl", Reason: "one observation"},
		{Kind: messages.DirectiveAvoidSystem, System: "O-Zn", Reason: "wrong"},
		{Kind: messages.DirectiveAvoidSystem, System: "Si-O-Mg", Reason: "3 failures"},
		{Kind: messages.DirectiveCapComposition, Formula: "Na2Cl6", Limit: 2, Reason: "capped below its count"},
		{Kind: messages.DirectiveCapComposition, Formula: "TlCl", Limit: 1, Reason: "one observation"},
		{Kind: messages.DirectiveCapComposition, Formula: "ZnO", Limit: 3, Reason: "a success"},
		{Kind: messages.DirectiveCapComposition, Formula: "MgSiO3", Limit: 1, Reason: "in the bank"},
		{Kind: "ban_everything", Reason: "?"},
		{Kind: messages.DirectiveExcludeElement, Element: "Xx"},
		{Kind: messages.DirectiveExcludeElement, Element: "Na", Reason: "twice"},
	}
	kept, dropped := CheckDirectives(in, proposed)
	if got, want := keys(kept), []string{"exclude_element:Na", "avoid_system:Mg-O-Si", "cap_composition:NaCl3=4"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("kept %v, want %v", got, want)
	}
	wantDropped := []string{"success", "support 1", "success", "support 1", "success", "support 1", "unknown kind", "Xx", "already in force"}
	if len(dropped) != len(wantDropped) {
		t.Fatalf("dropped %+v", dropped)
	}
	for i, d := range dropped {
		if !strings.Contains(d.Reason, wantDropped[i]) {
			t.Errorf("dropped %d (%+v): reason %q, want %q in it", i, d.Directive, d.Reason, wantDropped[i])
		}
	}
}

func TestApplyEdits(t *testing.T) {
	in := input(stat("ZnO", 4, 1, 2), stat("ZnO2", 3, 0, 0), stat("NaCl3", 1, 0, 0))
	in.Existing = []Experience{
		lesson("comp:ZnO", KindComposition, "ZnO: productive.", 2, "c1"),
		lesson("comp:ZnO2", KindComposition, "ZnO2: capped.", 3, "c0"),
		lesson("comp:GaN", KindComposition, "GaN: productive.", 9, "c0"),
	}
	ops, dropped := ApplyEdits(in, []Edit{
		{Op: EditMerge, Key: "sys:Zn-O", Text: "O-Zn: ZnO works (2 hits of 4), ZnO2 does not.", From: []string{"comp:ZnO", "comp:ZnO2"}, Reason: "one system"},
		{Op: EditAdd, Key: "comp:NaCl3", Text: "NaCl3 fails.", Reason: "one query"},
		{Op: EditDelete, Key: "comp:GaN", Reason: "other campaign's evidence"},
		{Op: EditModify, Key: "comp:AlN", Text: "AlN.", Reason: "not in the bank"},
		{Op: EditAdd, Key: "elem:Zn", Text: "GaN: productive.", Reason: "a copy"},
		{Op: "rewrite", Key: "comp:ZnO", Text: "x"},
	})
	if got := summarise(ops); len(got) != 3 || got[0] != (opSummary{EditMerge, "comp:ZnO", 0, ""}) || got[1] != (opSummary{EditMerge, "comp:ZnO2", 0, ""}) ||
		got[2] != (opSummary{EditMerge, "sys:O-Zn", 10, "c0,c1"}) {
		t.Errorf("ops %+v", got)
	}
	want := []string{"support 1", "other campaigns' evidence is kept", "no such lesson", "verbatim", "unknown operation"}
	if len(dropped) != len(want) {
		t.Fatalf("dropped %+v", dropped)
	}
	for i, d := range dropped {
		if !strings.Contains(d.Reason, want[i]) {
			t.Errorf("dropped %d: %+v, want %q", i, d, want[i])
		}
	}
}

// TestApplyEditsFamily: a family key reads as an anonymous formula or as
// a formula of the family, its support is the campaign's queries of the
// family; anything else is refused.
func TestApplyEditsFamily(t *testing.T) {
	in := input(stat("SrTiO3", 4, 1, 2), stat("BaZrO3", 3, 0, 0), stat("ZnO", 5, 0, 0))
	in.Existing = []Experience{
		lesson("comp:SrTiO3", KindComposition, "SrTiO3: productive.", 4, "c1"),
		lesson("comp:BaZrO3", KindComposition, "BaZrO3: capped.", 3, "c1"),
	}
	ops, dropped := ApplyEdits(in, []Edit{
		{Op: EditMerge, Key: "fam:CaTiO3", Text: "ABC3: SrTiO3 works (2 hits of 4), BaZrO3 does not.", From: []string{"comp:SrTiO3", "comp:BaZrO3"}, Outcome: OutcomeProductive},
		{Op: EditAdd, Key: "fam:AB", Text: "AB: ZnO 5 queries, nothing.", Outcome: OutcomeUnproductive},
		{Op: EditAdd, Key: "fam:BA3", Text: "not a family"},
		{Op: EditAdd, Key: "fam:ABC", Text: "no composition of it"},
	})
	if got := summarise(ops); len(got) != 4 || got[0] != (opSummary{EditMerge, "comp:BaZrO3", 0, ""}) || got[1] != (opSummary{EditMerge, "comp:SrTiO3", 0, ""}) ||
		got[2] != (opSummary{EditAdd, "fam:AB", 5, "c1"}) || got[3] != (opSummary{EditMerge, "fam:ABC3", 7, "c1"}) {
		t.Errorf("ops %+v", got)
	}
	if len(dropped) != 2 || !strings.Contains(dropped[0].Reason, "not an anonymous formula") || !strings.Contains(dropped[1].Reason, "support 0") {
		t.Errorf("dropped %+v", dropped)
	}
	for _, c := range []struct {
		s  string
		ok bool
	}{{"A", true}, {"AB", true}, {"ABC3", true}, {"A2B3", true}, {"AB2C4", true}, {"BA", false}, {"A3B", false}, {"AC", false}, {"A1B", false}, {"", false}, {"SrTiO3", false}} {
		if isAnonymous(c.s) != c.ok {
			t.Errorf("isAnonymous(%q) = %v", c.s, !c.ok)
		}
	}
}

func TestRelevant(t *testing.T) {
	bank := []Experience{
		lesson("sys:Ca-F", KindSystem, "", 20),
		lesson("comp:ZnO", KindComposition, "", 4),
		lesson("elem:Tl", KindElement, "", 30),
		lesson("sys:Ba-F-Mg", KindSystem, "", 6),
		lesson("comp:MgO", KindComposition, "", 3),
	}
	var got []string
	for _, e := range Relevant(bank, []string{"MgO", "BaMgF4"}, 4) {
		got = append(got, e.Key)
	}
	// Ba-F-Mg and MgO match a parent exactly (the better supported
	// first); ZnO shares O with MgO (1/3), Ca-F shares F with BaMgF4
	// (1/4); Tl shares nothing and is cut.
	if want := "sys:Ba-F-Mg comp:MgO comp:ZnO sys:Ca-F"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	// A family lesson ranks with half the elements shared.
	bank = append(bank, lesson("fam:AB", KindFamily, "", 2), lesson("fam:ABC3", KindFamily, "", 50))
	got = got[:0]
	for _, e := range Relevant(bank, []string{"CaS"}, 3) {
		got = append(got, e.Key)
	}
	if want := "fam:AB sys:Ca-F fam:ABC3"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}
