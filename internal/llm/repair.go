package llm

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// jsonNumber matches a JSON number token.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// repairJSON rewrites the slips models make when they write JSON by hand,
// in the JSON value at the start of s: comments (// …, /* … */, # …),
// trailing and doubled commas, missing commas between values, strings
// and keys in single or typographic quotes, unquoted keys, and bare words
// (True, False and None become true, false and null; NaN, Infinity, 1/2,
// .5 and any other bare word become strings, so that the one value they
// stand in is rejected or read with a reason, not the whole answer).
// Rewriting stops where the value ends; the rest is kept as it is. end is
// the offset in s just past the value (len(s) when it does not end), and
// changed reports whether anything was rewritten.
func repairJSON(s string) (out string, end int, changed bool) {
	b := make([]byte, 0, len(s)+16)
	// stack holds the open containers; state what the next token may be.
	var stack []byte
	const (
		wantValue  = iota // a value (top level, after ':' or ',' in an array)
		wantKey           // a key or '}' (after '{' or ',' in an object)
		wantColon         // ':' after a key
		afterValue        // ',' or a closer
	)
	state := wantValue
	pendingComma := false
	commaAt := 0  // where the comma held back was written
	valueEnd := 0 // where the last value or key ended
	started := false
	// beginValue writes what must precede a value or a key: the comma
	// held back or one that is missing.
	insert := func(at int, c byte) {
		b = append(b, 0)
		copy(b[at+1:], b[at:])
		b[at] = c
		changed = true
	}
	beginValue := func() {
		if state == wantColon {
			insert(valueEnd, ':') // a key without its colon
			state = wantValue
		}
		if len(stack) > 0 && state == afterValue && !pendingComma {
			insert(valueEnd, ',') // a missing comma
		}
		pendingComma = false
	}
	// endValue moves on after a complete value or key.
	endValue := func(key bool) {
		valueEnd = len(b)
		if key {
			state = wantColon
		} else {
			state = afterValue
		}
	}
	i := 0
	for i < len(s) {
		if started && len(stack) == 0 && state == afterValue {
			break
		}
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b = append(b, c)
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '/', c == '#':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			i += j
			changed = true
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				i = len(s)
			} else {
				i += j + 4
			}
			changed = true
		case c == '{' || c == '[':
			if state == wantKey && c == '{' {
				state = wantValue // an object where a key should be: keep it as a value
			}
			beginValue()
			started = true
			b = append(b, c)
			stack = append(stack, c)
			if c == '{' {
				state = wantKey
			} else {
				state = wantValue
			}
			i++
		case c == '}' || c == ']':
			if pendingComma {
				b = append(b[:commaAt], b[commaAt+1:]...) // a trailing comma
				changed = true
				pendingComma = false
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			b = append(b, c)
			endValue(false)
			i++
		case c == ':':
			b = append(b, c)
			state = wantValue
			i++
		case c == ',':
			if pendingComma || state == wantKey || state == wantValue {
				changed = true // doubled, or before the first element
			} else {
				pendingComma = true
				commaAt = len(b)
				b = append(b, c)
			}
			if len(stack) > 0 && stack[len(stack)-1] == '{' {
				state = wantKey
			} else {
				state = wantValue
			}
			i++
		case c == '"':
			if state == wantColon {
				beginValue()
			}
			key := state == wantKey
			beginValue()
			started = true
			var fixed bool
			b, i, fixed = appendRepairedString(b, s, i)
			changed = changed || fixed
			endValue(key)
		case c == '\'' || strings.HasPrefix(s[i:], "“") || strings.HasPrefix(s[i:], "”") || strings.HasPrefix(s[i:], "‘"):
			if state == wantColon {
				beginValue()
			}
			key := state == wantKey
			beginValue()
			started = true
			text, j := quotedString(s, i)
			b = appendJSONString(b, text)
			i = j
			changed = true
			endValue(key)
		default:
			if state == wantColon {
				beginValue()
			}
			key := state == wantKey
			beginValue()
			started = true
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n{}[],:\"'", rune(s[j])) &&
				!(s[j] == '/' && j+1 < len(s) && (s[j+1] == '/' || s[j+1] == '*')) {
				_, n := utf8.DecodeRuneInString(s[j:])
				j += n
			}
			if j == i { // a lone byte that starts nothing: keep it
				j = i + 1
			}
			tok := s[i:j]
			i = j
			switch {
			case key:
				b = appendJSONString(b, tok)
				changed = true
			case jsonNumber.MatchString(tok), tok == "true", tok == "false", tok == "null":
				b = append(b, tok...)
			case tok == "True" || tok == "False" || tok == "None":
				b = append(b, map[string]string{"True": "true", "False": "false", "None": "null"}[tok]...)
				changed = true
			default:
				b = appendJSONString(b, tok)
				changed = true
			}
			endValue(key)
		}
	}
	end = i
	b = append(b, s[i:]...)
	return string(b), end, changed
}

