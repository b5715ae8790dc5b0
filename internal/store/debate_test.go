package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestClaimDebate(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	claim := func(id, want string) {
		t.Helper()
		got, err := s.ClaimDebate(ctx, "deb", id, 2)
		if err != nil || got != want {
			t.Fatalf("claim %s: %q %v, want %q", id, got, err, want)
		}
	}
	claim("a", ClaimNew)
	claim("a", ClaimResumed) // claimed, no transcript: its judge died
	claim("b", ClaimNew)
	claim("c", ClaimRules) // the budget of 2 is spent
	claim("c", ClaimRules)
	if _, err := s.SaveTranscript(ctx, "deb", "a", []byte(`{"first":1}`), 0); err != nil {
		t.Fatal(err)
	}
	claim("a", ClaimDone)
	if n, err := s.DebatesUsed(ctx, "deb"); err != nil || n != 2 {
		t.Fatalf("debates used %d %v, want 2", n, err)
	}
	// The first transcript stored wins.
	got, err := s.SaveTranscript(ctx, "deb", "a", []byte(`{"second":1}`), 0)
	if err != nil || string(got) != `{"first":1}` {
		t.Fatalf("second save returned %s %v", got, err)
	}
}

func TestTranscriptsBounded(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := s.SaveTranscript(ctx, "bound", id, []byte(`"`+id+`"`), 3); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := s.Transcripts(ctx, "bound")
	if err != nil || !slices.Equal(ids, []string{"b", "c", "d"}) {
		t.Fatalf("transcripts %v %v", ids, err)
	}
	if _, err := s.Transcript(ctx, "bound", "a"); !errors.Is(err, ErrNoTranscript) {
		t.Fatalf("dropped transcript: %v", err)
	}
	if doc, err := s.Transcript(ctx, "bound", "d"); err != nil || string(doc) != `"d"` {
		t.Fatalf("transcript d: %s %v", doc, err)
	}
}
