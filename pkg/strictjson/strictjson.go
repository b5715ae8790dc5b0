// Package strictjson decodes JSON documents people write (campaign specs,
// task files) strictly: an unknown key is an error that names it and, when
// one is close, the valid key it was probably meant to be
// (`unknown key "exlude" (did you mean "exclude"?)`).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// ErrUnknownKey is wrapped by the error of a document with a key its type
// does not have.
var ErrUnknownKey = errors.New("unknown key")

// Decode decodes one JSON value from data into v, rejecting unknown keys
// and trailing data.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return explain(err, reflect.TypeOf(v))
	}
	if dec.More() {
		return errors.New("trailing data after the document")
	}
	return nil
}

// explain turns encoding/json's unknown-field error into one with the
// closest key of t (any struct within it).
func explain(err error, t reflect.Type) error {
	const prefix = `json: unknown field "`
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, `"`) {
		return err
	}
	key := strings.TrimSuffix(strings.TrimPrefix(msg, prefix), `"`)
	if s := Closest(key, Keys(t)); s != "" {
		return fmt.Errorf("%w %q (did you mean %q?)", ErrUnknownKey, key, s)
	}
	return fmt.Errorf("%w %q", ErrUnknownKey, key)
}

// Keys returns the JSON keys of the structs that t is or holds (through
// pointers, slices, arrays, maps and struct fields), sorted.
func Keys(t reflect.Type) []string {
	set := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, _, _ := strings.Cut(tag, ",")
			switch {
			case name == "-":
				continue
			case f.Anonymous && name == "":
				walk(f.Type)
				continue
			case !f.IsExported():
				continue
			case name == "":
				name = f.Name
			}
			set[name] = true
			walk(f.Type)
		}
	}
	walk(t)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Closest returns the candidate nearest to key by edit distance
// (case-insensitive), or "" when none is within a third of key's length
// (at least one edit): a suggestion far from what was typed misleads.
func Closest(key string, candidates []string) string {
	best, bestD := "", -1
	limit := max(1, (len(key)+1)/3)
	for _, c := range candidates {
		d := distance(strings.ToLower(key), strings.ToLower(c))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the optimal string alignment distance: Levenshtein's edits
// and the transposition of two adjacent characters ("bugdet").
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
