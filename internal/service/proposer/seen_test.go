package proposer

import (
	"fmt"
	"testing"
)

func TestSeenCache(t *testing.T) {
	var c seenCache
	if c.has("a", "fp1") {
		t.Fatal("empty cache has fp1")
	}
	c.add("a", "fp1")
	c.add("b", "fp2")
	for _, tc := range []struct {
		campaign, fp string
		want         bool
	}{
		{"a", "fp1", true},
		{"a", "fp2", false}, // another campaign's
		{"b", "fp2", true},
		{"c", "fp1", false},
	} {
		if got := c.has(tc.campaign, tc.fp); got != tc.want {
			t.Errorf("has(%s, %s) = %v, want %v", tc.campaign, tc.fp, got, tc.want)
		}
	}
	// Past seenCampaigns campaigns the cache starts over (a forgotten
	// "seen" is asked again, never wrongly answered).
	for i := range seenCampaigns {
		c.add(fmt.Sprint("x", i), "fp")
	}
	if c.has("a", "fp1") {
		t.Error("remembers more campaigns than its bound")
	}
	if !c.has(fmt.Sprint("x", seenCampaigns-1), "fp") {
		t.Error("forgot the latest campaign")
	}
}
