package messages

import "testing"

func TestNoveltyString(t *testing.T) {
	for _, tc := range []struct {
		n    Novelty
		want string
	}{
		{Novelty{Class: NoveltyNew}, "new"},
		{Novelty{Class: NoveltyKnownStructure, Match: "prototype:rocksalt/LiF"}, "known_structure prototype:rocksalt/LiF"},
		{Novelty{Class: NoveltyNewPolymorph, Polymorphs: []string{"golden:a", "prototype:b"}}, "new_polymorph of golden:a, prototype:b"},
		{Novelty{Class: NoveltyOrderedMixture, EndMembers: map[string]float64{"NaF": 0.5, "LiF": 0.5}}, "ordered_mixture of LiF + NaF"},
		{Novelty{Class: NoveltyOrderedMixture, EndMembers: map[string]float64{"A": 0.25, "B": 0.75}}, "ordered_mixture of B + A"},
	} {
		if got := tc.n.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.n, got, tc.want)
		}
	}
	if (&Novelty{Class: NoveltyOrderedMixture}).Novel() || !(&Novelty{Class: NoveltyNewPolymorph}).Novel() || (*Novelty)(nil).Novel() {
		t.Error("Novel: only new and new_polymorph are novel")
	}
}
