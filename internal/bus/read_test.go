package bus

import "testing"

func TestSubjectMatches(t *testing.T) {
	for _, c := range []struct {
		filter, subject string
		want            bool
	}{
		{"crucible.propose.c1", "crucible.propose.c1", true},
		{"crucible.propose.c1", "crucible.propose.c12", false},
		{"crucible.propose.*", "crucible.propose.c1", true},
		{"crucible.propose.*", "crucible.propose.c1.x", false},
		{"crucible.>", "crucible.propose.c1", true},
		{"crucible.>", "crucible", false},
		{"crucible.propose.c1", "crucible.propose", false},
		{"a.*.c", "a.b.c", true},
		{"a.*.c", "a.b.d", false},
	} {
		if got := subjectMatches(c.filter, c.subject); got != c.want {
			t.Errorf("subjectMatches(%q, %q) = %v, want %v", c.filter, c.subject, got, c.want)
		}
	}
}