// appendRepairedString appends the JSON string starting at s[i] (a '"')
// and returns the offset past it. Line breaks and tabs written raw are
// escaped, and a '"' inside the text is escaped when what follows it
// cannot follow a string's end (a word: "the "perovskite" cell"; what
// can is a separator, a bracket, a quote, a number or a line end); fixed
// reports either.
func appendRepairedString(b []byte, s string, i int) (out []byte, end int, fixed bool) {
	b = append(b, '"')
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		switch {
		case c == '\\' && j+1 < len(s) && strings.IndexByte(`"\\/bfnrtu`, s[j+1]) >= 0:
			b = append(b, c, s[j+1])
			j++
		case c == '\\' && j+1 < len(s):
			// An escape JSON does not have: Markdown's "lattice\_parameters".
			b, fixed = append(b, s[j+1]), true
			j++
		case c == '\n':
			b, fixed = append(b, `\n`...), true
		case c == '\r':
			b, fixed = append(b, `\r`...), true
		case c == '\t':
			b, fixed = append(b, `\t`...), true
		case c == '"':
			k := j + 1
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k >= len(s) || strings.IndexByte(",}]:\"{[\r\n-0123456789", s[k]) >= 0 {
				return append(b, '"'), j + 1, fixed
			}
			b, fixed = append(b, `\"`...), true
		default:
			b = append(b, c)
		}
	}
	return b, len(s), fixed
}

// quotedString reads a string in single or typographic quotes starting at
// s[i] and returns its text (\' unescaped) and the offset past it.
func quotedString(s string, i int) (string, int) {
	open, n := utf8.DecodeRuneInString(s[i:])
	closers := "'"
	if open != '\'' {
		closers = "”“’‘"
	}
	var t strings.Builder
	for j := i + n; j < len(s); {
		r, m := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == '\\' && j+1 < len(s):
			r2, m2 := utf8.DecodeRuneInString(s[j+1:])
			if r2 == '\'' {
				t.WriteRune('\'')
			} else {
				t.WriteRune('\\')
				t.WriteRune(r2)
			}
			j += 1 + m2
			continue
		case strings.ContainsRune(closers, r):
			return t.String(), j + m
		}
		t.WriteRune(r)
		j += m
	}
	return t.String(), len(s)
}

// appendJSONString appends text as a JSON string; JSON's backslash
// escapes already in it (\n, \") are kept, others (\_) become the
// character.
func appendJSONString(b []byte, text string) []byte {
	b = append(b, '"')
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text) && strings.IndexByte(`"\\/bfnrtu`, text[i+1]) >= 0:
			b = append(b, c, text[i+1])
			i++
		case c == '\\' && i+1 < len(text): // not a JSON escape: the character itself
			b = append(b, text[i+1])
			i++
		case c == '\\':
			b = append(b, `\\`...)
		case c == '"':
			b = append(b, `\"`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
