package reflection

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/discovery"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/task"
)

// opSummary is an op without its text: edit, key, support, campaigns.
type opSummary struct {
	Edit      string
	Key       string
	Support   int
	Campaigns string
}

func summarise(ops []ExperienceOp) []opSummary {
	out := []opSummary{}
	for _, op := range ops {
		out = append(out, opSummary{op.Edit, op.Experience.Key, op.Experience.Support, strings.Join(op.Experience.Campaigns, ",")})
	}
	return out
}

func lesson(key, kind, text string, support int, campaigns ...string) Experience {
	return Experience{Key: key, Kind: kind, Text: text, Support: support, Campaigns: campaigns}
}

func TestMemoryEdits(t *testing.T) {
	productive := "ZnO (O-Zn): 2 hits and 1 stable of 4 queries. Productive: explore its neighbours (isovalent substitutions, nearby stoichiometries) rather than repeat it."
	tests := []struct {
		name     string
		comps    []discovery.CompositionStat
		bank     []messages.Directive
		existing []Experience
		opt      Options
		want     []opSummary
		text     map[string]string // key → a substring of the put's text
	}{
		{
			name:  "add: a composition with hits",
			comps: []discovery.CompositionStat{stat("ZnO", 4, 1, 2)},
			want:  []opSummary{{EditAdd, "comp:ZnO", 4, "c1"}},
			text:  map[string]string{"comp:ZnO": productive},
		},
		{
			name:  "add: a capped composition",
			comps: []discovery.CompositionStat{stat("NaCl3", 5, 0, 0, 0.41, 1.2)},
			want:  []opSummary{{EditAdd, "comp:NaCl3", 5, "c1"}},
			text:  map[string]string{"comp:NaCl3": "NaCl3 (Cl-Na): 5 queries, none feasible or stable (E_hull 0.41 to 1.2 eV/atom). Unproductive: capped at 5 queries."},
		},
		{
			name:  "nothing to learn from a single failed query",
			comps: []discovery.CompositionStat{stat("NaCl3", 1, 0, 0)},
			want:  []opSummary{},
		},
		{
			name:     "unchanged evidence: no edit",
			comps:    []discovery.CompositionStat{stat("ZnO", 4, 1, 2)},
			existing: []Experience{lesson("comp:ZnO", KindComposition, productive, 4, "c1")},
			want:     []opSummary{},
		},
		{
			name:     "modify: more evidence from the same campaign",
			comps:    []discovery.CompositionStat{stat("ZnO", 6, 1, 3)},
			existing: []Experience{lesson("comp:ZnO", KindComposition, productive, 4, "c1")},
			want:     []opSummary{{EditModify, "comp:ZnO", 6, "c1"}},
			text:     map[string]string{"comp:ZnO": "3 hits and 1 stable of 6 queries"},
		},
		{
			name:     "modify: evidence of another campaign adds up and is kept",
			comps:    []discovery.CompositionStat{stat("ZnO", 4, 1, 2)},
			existing: []Experience{lesson("comp:ZnO", KindComposition, "ZnO (O-Zn): 1 hit and 0 stable of 5 queries.", 5, "c0")},
			want:     []opSummary{{EditModify, "comp:ZnO", 9, "c0,c1"}},
			text:     map[string]string{"comp:ZnO": "rather than repeat it. Earlier: ZnO (O-Zn): 1 hit and 0 stable of 5 queries."},
		},
		{
			name:  "merge: three composition lessons of one system",
			comps: []discovery.CompositionStat{stat("Li3PO4", 3, 1, 1), stat("Li4P2O7", 2, 0, 1), stat("LiPO3", 4, 1, 2), stat("Li2O", 1, 0, 0)},
			// Support: every query of the campaign in Li-O-P (3 + 2 + 4);
			// Li2O is another system.
			want: []opSummary{{EditMerge, "sys:Li-O-P", 9, "c1"}},
			text: map[string]string{"sys:Li-O-P": "Li-O-P: 3 compositions, 9 queries, 4 hits, 2 stable in campaign c1. Productive (hits/stable/queries): Li3PO4 (1/1/3), Li4P2O7 (1/0/2), LiPO3 (2/1/4)."},
		},
		{
			name:  "merge: lessons of the bank are deleted",
			comps: []discovery.CompositionStat{stat("Li3PO4", 3, 1, 1)},
			existing: []Experience{
				lesson("comp:Li4P2O7", KindComposition, "Li4P2O7 (Li-O-P): 1 hit and 1 stable of 2 queries. Productive.", 2, "c0"),
				lesson("comp:LiPO3", KindComposition, "LiPO3 (Li-O-P): 6 queries, none feasible or stable. Unproductive: capped at 6 queries.", 6, "c0"),
			},
			want: []opSummary{
				{EditMerge, "comp:Li4P2O7", 0, ""},
				{EditMerge, "comp:LiPO3", 0, ""},
				{EditMerge, "sys:Li-O-P", 11, "c0,c1"}, // 3 now + 2 + 6 from c0
			},
			text: map[string]string{"sys:Li-O-P": "Earlier: Li4P2O7 (Li-O-P): 1 hit and 1 stable of 2 queries. LiPO3 (Li-O-P): 6 queries, none feasible or stable."},
		},
		{
			name:     "prefer merge over add: into the system's lesson",
			comps:    []discovery.CompositionStat{stat("Li3PO4", 3, 1, 1)},
			existing: []Experience{lesson("sys:Li-O-P", KindSystem, "Li-O-P: 4 compositions, 10 queries, 2 hits, 1 stable in campaign c0.", 10, "c0")},
			want:     []opSummary{{EditMerge, "sys:Li-O-P", 13, "c0,c1"}},
			text:     map[string]string{"sys:Li-O-P": "Earlier: Li-O-P: 4 compositions, 10 queries, 2 hits, 1 stable in campaign c0."},
		},
		{
			name:     "option: merge at four",
			comps:    []discovery.CompositionStat{stat("Li3PO4", 3, 1, 1), stat("Li4P2O7", 2, 0, 1), stat("LiPO3", 4, 1, 2)},
			opt:      Options{MergeAt: 4},
			want:     []opSummary{{EditAdd, "comp:Li3PO4", 3, "c1"}, {EditAdd, "comp:Li4P2O7", 2, "c1"}, {EditAdd, "comp:LiPO3", 4, "c1"}},
			existing: nil,
		},
		{
			name:     "delete: a capped composition that now has hits",
			comps:    []discovery.CompositionStat{stat("NaCl", 4, 1, 1)},
			bank:     []messages.Directive{capOf("NaCl", 3)},
			existing: []Experience{lesson("comp:NaCl", KindComposition, "NaCl (Cl-Na): 3 queries, none feasible or stable. Unproductive: capped at 3 queries.", 3, "c0")},
			// The wrong lesson goes, with its support; the new one starts
			// from this campaign's evidence.
			want: []opSummary{{EditDelete, "comp:NaCl", 0, ""}, {EditAdd, "comp:NaCl", 4, "c1"}},
			text: map[string]string{"comp:NaCl": "NaCl (Cl-Na): 1 hit and 1 stable of 4 queries"},
		},
		{
			name:     "delete: an excluded element in a success",
			comps:    []discovery.CompositionStat{stat("TlF", 1, 1, 0)},
			bank:     []messages.Directive{excludeOf("Tl")},
			existing: []Experience{lesson("elem:Tl", KindElement, "Tl: excluded.", 8, "c0")},
			want:     []opSummary{{EditDelete, "elem:Tl", 0, ""}},
		},
		{
			name:  "add: element lessons of an exclusion",
			comps: []discovery.CompositionStat{lif, stat("TlCl3", 5, 0, 0), stat("TlBr", 3, 0, 0)},
			// LiF: 2 queries, too few for a lesson of its own; with TlBr it
			// makes the AB family, productive (LiF's hit).
			want: []opSummary{{EditAdd, "elem:Tl", 8, "c1"}, {EditAdd, "fam:AB", 5, "c1"}},
			text: map[string]string{"elem:Tl": "Tl: 8 queries over 2 compositions (TlBr, TlCl3), none feasible or stable while other compositions succeeded. Excluded."},
		},
		{
			name: "bound: the least supported lesson goes",
			comps: []discovery.CompositionStat{
				stat("ZnO", 4, 1, 2),
			},
			// Three families (AB2, A2B3, AB2C4) besides ZnO's (AB): no merge.
			existing: []Experience{
				lesson("comp:SiO2", KindComposition, "SiO2", 9, "c0"),
				lesson("comp:Al2O3", KindComposition, "Al2O3", 1, "c0"),
				lesson("comp:MgAl2O4", KindComposition, "MgAl2O4", 5, "c0"),
			},
			opt:  Options{MaxLessons: 3},
			want: []opSummary{{EditDelete, "comp:Al2O3", 0, ""}, {EditAdd, "comp:ZnO", 4, "c1"}},
		},
		{
			name:  "bound: a new lesson below the others is not added",
			comps: []discovery.CompositionStat{stat("ZnO", 4, 1, 2)},
			existing: []Experience{
				lesson("comp:SiO2", KindComposition, "SiO2", 9, "c0"),
				lesson("comp:MgAl2O4", KindComposition, "MgAl2O4", 5, "c0"),
			},
			opt:  Options{MaxLessons: 2},
			want: []opSummary{},
		},
		{
			name:  "merge: one stoichiometry across systems into a family lesson",
			comps: []discovery.CompositionStat{stat("ZnO", 4, 1, 2), stat("GaN", 3, 1, 1), stat("CaS", 5, 0, 0)},
			// Support: every query of the campaign of the AB family; the
			// family's lesson is new, its compositions' drafts go into it.
			want: []opSummary{{EditAdd, "fam:AB", 12, "c1"}},
			text: map[string]string{"fam:AB": "AB compositions: 3 compositions, 12 queries, 3 hits, 2 stable in campaign c1. Productive (hits/stable/queries): GaN (1/1/3), ZnO (2/1/4). Unproductive, capped: CaS. Keep the AB stoichiometry"},
		},
		{
			name:     "prefer merge over add: into the family's lesson",
			comps:    []discovery.CompositionStat{stat("ZnO", 4, 1, 2)},
			existing: []Experience{lesson("fam:AB", KindFamily, "AB compositions: 3 compositions, 10 queries, 2 hits, 1 stable in campaign c0.", 10, "c0")},
			want:     []opSummary{{EditMerge, "fam:AB", 14, "c0,c1"}},
			text:     map[string]string{"fam:AB": "Earlier: AB compositions: 3 compositions, 10 queries, 2 hits, 1 stable in campaign c0."},
		},
		{
			name:  "merge: a system before a family",
			comps: []discovery.CompositionStat{stat("Li3PO4", 3, 1, 1), stat("Li4P2O7", 2, 0, 1), stat("LiPO3", 4, 1, 2), stat("Na3VO4", 3, 1, 1), stat("K3AsO4", 3, 1, 1)},
			// Li3PO4 goes into Li-O-P; Na3VO4 and K3AsO4 into the AB3C4
			// family's lesson, whose evidence counts Li3PO4's queries too.
			want: []opSummary{{EditAdd, "fam:AB3C4", 9, "c1"}, {EditMerge, "sys:Li-O-P", 9, "c1"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.comps...)
			in.Directives, in.Existing, in.Options = tc.bank, tc.existing, tc.opt
			out := Reflect(in)
			if got := summarise(out.Ops); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ops\n%+v\nwant\n%+v", got, tc.want)
			}
			for key, sub := range tc.text {
				found := false
				for _, op := range out.Ops {
					if !op.Delete && op.Experience.Key == key {
						found = true
						if !strings.Contains(op.Experience.Text, sub) {
							t.Errorf("%s text %q lacks %q", key, op.Experience.Text, sub)
						}
					}
				}
				if !found {
					t.Errorf("no put of %s", key)
				}
			}
			for _, op := range out.Ops {
				if op.Reason == "" {
					t.Errorf("%s %s without a reason", op.Edit, op.Experience.Key)
				}
				if !op.Delete && len(op.Experience.Text) > maxLessonText {
					t.Errorf("%s: text of %d bytes", op.Experience.Key, len(op.Experience.Text))
				}
			}
			// Deletes come before puts.
			for i := 1; i < len(out.Ops); i++ {
				if out.Ops[i].Delete && !out.Ops[i-1].Delete {
					t.Errorf("delete after a put: %+v", summarise(out.Ops))
				}
			}
		})
	}
}

