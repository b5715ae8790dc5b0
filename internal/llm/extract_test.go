package llm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
		{file: "malformed_second.txt", formulas: []string{"ZnS"}, raw: 2}, // the comma is mended; the second lacks c
		{file: "malformed_brackets.txt", formulas: []string{"ZnS"}, raw: 1, malformed: true},
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
				if cand, _, _, err := decodeCandidate(raw); err == nil {
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

func TestRepairJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`[1,2,]`, `[1,2]`},
		{`{"a":1 , }`, `{"a":1  }`},
		{`{"a":",]"}`, `{"a":",]"}`},
		{`{"a":"\",]",}`, `{"a":"\",]"}`},
		{`{'a': 'it\'s', 'b': True}`, `{"a": "it's", "b": true}`},
		{`{a: 1, b: None}`, `{"a": 1, "b": null}`},
		{"{\"a\": 1, // one\n \"b\": 2 /* two */}", "{\"a\": 1, \n \"b\": 2 }"},
		{`{"x": [0, 1/2, NaN, .5]}`, `{"x": [0, "1/2", "NaN", ".5"]}`},
		{`[{"a":1} {"a":2}]`, `[{"a":1}, {"a":2}]`},
		{`[1,,2]`, `[1,2]`},
		{`{"a" 1}`, `{"a": 1}`},
		{`{"a": 1} {"b": 2}`, `{"a": 1} {"b": 2}`},
		{`{"lattice\_parameters": 'x\_y', "a": "\n"}`, `{"lattice_parameters": "x_y", "a": "\n"}`},
		{"{\"r\": \"the \"best\" cell\nof all\", \"s\": [\"Sr\" \"O\"]}", `{"r": "the \"best\" cell\nof all", "s": ["Sr", "O"]}`},
		{`{“a”: “b”}`, `{"a": "b"}`},
		{`{"a": 1} trailing {prose`, `{"a": 1} trailing {prose`},
	}
	for _, c := range cases {
		got, _, _ := repairJSON(c.in)
		if got != c.want {
			t.Errorf("repairJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzExtractCandidates(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "answers"))
	for _, e := range entries {
		f.Add(answer(f, e.Name()))
	}
	shapes, _ := os.ReadDir(filepath.Join("testdata", "shapes"))
	for _, e := range shapes {
		b, err := os.ReadFile(filepath.Join("testdata", "shapes", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		ex, err := extractCandidates(s)
		if err == nil && len(ex.Candidates) == 0 {
			t.Fatalf("no error and no candidates for %q", s)
		}
		for _, raw := range ex.Candidates {
			_, _, _, _ = decodeCandidate(raw)
		}
	})
}
