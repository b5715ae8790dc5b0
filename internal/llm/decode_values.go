package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// normKey normalises a key for matching: camelCase split, lower case,
// Greek α, β, γ spelt out, bracketed units dropped ("a (Å)"), runs of
// other characters turned into '_' and unit suffixes dropped ("alpha_deg",
// "a_angstrom"): "Lattice Parameters" and "latticeParameters" are both
// "lattice_parameters", CIF's "_cell_length_a" is "cell_length_a".
func normKey(k string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range strings.TrimSpace(k) {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			b.WriteByte('_')
		}
		b.WriteRune(r)
		prev = r
	}
	s := strings.ToLower(b.String())
	s = strings.NewReplacer("α", "alpha", "β", "beta", "γ", "gamma").Replace(s)
	s = bracketed.ReplaceAllString(s, "")
	b.Reset()
	under := false
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	s = strings.Trim(b.String(), "_")
	for _, suf := range []string{"_in_angstroms", "_in_angstrom", "_angstroms", "_angstrom", "_ang", "_in_degrees", "_degrees", "_degree", "_deg"} {
		if t, ok := strings.CutSuffix(s, suf); ok && t != "" {
			return t
		}
	}
	return s
}

var bracketed = regexp.MustCompile(`\s*[(\[][^)\]]*[)\]]`)

// quantity is what a number measures, for its unit.
type quantity int

const (
	plain  quantity = iota // a coordinate, a count
	length                 // Å
	angle                  // degrees
)

var numberText = regexp.MustCompile(`^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?\s*(.*)$`)

// numberError is a value that should be a number and is not one.
type numberError string

func (e numberError) Error() string { return string(e) }

func numberErr(format string, args ...any) error { return numberError(fmt.Sprintf(format, args...)) }

// parseNumber reads a number as models write one: a JSON number, or a
// string holding one (numberString). asString reports the latter.
func parseNumber(raw json.RawMessage, q quantity) (x float64, asString bool, err error) {
	v := bytes.TrimSpace(raw)
	if json.Unmarshal(v, &x) == nil {
		return x, false, nil
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return 0, false, numberErr("want a number, got %s", kindOf(raw))
	}
	x, err = numberString(s, q)
	return x, true, err
}

// numberString reads a number written as text: "4.135", "4,135", "−0.25",
// "~4.1", "1/3", with a unit for lengths ("4.1 Å", "4.1 A", "0.41 nm",
// "410 pm": in Å) and angles ("90°", "90 deg", "1.5708 rad": in degrees).
// NaN and infinities are errors.
func numberString(s string, q quantity) (float64, error) {
	t := strings.NewReplacer("−", "-", "–", "-", "—", "-", "\u00a0", " ", "\u202f", " ").Replace(strings.TrimSpace(s))
	t = strings.TrimLeft(t, "~≈≃∼ ")
	t = strings.TrimSpace(bracketed.ReplaceAllString(t, "")) // "5.64 (conventional)"
	if i := strings.Index(t, "±"); i > 0 {
		t = strings.TrimSpace(t[:i]) // an uncertainty
	} else if i := strings.Index(t, "+/-"); i > 0 {
		t = strings.TrimSpace(t[:i])
	}
	switch strings.ToLower(t) {
	case "nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity":
		return 0, numberErr("%q is not a finite number", s)
	}
	if strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1) // a decimal comma
	}
	m := numberText.FindStringSubmatch(t)
	if m == nil {
		return 0, numberErr("%q is not a number", s)
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, numberErr("%q is not a number", s)
	}
	if m[2] != "" {
		d, err := strconv.ParseFloat(m[2], 64)
		if err != nil || d == 0 {
			return 0, numberErr("%q is not a number", s)
		}
		x /= d
	}
	unit := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(m[3])), ".")
	switch unit {
	case "":
	case "å", "a", "ang", "angs", "angstrom", "angstroms", "ångström", "ångstrom", "angström":
		if q == angle {
			return 0, numberErr("%q: an angle in degrees, not a length", s)
		}
	case "nm":
		if q != length {
			return 0, numberErr("%q: unit nm where none belongs", s)
		}
		x *= 10
	case "pm":
		if q != length {
			return 0, numberErr("%q: unit pm where none belongs", s)
		}
		x /= 100
	case "°", "º", "˚", "deg", "degs", "degree", "degrees":
		if q == length {
			return 0, numberErr("%q: a length in Å, not an angle", s)
		}
	case "rad", "rads", "radian", "radians":
		if q != angle {
			return 0, numberErr("%q: unit rad where none belongs", s)
		}
		x *= 180 / math.Pi
	default:
		return 0, numberErr("%q is not a number (unit %q not understood)", s, m[3])
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, numberErr("%q is not a finite number", s)
	}
	return x, nil
}

