package llm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

func answer(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExtractCandidates(t *testing.T) {
	cases := []struct {
		file      string
		formulas  []string // of the candidates that parse, in order
		raw       int      // candidate values found
		truncated bool
		malformed bool
		err       error
	}{
		{file: "well_formed.json", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "fenced.md", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "prose.txt", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "think.txt", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "trailing_comma.json", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "bare_array.json", formulas: []string{"ZnS", "GaN"}, raw: 2},
		{file: "single.json", formulas: []string{"ZnS"}, raw: 1},
		{file: "other_key.json", formulas: []string{"ZnS"}, raw: 1},
		{file: "truncated.txt", formulas: []string{"ZnS"}, raw: 1, truncated: true},
		{file: "malformed_second.txt", formulas: []string{"ZnS"}, raw: 1, malformed: true},
		{file: "wrong_lengths.json", formulas: []string{"ZnS"}, raw: 2},
		{file: "unknown_element.json", formulas: []string{"ZnS"}, raw: 2},
		{file: "no_json.txt", err: ErrNoJSON},
		{file: "empty.txt", err: ErrEmptyAnswer},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			ex, err := extractCandidates(answer(t, c.file))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ex.Candidates) != c.raw || ex.Truncated != c.truncated || (ex.Malformed != "") != c.malformed {
				t.Fatalf("got %d candidates, truncated %v, malformed %q; want %d, %v, %v",
					len(ex.Candidates), ex.Truncated, ex.Malformed, c.raw, c.truncated, c.malformed)
			}
			var got []string
			for _, raw := range ex.Candidates {
				if cand, _, err := crystal.ParseCandidateJSON(raw); err == nil {
					got = append(got, cand.Formula)
				}
			}
			if len(got) != len(c.formulas) {
				t.Fatalf("parsed %v, want %v", got, c.formulas)
			}
			for i := range got {
				if got[i] != c.formulas[i] {
					t.Fatalf("parsed %v, want %v", got, c.formulas)
				}
			}
		})
	}
}

func TestExtractCutBeforeFirstCandidate(t *testing.T) {
	_, err := extractCandidates(`{"candidates":[{"formula":"ZnS","lattice":{"a":3.8`)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
}

func TestDropTrailingCommas(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[1,2,]`, `[1,2]`},
		{`{"a":1 , }`, `{"a":1  }`},
		{`{"a":",]"}`, `{"a":",]"}`},
		{`{"a":"\",]",}`, `{"a":"\",]"}`},
	}
	for _, c := range cases {
		if got, _ := dropTrailingCommas(c.in); got != c.want {
			t.Errorf("dropTrailingCommas(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzExtractCandidates(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "answers"))
	for _, e := range entries {
		f.Add(answer(f, e.Name()))
	}
	f.Fuzz(func(t *testing.T, s string) {
		ex, err := extractCandidates(s)
		if err == nil && len(ex.Candidates) == 0 {
			t.Fatalf("no error and no candidates for %q", s)
		}
		for _, raw := range ex.Candidates {
			_, _, _ = crystal.ParseCandidateJSON(raw)
		}
	})
}
