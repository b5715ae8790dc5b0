package store

import (
	"context"
	"maps"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestVerdictsRecordedOnce: a verdict recorded again (a redelivered
// evaluation) is counted once, an accepted one is a discovery, and only an
// accepted one's find joins the campaign's hull, once.
func TestVerdictsRecordedOnce(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if _, err := s.CreateCampaign(ctx, spec(t, "vrd", 10, 2, 1), 0); err != nil {
		t.Fatal(err)
	}
	find := func(id string) *Find { return &Find{ID: id, Formula: "NaPrCl4", EnergyPerAtom: -2.5} }
	counted := map[string]bool{}
	for _, v := range []struct {
		id       string
		accepted bool
		class    string
		find     *Find
	}{
		{"c1", true, messages.NoveltyNew, find("c1")},
		{"c2", false, messages.NoveltyOrderedMixture, nil},
		{"c3", false, JudgedBelowHull, nil},
		{"c1", true, messages.NoveltyNew, find("c1")},
		{"c4", true, messages.NoveltyNewPolymorph, nil},
		{"c2", false, messages.NoveltyOrderedMixture, nil},
	} {
		added, err := s.RecordVerdict(ctx, "vrd", v.id, v.accepted, v.class, v.find)
		if err != nil {
			t.Fatal(err)
		}
		if added == counted[v.id] {
			t.Errorf("verdict %s: new %v, want %v", v.id, added, !counted[v.id])
		}
		counted[v.id] = true
	}
	if st, err := s.State(ctx, "vrd"); err != nil || st.Counters.Discoveries != 2 {
		t.Fatalf("discoveries %+v %v, want 2", st.Counters, err)
	}
	finds, err := s.Finds(ctx, "vrd")
	if err != nil || len(finds) != 1 || finds[0].ID != "c1" {
		t.Fatalf("finds %+v %v, want c1 once", finds, err)
	}
	got, err := s.Judged(ctx, "vrd")
	want := map[string]int{"accepted/new": 1, "accepted/new_polymorph": 1, "rejected/ordered_mixture": 1, "rejected/below_hull": 1}
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("judged %v %v, want %v", got, err, want)
	}
}

func TestJudgedClass(t *testing.T) {
	for _, tc := range []struct {
		ev   messages.Evaluation
		want string
	}{
		{messages.Evaluation{}, JudgedUnclassified},
		{messages.Evaluation{Novelty: &messages.Novelty{Class: messages.NoveltyNewPolymorph}}, messages.NoveltyNewPolymorph},
		{messages.Evaluation{HullOutlier: true, Novelty: &messages.Novelty{Class: messages.NoveltyNew}}, JudgedBelowHull},
	} {
		if got := JudgedClass(&tc.ev); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.ev, got, tc.want)
		}
	}
}