// splitNumbers reads the numbers of a text such as "0.5 0.5 0",
// "(0.5, 0.5, 0)" or "[1/2; 1/2; 0]".
func splitNumbers(s string, q quantity) ([]float64, error) {
	t := strings.Trim(strings.TrimSpace(s), "()[]{}<>")
	fields := strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ';' || unicode.IsSpace(r) })
	out := make([]float64, 0, len(fields))
	for _, f := range fields {
		f = strings.Trim(f, "()[]{}")
		if f == "" {
			continue
		}
		x, err := numberString(f, q)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// parseVec3 reads a coordinate triple: [x, y, z] (numbers or strings),
// "x y z", or {"x": …, "y": …, "z": …}.
func parseVec3(raw json.RawMessage, rd *reading) (crystal.Vec3, error) {
	v := bytes.TrimSpace(raw)
	var out crystal.Vec3
	if len(v) == 0 {
		return out, errors.New("want [x, y, z], got nothing")
	}
	switch v[0] {
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return out, fmt.Errorf("want [x, y, z]: %v", err)
		}
		if len(elems) == 1 { // [[x, y, z]]
			return parseVec3(elems[0], rd)
		}
		if len(elems) != 3 {
			return out, fmt.Errorf("want three numbers [x, y, z], got %d", len(elems))
		}
		for i, e := range elems {
			x, str, err := parseNumber(e, plain)
			if err != nil {
				return out, err
			}
			if str {
				rd.adapt("number_as_string")
			}
			out[i] = x
		}
		return out, nil
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		xs, err := splitNumbers(s, plain)
		if err != nil {
			return out, err
		}
		if len(xs) != 3 {
			return out, fmt.Errorf("want three numbers x y z, got %q", s)
		}
		rd.adapt("coords_as_string")
		return crystal.Vec3{xs[0], xs[1], xs[2]}, nil
	case '{':
		ms, _ := members(v)
		o := newObject(ms)
		for i, names := range [][]string{{"x", "fract_x", "frac_x", "fx", "u"}, {"y", "fract_y", "frac_y", "fy", "v"}, {"z", "fract_z", "frac_z", "fz", "w"}} {
			m, ok := o.take(names...)
			if !ok {
				return out, fmt.Errorf("want {\"x\": …, \"y\": …, \"z\": …}, no %s", names[0])
			}
			x, _, err := parseNumber(m.val, plain)
			if err != nil {
				return out, fmt.Errorf("%s: %w", m.key, err)
			}
			out[i] = x
		}
		rd.adapt("coords_as_object")
		return out, nil
	}
	return out, fmt.Errorf("want [x, y, z], got %s", kindOf(raw))
}

// isVecLike reports whether raw may be a coordinate triple or a matrix
// row (a list or a string of numbers).
func isVecLike(raw json.RawMessage) bool {
	v := bytes.TrimSpace(raw)
	return len(v) > 0 && (v[0] == '[' || v[0] == '"' || v[0] == '{')
}

// isNumberLike reports whether raw is a number or a string starting with
// one.
func isNumberLike(raw json.RawMessage) bool {
	_, _, err := parseNumber(raw, plain)
	if err == nil {
		return true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		t := strings.TrimLeft(strings.TrimSpace(s), "~≈−-+")
		return t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '.')
	}
	return false
}