// TestMemoryAcrossEpisodes runs three episodes of a campaign, applying
// each reflection to the bank: support never falls, and a campaign's
// evaluations are never counted twice.
//
// With a store that does not keep Evidence, support is the best the other
// fields allow: it never falls nor double-counts, but may undercount a
// lesson shared by several campaigns.
func TestMemoryAcrossEpisodes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keep        bool // the store keeps Evidence
		wantZnO     int
		wantZnOText string
	}{
		{"store keeps evidence", true, 13, "3 hits and 2 stable of 6 queries"},
		{"store drops evidence", false, 12, "3 hits and 2 stable of 6 queries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testMemoryAcrossEpisodes(t, tc.keep, tc.wantZnO, tc.wantZnOText)
		})
	}
}

func testMemoryAcrossEpisodes(t *testing.T, keep bool, wantZnO int, wantZnOText string) {
	episodes := [][]discovery.CompositionStat{
		{stat("ZnO", 2, 1, 1), stat("NaCl3", 3, 0, 0)},
		{stat("ZnO", 5, 2, 3), stat("NaCl3", 3, 0, 0), stat("ZnS2", 2, 0, 1)},
		{stat("ZnO", 6, 2, 3), stat("NaCl3", 3, 0, 0), stat("ZnS2", 4, 1, 2), stat("ZnSe4", 1, 0, 1)},
	}
	in := input()
	in.Existing = []Experience{lesson("comp:ZnO", KindComposition, "ZnO (O-Zn): 1 hit and 1 stable of 7 queries.", 7, "c0")}
	support := map[string]int{"comp:ZnO": 7}
	for k, comps := range episodes {
		next := input(comps...)
		next.Episode = k
		next.Existing, next.Directives = in.Existing, in.Directives
		out := Reflect(next)
		in = applyBank(next, out)
		for i, e := range in.Existing {
			if !keep {
				in.Existing[i].Evidence = nil
			}
			if e.Support < support[e.Key] {
				t.Errorf("episode %d: support of %s fell from %d to %d", k, e.Key, support[e.Key], e.Support)
			}
			support[e.Key] = e.Support
		}
	}
	// ZnO's lesson: 7 evaluations of c0 + 6 of c1.
	if support["comp:ZnO"] != wantZnO {
		t.Errorf("ZnO support %d, want %d", support["comp:ZnO"], wantZnO)
	}
	for _, e := range in.Existing {
		if e.Key == "comp:ZnO" && !strings.Contains(e.Text, wantZnOText) || strings.Count(e.Text, "Earlier:") > 1 {
			t.Errorf("%s: %q", e.Key, e.Text)
		}
	}
	if support["comp:ZnS2"] != 4 || support["comp:NaCl3"] != 3 {
		t.Errorf("supports %v", support)
	}
	// ZnO, ZnS2 and ZnSe4 are different systems and families: no merge;
	// ZnSe4's one hit of one query is too little for a lesson.
	var got []string
	for _, e := range in.Existing {
		got = append(got, e.Key)
	}
	if want := []string{"comp:NaCl3", "comp:ZnO", "comp:ZnS2"}; !slices.Equal(got, want) {
		t.Errorf("bank %v, want %v", got, want)
	}
}

