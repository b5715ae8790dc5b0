package llm

import "testing"

func TestEstimateTokens(t *testing.T) {
	cases := []struct {
		text string
		want int
		why  string
	}{
		{"", 0, "nothing"},
		{"Hello, world!", 4, "Hello | , | ␣world | ! (as cl100k)"},
		{"1234567", 3, "123 | 456 | 7 (as cl100k)"},
		{"-1.2345", 5, "- | 1 | . | 234 | 5 (as cl100k)"},
		{"The answer is 42.", 6, "The | ␣answer | ␣is | ␣ | 42 | . (as cl100k)"},
		{"line one\nline two\n", 6, "line | ␣one | \\n | line | ␣two | \\n (as cl100k)"},
		{"Band gap ≥ 2.5 eV", 8, "Band | ␣gap | ≥ | ␣ | 2 | . | 5 | ␣eV"},
		{"    indented", 2, "an indentation, then a word"},
		{"crystallographically", 3, "20 letters: 1 + ⌊19/8⌋"},
		{"Åström", 1, "letters of any script"},
		{"a\u0301", 1, "a combining mark joins its letter"},
		{"✓✗", 2, "other symbols count one each"},
		{"\n\n\n", 1, "one newline run"},
		{"::::", 2, "ASCII punctuation pairs: ⌈4/2⌉"},
		{"tab\tsep", 2, "one whitespace before a word joins it"},
		{"Mg2SiO4", 4, "Mg | 2 | SiO | 4"},
		{`{"a":[0.5,1]}`, 10, `{" | a | ": | [ | 0 | . | 5 | , | 1 | ]}: punctuation runs of 2, 3, 1, 1, 2`},
	}
	for _, c := range cases {
		if got := EstimateTokens(c.text); got != c.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d (%s)", c.text, got, c.want, c.why)
		}
	}
}

func TestEstimateChatAndCalibration(t *testing.T) {
	if got, want := EstimateChat("Hello, world!", "1234567"), 4+3+2*messageOverhead+replyOverhead; got != want {
		t.Fatalf("EstimateChat = %d, want %d", got, want)
	}
	var c calibration
	if got := c.scale("m", 100); got != 100 {
		t.Fatalf("uncalibrated scale = %d, want 100", got)
	}
	c.observe("m", 100, 150) // first observation is taken as is
	if got := c.scale("m", 100); got != 150 {
		t.Fatalf("after one observation scale = %d, want 150", got)
	}
	c.observe("m", 100, 100) // 0.7·1.5 + 0.3·1.0 = 1.35
	if got := c.scale("m", 100); got != 135 {
		t.Fatalf("after two observations scale = %d, want 135", got)
	}
	c.observe("other", 100, 10000) // clamped to 2.5
	if got := c.scale("other", 100); got != 250 {
		t.Fatalf("clamped scale = %d, want 250", got)
	}
	c.observe("m", 0, 100) // ignored
	if got := c.scale("m", 100); got != 135 {
		t.Fatalf("an empty estimate changed the calibration: %d", got)
	}
}