// Subscript and superscript digits and signs as ASCII.
var scripts = strings.NewReplacer(
	"₀", "0", "₁", "1", "₂", "2", "₃", "3", "₄", "4", "₅", "5", "₆", "6", "₇", "7", "₈", "8", "₉", "9", "₊", "+", "₋", "-",
	"⁰", "0", "¹", "1", "²", "2", "³", "3", "⁴", "4", "⁵", "5", "⁶", "6", "⁷", "7", "⁸", "8", "⁹", "9", "⁺", "+", "⁻", "-",
	"․", ".", "−", "-")

// markup is LaTeX, HTML and Markdown around a formula.
var markup = strings.NewReplacer("$", "", `\mathrm`, "", `\text`, "", `\rm`, "", "{", "", "}", "", "_", "",
	"<sub>", "", "</sub>", "", "<sup>", "", "</sup>", "", "**", "", "`", "", "\u200b", "")

var (
	wordsInBrackets = regexp.MustCompile(`\s*[(\[][^)\]]*[a-z]{2,}[^)\]]*[)\]]`)
	chargeSuffix    = regexp.MustCompile(`\^?\d*[+-]+$`)
)

// normalFormula reads a formula as models write one (see the decoder's
// comment) and returns it in plain ASCII, or the error of the plain
// formula.
func normalFormula(s string) (string, error) {
	t := strings.TrimSpace(markup.Replace(scripts.Replace(s)))
	comp, err := crystal.ParseFormula(t)
	if err == nil {
		if joined := strings.Join(strings.Fields(t), ""); joined != t {
			if c2, err2 := crystal.ParseFormula(joined); err2 == nil && c2.Equal(comp, 1e-9) {
				return joined, nil
			}
		}
		return t, nil
	}
	// A word or a charge after the formula: "SrZrO3 (perovskite)",
	// "SrZrO3 - cubic", "ZnS zinc blende".
	u := strings.TrimSpace(wordsInBrackets.ReplaceAllString(t, ""))
	for _, sep := range []string{" - ", " – ", " — ", ":", ",", ";"} {
		if i := strings.Index(u, sep); i > 0 {
			u = strings.TrimSpace(u[:i])
		}
	}
	for _, v := range []string{u, firstField(u), chargeSuffix.ReplaceAllString(u, "")} {
		if v != "" && v != t {
			if _, err2 := crystal.ParseFormula(v); err2 == nil {
				return v, nil
			}
		}
	}
	return "", err
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// looksLikeName reports whether a formula field holds a name
// ("Strontium zirconate") rather than a formula: no digit, and a word of
// four lower-case letters or more.
func looksLikeName(s string) bool {
	if strings.IndexFunc(s, unicode.IsDigit) >= 0 {
		return false
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(w) >= 4 && strings.ToLower(w) == w {
			return true
		}
	}
	return false
}

// elementNames maps lower-case element names (and common variants) to
// symbols.
var elementNames = func() map[string]string {
	m := map[string]string{}
	for _, e := range crystal.Elements() {
		m[strings.ToLower(e.Name())] = e.Symbol()
	}
	for alias, sym := range map[string]string{"aluminium": "Al", "aluminum": "Al", "sulphur": "S", "sulfur": "S",
		"caesium": "Cs", "cesium": "Cs", "wolfram": "W"} {
		m[alias] = sym
	}
	return m
}()

var (
	labelSuffix   = regexp.MustCompile(`^_?(\d+)[a-z]?$`)
	chargeSuffix2 = regexp.MustCompile(`^\^?[{(]?\s*(\d*[+-]|[+-]\d*|[ivx]+)\s*[})]?$`)
)

// elementSymbol reads an element as a species or a site label may give it:
// "Sr", "sr", "SR", "Sr2+", "Sr+2", "Sr^{2+}", "Sr(II)", "Sr²⁺", "O1",
// "Strontium". count is a number after the symbol that is no charge
// ("O3", "O1"): a count or a site label, 0 when none.
func elementSymbol(token string) (sym string, count int, ok bool) {
	t := strings.TrimSpace(scripts.Replace(token))
	t = strings.Trim(t, "\"'`*.")
	i := 0
	for i < len(t) && (t[i] >= 'A' && t[i] <= 'Z' || t[i] >= 'a' && t[i] <= 'z') {
		i++
	}
	letters, rest := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if letters == "" {
		return "", 0, false
	}
	switch {
	case rest == "":
	case labelSuffix.MatchString(rest):
		count, _ = strconv.Atoi(labelSuffix.FindStringSubmatch(rest)[1])
	case chargeSuffix2.MatchString(rest):
	default:
		return "", 0, false
	}
	if len(letters) <= 2 {
		sym = strings.ToUpper(letters[:1]) + strings.ToLower(letters[1:])
		if _, err := crystal.ElementBySymbol(sym); err == nil {
			return sym, count, true
		}
		return "", 0, false
	}
	if s, ok := elementNames[strings.ToLower(letters)]; ok {
		return s, count, true
	}
	return "", 0, false
}

// systemOf reads a crystal system from a word ("cubic", "Cubic
// perovskite") or a space-group number (International Tables: 1–2
// triclinic, 3–15 monoclinic, 16–74 orthorhombic, 75–142 tetragonal,
// 143–167 trigonal, 168–194 hexagonal, 195–230 cubic), bare or in
// brackets after a symbol ("Pm-3m (221)").
func systemOf(raw json.RawMessage) string {
	var s string
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return systemOfNumber(int(n))
	}
	if json.Unmarshal(raw, &s) != nil {
		if ms, ok := members(raw); ok { // {"symbol": "Pm-3m", "number": 221}
			for _, m := range ms {
				if r := systemOf(m.val); r != "" {
					return r
				}
			}
		}
		return ""
	}
	low := strings.ToLower(s)
	for _, w := range []string{"cubic", "tetragonal", "hexagonal", "trigonal", "rhombohedral", "orthorhombic", "monoclinic", "triclinic"} {
		if strings.Contains(low, w) {
			return w
		}
	}
	if m := sgNumber.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return systemOfNumber(n)
	}
	return systemOfSymbol(s)
}

