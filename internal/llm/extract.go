package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
)

// ErrNoJSON is the answer had no JSON value holding candidates.
var ErrNoJSON = errors.New("no JSON with candidates in the answer")

// maxStarts bounds the positions tried as the start of the answer's JSON.
const maxStarts = 64

var (
	thinkBlock = regexp.MustCompile(`(?is)<(think|thinking|reasoning)>.*?</(think|thinking|reasoning)>`)
	fence      = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \t]*\r?\n(.*?)```")
)

// extraction is what the answer's JSON held.
type extraction struct {
	// Candidates are the raw candidate values, in order.
	Candidates []json.RawMessage
	// Truncated: the JSON was cut off (the answer hit its token limit);
	// Candidates are the complete ones before the cut.
	Truncated bool
	// Malformed is the JSON syntax error that ended the answer's value
	// early ("" when none); Candidates are the complete ones before it.
	Malformed string
}

// extractCandidates finds the candidates in an answer, whatever the server
// did with the response format: a JSON object {"candidates": [...]} (the
// schema), a bare array of candidates or a single candidate, inside
// markdown fences or with prose around, after a model's <think> block, with
// trailing commas, or cut off by the token limit (the complete candidates
// before the cut are kept). Fenced blocks are tried first, then the text;
// in each, every '{' or '[' in turn is tried as the start of the value
// (the first may belong to prose), and the first value holding candidates
// is the answer.
func extractCandidates(answer string) (extraction, error) {
	text := thinkBlock.ReplaceAllString(answer, "")
	var regions []string
	for _, m := range fence.FindAllStringSubmatch(text, -1) {
		regions = append(regions, m[1])
	}
	regions = append(regions, text)
	cut := false
	for _, region := range regions {
		starts := 0
		for i := 0; i < len(region) && starts < maxStarts; i++ {
			if region[i] != '{' && region[i] != '[' {
				continue
			}
			starts++
			// The first value with candidates is the answer; values inside
			// it (a candidate of a cut-off list) must not stand for it.
			ex := decodeAt(region[i:])
			if len(ex.Candidates) > 0 {
				return ex, nil
			}
			cut = cut || ex.Truncated
		}
	}
	switch {
	case cut:
		return extraction{Truncated: true}, ErrTruncated
	case strings.TrimSpace(text) == "":
		return extraction{}, ErrEmptyAnswer
	}
	return extraction{}, ErrNoJSON
}

// Further extraction errors.
var (
	ErrTruncated   = errors.New("the answer was cut off before its first complete candidate")
	ErrEmptyAnswer = errors.New("empty answer")
)

// decodeAt decodes the JSON value at the start of s and returns the
// candidates it holds; a value cut off before its end, or broken by a
// syntax error, yields the complete candidates before that point.
func decodeAt(s string) extraction {
	var raw json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	err := dec.Decode(&raw)
	if err == nil {
		return extraction{Candidates: candidatesOf(raw)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return extraction{Candidates: salvage(s), Truncated: true}
	}
	if fixed, ok := dropTrailingCommas(s); ok {
		dec := json.NewDecoder(strings.NewReader(fixed))
		if dec.Decode(&raw) == nil {
			return extraction{Candidates: candidatesOf(raw)}
		}
	}
	return extraction{Candidates: salvage(s), Malformed: err.Error()}
}

// candidatesOf returns the candidates a complete JSON value holds: the
// elements of its "candidates" array, of any array of objects it holds
// under another name, of itself when it is an array, or itself when it is
// one candidate (it has a formula or species).
func candidatesOf(raw json.RawMessage) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return nil
		}
		return elems
	case '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		if v, ok := obj["candidates"]; ok {
			if c := candidatesOf(v); c != nil {
				return c
			}
		}
		_, f := obj["formula"]
		_, sp := obj["species"]
		if f || sp {
			return []json.RawMessage{raw}
		}
		for _, v := range obj {
			v = bytes.TrimSpace(v)
			if len(v) > 0 && v[0] == '[' {
				var elems []json.RawMessage
				if json.Unmarshal(v, &elems) == nil && len(elems) > 0 && bytes.HasPrefix(bytes.TrimSpace(elems[0]), []byte("{")) {
					return elems
				}
			}
		}
	}
	return nil
}

// salvage reads a JSON value cut off before its end and returns the
// complete candidates before the cut: the elements of a top-level array,
// or of the top-level object's "candidates" array.
func salvage(s string) []json.RawMessage {
	dec := json.NewDecoder(strings.NewReader(s))
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	if tok == json.Delim('{') {
		for {
			key, err := dec.Token()
			if err != nil {
				return nil
			}
			k, ok := key.(string)
			if !ok {
				return nil
			}
			if k == "candidates" {
				break
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		if tok, err = dec.Token(); err != nil {
			return nil
		}
	}
	if tok != json.Delim('[') {
		return nil
	}
	var out []json.RawMessage
	for dec.More() {
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			break
		}
		out = append(out, raw)
	}
	return out
}

// dropTrailingCommas removes commas that directly precede '}' or ']'
// (outside strings), a common slip of models writing JSON by hand. It
// reports whether it removed any.
func dropTrailingCommas(s string) (string, bool) {
	var b strings.Builder
	inString, escaped, changed := false, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inString {
			b.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\r' || s[j] == '\t') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				changed = true
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String(), changed
}
