package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ErrNoJSON is the answer had no JSON value holding candidates.
var ErrNoJSON = errors.New("no JSON with candidates in the answer")

// Further extraction errors.
var (
	ErrTruncated   = errors.New("the answer was cut off before its first complete candidate")
	ErrEmptyAnswer = errors.New("empty answer")
)

// maxStarts bounds the positions tried as the start of a JSON value in one
// region of the answer.
const maxStarts = 256

// maxDepth bounds how deep in the answer's JSON candidates are looked for
// ({"response": {"result": {"candidates": […]}}}).
const maxDepth = 4

var (
	thinkBlock = regexp.MustCompile(`(?is)<(think|thinking|reasoning|reflection)>.*?</(think|thinking|reasoning|reflection)>`)
	thinkClose = regexp.MustCompile(`(?is)</(think|thinking|reasoning|reflection)>`)
	fence      = regexp.MustCompile("(?s)```[a-zA-Z0-9_+-]*[ \t]*\r?\n(.*?)```")
	openFence  = regexp.MustCompile("```[a-zA-Z0-9_+-]*[ \t]*\r?\n")
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
	// Repaired: the JSON had to be repaired to be read (comments, quotes,
	// commas, bare words; see repairJSON).
	Repaired bool
}

// extractCandidates finds the candidates in an answer, whatever the server
// did with the response format and however the model wrote it: a JSON
// object {"candidates": [...]} (the schema), the candidates under another
// key or nested deeper, a bare array of candidates, a single candidate, or
// several JSON values one after the other (one per fenced block, JSON
// Lines); inside markdown fences or with prose around; after a model's
// reasoning (<think>…</think>, or only its closing tag); with the slips
// repairJSON mends; or cut off by the token limit (the complete candidates
// before the cut are kept). Fenced blocks are read first, and the text
// around them only when they hold no candidate; in each, every '{' or '['
// in turn is tried as the start of a value (the first may belong to
// prose), and every value holding candidates counts.
func extractCandidates(answer string) (extraction, error) {
	text := thinkBlock.ReplaceAllString(answer, "")
	if loc := thinkClose.FindAllStringIndex(text, -1); len(loc) > 0 {
		// Reasoning whose opening tag the server left out.
		text = text[loc[len(loc)-1][1]:]
	}
	var fenced []string
	last := 0
	for _, m := range fence.FindAllStringSubmatchIndex(text, -1) {
		fenced = append(fenced, text[m[2]:m[3]])
		last = m[1]
	}
	if m := openFence.FindStringIndex(text[last:]); m != nil {
		fenced = append(fenced, text[last+m[1]:]) // a block the answer's end cut off
	}
	var out extraction
	cut := false
	for _, regions := range [][]string{fenced, {text}} {
		for _, region := range regions {
			ex, truncated := scanRegion(region)
			out.Candidates = append(out.Candidates, ex.Candidates...)
			out.Truncated = out.Truncated || ex.Truncated
			out.Repaired = out.Repaired || ex.Repaired
			if out.Malformed == "" {
				out.Malformed = ex.Malformed
			}
			cut = cut || truncated
		}
		if len(out.Candidates) > 0 {
			return out, nil
		}
		out = extraction{}
	}
	switch {
	case cut:
		return extraction{Truncated: true}, ErrTruncated
	case strings.TrimSpace(text) == "":
		return extraction{}, ErrEmptyAnswer
	}
	return extraction{}, ErrNoJSON
}

// scanRegion reads the JSON values of one region of the answer in turn and
// gathers their candidates; truncated reports a value cut off before any
// candidate was complete.
func scanRegion(region string) (out extraction, truncated bool) {
	starts := 0
	for i := 0; i < len(region) && starts < maxStarts; {
		j := strings.IndexAny(region[i:], "{[")
		if j < 0 {
			break
		}
		i += j
		starts++
		ex, end := decodeAt(region[i:])
		if len(ex.Candidates) == 0 {
			truncated = truncated || ex.Truncated
			i++
			continue
		}
		out.Candidates = append(out.Candidates, ex.Candidates...)
		out.Truncated = out.Truncated || ex.Truncated
		out.Repaired = out.Repaired || ex.Repaired
		if out.Malformed == "" {
			out.Malformed = ex.Malformed
		}
		if ex.Truncated || ex.Malformed != "" || end <= 0 {
			break // the rest of the region is the broken value's
		}
		i += end
	}
	return out, truncated
}