func TestProtectedElementLesson(t *testing.T) {
	in := input(lif, stat("TlCl3", 5, 0, 0), stat("TlBr", 3, 0, 0))
	in.Task.Elements = task.ElementRules{MustContainAll: []string{"Tl"}}
	out := Reflect(in)
	for _, op := range out.Ops {
		if op.Experience.Key == "elem:Tl" {
			if !strings.Contains(op.Experience.Text, "the task requires it: keep Tl") {
				t.Errorf("text %q", op.Experience.Text)
			}
			return
		}
	}
	t.Errorf("no lesson on the required Tl: %+v", summarise(out.Ops))
}

// TestLessonNeverRepeatsItself: a lesson of another campaign that says
// what the new one says is not appended to it as "Earlier".
func TestLessonNeverRepeatsItself(t *testing.T) {
	first := input(stat("NaCl3", 3, 0, 0))
	first.Campaign = "c0"
	out := Reflect(first)
	bank := applyBank(first, out)
	second := input(stat("NaCl3", 3, 0, 0))
	second.Existing = bank.Existing
	for _, op := range Reflect(second).Ops {
		if op.Experience.Key != "comp:NaCl3" || op.Delete {
			continue
		}
		if strings.Contains(op.Experience.Text, "Earlier:") {
			t.Errorf("repeated text: %q", op.Experience.Text)
		}
		return
	}
}