// hmGenerator is one symbol of a Hermann–Mauguin space-group symbol after
// its centring letter: a rotation or screw axis with an optional mirror
// ("-3", "6_3", "4_2/m", "63"; rotoinversions have no screw part, so
// "-43" is -4 then 3), or a mirror or glide plane letter.
var hmGenerator = regexp.MustCompile(`^(?:-[1-6]|[1-6](?:_?[1-5])?(?:/[mabcdne])?|[mabcdne])`)

// systemOfSymbol reads the crystal system from a Hermann–Mauguin symbol
// ("Pm-3m", "P 6_3/m m c", "I4/mmm", "R-3m"): cubic when its second
// symbol is a 3 or -3 axis (only cubic groups have one there), otherwise the order of its first axis tells:
// 6 hexagonal, 3 trigonal, 4 tetragonal (International Tables, Vol. A,
// §2.1.3.4). Other symbols give "".
func systemOfSymbol(s string) string {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if t == "" || !strings.ContainsRune("PIFRCAB", rune(t[0])) {
		return ""
	}
	t = t[1:]
	first := hmGenerator.FindString(t)
	if first == "" {
		return ""
	}
	second := hmGenerator.FindString(t[len(first):])
	if strings.HasPrefix(strings.TrimPrefix(second, "-"), "3") {
		return "cubic"
	}
	switch strings.TrimPrefix(first, "-")[0] {
	case '6':
		return "hexagonal"
	case '3':
		return "trigonal"
	case '4':
		return "tetragonal"
	}
	return ""
}

var sgNumber = regexp.MustCompile(`(?:^\s*|[(#\s]|no\.?\s*)(\d{1,3})\s*\)?\s*$`)

func systemOfNumber(n int) string {
	switch {
	case n >= 195 && n <= 230:
		return "cubic"
	case n >= 168 && n <= 194:
		return "hexagonal"
	case n >= 143 && n <= 167:
		return "trigonal"
	case n >= 75 && n <= 142:
		return "tetragonal"
	case n >= 16 && n <= 74:
		return "orthorhombic"
	case n >= 3 && n <= 15:
		return "monoclinic"
	case n >= 1 && n <= 2:
		return "triclinic"
	}
	return ""
}