// decodeAt decodes the JSON value at the start of s and returns the
// candidates it holds and the length of s it took; a value cut off before
// its end, or broken beyond repair, yields the complete candidates before
// that point.
func decodeAt(s string) (extraction, int) {
	raw, n, err := firstValue(s)
	if err == nil {
		return extraction{Candidates: candidatesOf(raw, 0)}, n
	}
	fixed, end, changed := repairJSON(s)
	if changed {
		raw, _, err2 := firstValue(fixed)
		if err2 == nil {
			return extraction{Candidates: candidatesOf(raw, 0), Repaired: true}, end
		}
		s, err = fixed, err2
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return extraction{Candidates: salvage(s), Truncated: true, Repaired: changed}, len(s)
	}
	return extraction{Candidates: salvage(s), Malformed: err.Error(), Repaired: changed}, -1
}

// firstValue decodes the JSON value at the start of s and returns it with
// the number of bytes it took.
func firstValue(s string) (json.RawMessage, int, error) {
	var raw json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&raw); err != nil {
		return nil, 0, err
	}
	return raw, int(dec.InputOffset()), nil
}

// candidatesOf returns the candidates a complete JSON value holds: itself
// when it is a candidate (looksLikeCandidate); the objects of an array
// holding one; or, in an object that is no candidate, the candidates of
// its members in order, down to maxDepth ({"candidates": […]},
// {"result": {"materials": […]}}, {"candidate_1": {…}, "candidate_2":
// {…}}). A kv named by a formula whose value is a candidate without
// one ({"SrTiO3": {"lattice": …}}) gets the name as its formula.
func candidatesOf(raw json.RawMessage, depth int) []json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > maxDepth {
		return nil
	}
	switch raw[0] {
	case '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil {
			return nil
		}
		var objects []json.RawMessage
		candidate := false
		for i, e := range elems {
			e = jsonInString(bytes.TrimSpace(e))
			elems[i] = e
			if len(e) > 0 && e[0] == '{' {
				objects = append(objects, e)
				if ms, ok := members(e); ok && looksLikeCandidate(ms) {
					candidate = true
				}
			}
		}
		if candidate {
			return objects
		}
		var out []json.RawMessage
		for _, e := range elems {
			out = append(out, candidatesOf(e, depth+1)...)
		}
		return out
	case '{':
		ms, ok := members(raw)
		if !ok {
			return nil
		}
		if looksLikeCandidate(ms) {
			return []json.RawMessage{raw}
		}
		var out []json.RawMessage
		for _, m := range ms {
			v := jsonInString(bytes.TrimSpace(m.val))
			if len(v) == 0 || (v[0] != '{' && v[0] != '[') {
				continue
			}
			if v[0] == '{' {
				if inner, ok := members(v); ok && looksLikeCandidate(inner) && !hasFormula(inner) {
					if _, err := normalFormula(m.key); err == nil {
						out = append(out, withFormula(v, m.key))
						continue
					}
				}
			}
			out = append(out, candidatesOf(v, depth+1)...)
		}
		return out
	}
	return nil
}

// jsonInString returns the JSON object or array a string value holds
// (JSON written as a string: "candidates": "[{\"formula\": …}]"), or v
// itself.
func jsonInString(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || v[0] != '"' {
		return v
	}
	var inner string
	if json.Unmarshal(v, &inner) == nil {
		if t := strings.TrimSpace(inner); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
			return json.RawMessage(t)
		}
	}
	return v
}

// withFormula returns the object raw with a "formula" kv added first.
func withFormula(raw json.RawMessage, formula string) json.RawMessage {
	rest := bytes.TrimSpace(raw[1:])
	sep := ","
	if len(rest) > 0 && rest[0] == '}' {
		sep = ""
	}
	return json.RawMessage(`{"formula":` + strconv.Quote(formula) + sep + string(rest))
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
			if normKey(k) == "candidates" {
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
