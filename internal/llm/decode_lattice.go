package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Keys of a lattice's parts, normalised.
var (
	matrixKeys = []string{"matrix", "vectors", "lattice_vectors", "cell_vectors", "lattice_matrix", "cell_matrix",
		"basis_vectors", "primitive_vectors", "lattice_vector", "cell"}
	lengthKeys = [3][]string{
		{"a", "length_a", "a_length", "cell_length_a", "lattice_a", "a_axis", "a_parameter", "lattice_constant_a", "len_a"},
		{"b", "length_b", "b_length", "cell_length_b", "lattice_b", "b_axis", "b_parameter", "lattice_constant_b", "len_b"},
		{"c", "length_c", "c_length", "cell_length_c", "lattice_c", "c_axis", "c_parameter", "lattice_constant_c", "len_c"},
	}
	angleKeys = [3][]string{
		{"alpha", "angle_alpha", "alpha_angle", "cell_angle_alpha", "lattice_alpha"},
		{"beta", "angle_beta", "beta_angle", "cell_angle_beta", "lattice_beta"},
		{"gamma", "angle_gamma", "gamma_angle", "cell_angle_gamma", "lattice_gamma"},
	}
	lengthListKeys = []string{"lengths", "abc", "cell_lengths", "lattice_lengths", "lattice_constants", "a_b_c",
		"edge_lengths", "lattice_constant", "lattice_parameter", "a0"}
	angleListKeys = []string{"angles", "cell_angles", "lattice_angles", "alpha_beta_gamma", "angle"}
	vectorKeys    = [3][]string{
		{"a", "a1", "v1", "a_vector", "vector_a", "va", "a_vec"},
		{"b", "a2", "v2", "b_vector", "vector_b", "vb", "b_vec"},
		{"c", "a3", "v3", "c_vector", "vector_c", "vc", "c_vec"},
	}
)

// readLattice reads the candidate's lattice: its value under a lattice
// key, or its parameters at the candidate's top level. system is the
// crystal system the answer names ("" when none), for parameters left
// out.
func readLattice(o *object, system string, rd *reading) (crystal.CandidateLattice, error) {
	if m, ok := o.take(latticeKeys...); ok {
		lat, found, err := latticeValue(m, system, rd)
		if found || err != nil {
			return lat, err
		}
		if s := systemOf(m.val); s != "" {
			system = s // "lattice": "cubic", parameters beside it
		}
	}
	lat, found, err := latticeMembers(o, system, rd, "")
	if err != nil {
		return lat, err
	}
	if !found {
		return lat, decodeErr(codeMissing, "lattice", "missing: give \"lattice\": {\"a\": …, \"b\": …, \"c\": …, \"alpha\": …, \"beta\": …, \"gamma\": …} in Å and degrees")
	}
	rd.adapt("lattice_top_level")
	return lat, nil
}

// latticeValue reads a lattice value: an object, a 3×3 matrix, six (or
// nine, or three) numbers, [[a, b, c], [α, β, γ]], or a text holding one
// of these ("a=4.1 b=4.1 …", "4.1 4.1 4.1 90 90 90"). found is false for a
// value without numbers (a word).
func latticeValue(m kv, system string, rd *reading) (crystal.CandidateLattice, bool, error) {
	v := bytes.TrimSpace(m.val)
	field := m.key
	if len(v) == 0 {
		return crystal.CandidateLattice{}, false, nil
	}
	switch v[0] {
	case '{':
		ms, _ := members(v)
		inner := newObject(ms)
		lat, found, err := latticeMembers(inner, system, rd, field+".")
		rd.ignore(inner.unused(field + ".")...)
		if err == nil && !found {
			err = decodeErr(codeBadLattice, field, "want {\"a\": …, \"b\": …, \"c\": …, \"alpha\": …, \"beta\": …, \"gamma\": …} or a 3×3 matrix of rows a, b, c in Å")
		}
		return lat, true, err
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return crystal.CandidateLattice{}, true, decodeErr(codeBadLattice, field, "%v", err)
		}
		lat, err := latticeList(elems, field, system, rd)
		return lat, true, err
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		if !strings.ContainsAny(s, "0123456789") {
			return crystal.CandidateLattice{}, false, nil
		}
		rd.adapt("lattice_as_string")
		if sys := systemOf(m.val); sys != "" {
			system = sys // "cubic, a = 4.15 Å"
		}
		if ms := assignments(s); len(ms) > 0 {
			lat, found, err := latticeMembers(newObject(ms), system, rd, field+".")
			if err == nil && !found {
				err = decodeErr(codeBadLattice, field, "cannot read %q", s)
			}
			return lat, true, err
		}
		xs, err := splitNumbers(stripUnits(s), plain)
		if err != nil {
			return crystal.CandidateLattice{}, true, decodeErr(codeBadNumber, field, "%v", err)
		}
		elems := make([]json.RawMessage, len(xs))
		for i, x := range xs {
			elems[i] = mustJSON(x)
		}
		lat, err := latticeList(elems, field, system, rd)
		return lat, true, err
	}
	if x, _, err := parseNumber(v, length); err == nil { // "lattice": 4.1, a cubic cell's edge
		ms := []kv{{key: "a", norm: "a", val: mustJSON(x)}}
		lat, _, err := latticeMembers(newObject(ms), system, rd, field+".")
		return lat, true, err
	}
	return crystal.CandidateLattice{}, true, decodeErr(codeBadLattice, field, "want lattice parameters or a 3×3 matrix, got %s", kindOf(v))
}

// nameChain is the names of an assignment: "a = ", or names sharing a
// value ("a = b = c = ", "α=β=γ=").
var nameChain = regexp.MustCompile(`(?:\b[A-Za-z_]+|[αβγ])(?:\s*[=:]\s*(?:\b[A-Za-z_]+|[αβγ]))*\s*[=:]\s*`)

// assignments reads the assignments of a text ("a = b = 3.25 Å and c =
// 5.21 Å; alpha=beta=90, gamma=120") as members: every name gets the
// value that follows its chain, up to the next chain.
func assignments(s string) []kv {
	locs := nameChain.FindAllStringIndex(s, -1)
	var out []kv
	for i, l := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		value := strings.TrimSpace(s[l[1]:end])
		value = strings.TrimSpace(strings.TrimSuffix(strings.TrimRight(value, ",; "), " and"))
		if value == "" {
			continue
		}
		for _, n := range strings.FieldsFunc(s[l[0]:l[1]], func(r rune) bool { return r == '=' || r == ':' || r == ' ' }) {
			out = append(out, kv{key: n, norm: normKey(n), val: mustJSON(value)})
		}
	}
	return out
}

// stripUnits drops unit words from a text of numbers.
var unitWords = strings.NewReplacer("Å", " ", "°", " ", "deg", " ", "angstrom", " ")

func stripUnits(s string) string { return unitWords.Replace(s) }

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// latticeList reads a lattice written as a list: three rows (a 3×3
// matrix), six numbers (a, b, c, α, β, γ), nine numbers (a matrix, row by
// row), three numbers (a, b, c; right angles unless the system says
// otherwise) or two lists (lengths, angles).
func latticeList(elems []json.RawMessage, field, system string, rd *reading) (crystal.CandidateLattice, error) {
	numbers := true
	for _, e := range elems {
		if !isNumberLike(e) {
			numbers = false
		}
	}
	switch {
	case numbers && len(elems) == 6:
		rd.adapt("lattice_six_numbers")
		ms := make([]kv, 6)
		for i, k := range []string{"a", "b", "c", "alpha", "beta", "gamma"} {
			ms[i] = kv{key: k, norm: k, val: elems[i]}
		}
		lat, _, err := latticeMembers(newObject(ms), system, rd, field+".")
		return lat, err
	case numbers && len(elems) == 9:
		rd.adapt("lattice_matrix")
		var rows [3]json.RawMessage
		for i := range rows {
			rows[i] = mustJSON([]json.RawMessage{elems[3*i], elems[3*i+1], elems[3*i+2]})
		}
		return matrixRows(rows[:], field, rd)
	case numbers && len(elems) == 3:
		ms := make([]kv, 3)
		for i, k := range []string{"a", "b", "c"} {
			ms[i] = kv{key: k, norm: k, val: elems[i]}
		}
		lat, _, err := latticeMembers(newObject(ms), system, rd, field+".")
		return lat, err
	case !numbers && len(elems) == 3:
		rd.adapt("lattice_matrix")
		return matrixRows(elems, field, rd)
	case !numbers && len(elems) == 2:
		ms := []kv{{key: "lengths", norm: "lengths", val: elems[0]}, {key: "angles", norm: "angles", val: elems[1]}}
		lat, _, err := latticeMembers(newObject(ms), system, rd, field+".")
		return lat, err
	case !numbers && len(elems) == 1: // [[…]]
		var inner []json.RawMessage
		if json.Unmarshal(elems[0], &inner) == nil {
			return latticeList(inner, field, system, rd)
		}
	}
	return crystal.CandidateLattice{}, decodeErr(codeBadLattice, field, "want a 3×3 matrix of rows a, b, c or six numbers a, b, c, alpha, beta, gamma; got a list of %d", len(elems))
}

// matrixRows reads three rows a, b, c (Å) as a matrix.
func matrixRows(rows []json.RawMessage, field string, rd *reading) (crystal.CandidateLattice, error) {
	if len(rows) != 3 {
		return crystal.CandidateLattice{}, decodeErr(codeBadLattice, field, "want a 3×3 matrix, got %d rows", len(rows))
	}
	var m [3][3]float64
	for i, r := range rows {
		v, err := parseVec3(r, rd)
		if err != nil {
			return crystal.CandidateLattice{}, decodeErr(codeBadLattice, fmt.Sprintf("%s[%d]", field, i), "%v", err)
		}
		m[i] = v
	}
	return crystal.CandidateLattice{Matrix: &m}, nil
}

// latticeMembers reads a lattice from an object's members (the lattice
// object's, or the candidate's own): a matrix, three vectors, or lengths
// and angles, singly or as lists. found is false when none is there.
// Lengths and angles left out follow the crystal system: b = a in
// cubic, tetragonal, hexagonal, trigonal and rhombohedral cells, c = a in
// cubic and rhombohedral ones; angles are 90° but γ = 120° in hexagonal
// and trigonal cells, and β = γ = α in rhombohedral ones.
func latticeMembers(o *object, system string, rd *reading, prefix string) (crystal.CandidateLattice, bool, error) {
	if m, ok := o.peek(matrixKeys...); ok && isVecLike(m.val) {
		var rows []json.RawMessage
		if json.Unmarshal(m.val, &rows) == nil && len(rows) == 3 && isVecLike(rows[0]) {
			o.take(m.norm)
			rd.adapt("lattice_matrix")
			lat, err := matrixRows(rows, prefix+m.key, rd)
			return lat, true, err
		}
		if ms, ok := members(m.val); ok && m.norm != "cell" {
			inner := newObject(ms)
			if lat, found, err := latticeMembers(inner, system, rd, prefix+m.key+"."); found {
				o.take(m.norm)
				rd.ignore(inner.unused(prefix + m.key + ".")...)
				return lat, true, err
			}
		}
	}
	// Three vectors: {"a": [ax, ay, az], "b": […], "c": […]}.
	var vecs [3]json.RawMessage
	nv := 0
	for i, names := range vectorKeys {
		if m, ok := o.peek(names...); ok {
			var row []json.RawMessage
			if json.Unmarshal(m.val, &row) == nil && len(row) == 3 {
				vecs[i] = m.val
				nv++
			}
		}
	}
	if nv == 3 {
		for _, names := range vectorKeys {
			o.take(names...)
		}
		rd.adapt("lattice_matrix")
		lat, err := matrixRows(vecs[:], prefix+"vectors", rd)
		return lat, true, err
	}
	// Nested parameters: {"parameters": {…}} or {"parameters": [six]}.
	if m, ok := o.peek("parameters", "params", "lattice_parameters", "cell_parameters"); ok {
		o.take(m.norm)
		lat, found, err := latticeValue(kv{key: prefix + m.key, norm: m.norm, val: m.val}, system, rd)
		if found || err != nil {
			return lat, found, err
		}
	}
	var p [6]float64
	var have [6]bool
	field := [6]string{"a", "b", "c", "alpha", "beta", "gamma"}
	read := func(i int, raw json.RawMessage, key string) error {
		q := length
		if i >= 3 {
			q = angle
		}
		x, str, err := parseNumber(raw, q)
		if err != nil {
			return decodeErr(codeBadNumber, prefix+key, "%v", err)
		}
		if str {
			rd.adapt("number_as_string")
		}
		p[i], have[i] = x, true
		return nil
	}
	for i := 0; i < 3; i++ {
		if m, ok := o.peek(lengthKeys[i]...); ok && isNumberLike(m.val) {
			o.take(m.norm)
			if err := read(i, m.val, m.key); err != nil {
				return crystal.CandidateLattice{}, true, err
			}
		}
		if m, ok := o.peek(angleKeys[i]...); ok && isNumberLike(m.val) {
			o.take(m.norm)
			if err := read(i+3, m.val, m.key); err != nil {
				return crystal.CandidateLattice{}, true, err
			}
		}
	}
	singles := map[int]bool{}
	for off, keys := range map[int][]string{0: lengthListKeys, 3: angleListKeys} {
		m, ok := o.peek(keys...)
		if !ok {
			continue
		}
		var list []json.RawMessage
		switch {
		case json.Unmarshal(m.val, &list) == nil && len(list) <= 3 && allNumberLike(list):
		case isNumberLike(m.val):
			list = []json.RawMessage{m.val} // "lattice_constant": 4.1
		default:
			var s string
			if json.Unmarshal(m.val, &s) != nil {
				continue
			}
			xs, err := splitNumbers(stripUnits(s), plain)
			if err != nil || len(xs) == 0 || len(xs) > 3 {
				continue
			}
			list = list[:0]
			for _, x := range xs {
				list = append(list, mustJSON(x))
			}
		}
		o.take(m.norm)
		if len(list) == 1 {
			// One number for three: "angles": 60 is every angle;
			// "lattice_constant": 4.1 is every edge unless the crystal
			// system says otherwise.
			singles[off] = true
			list = []json.RawMessage{list[0], list[0], list[0]}
		}
		for j, e := range list {
			if !have[off+j] {
				if err := read(off+j, e, fmt.Sprintf("%s[%d]", m.key, min(j, len(list)-1))); err != nil {
					return crystal.CandidateLattice{}, true, err
				}
			}
		}
	}
	if !have[0] && !have[1] && !have[2] {
		return crystal.CandidateLattice{}, false, nil
	}
	if m, ok := o.peek("type", "system", "crystal_system", "lattice_type", "lattice_system", "bravais_lattice"); ok {
		if sys := systemOf(m.val); sys != "" {
			o.take(m.norm)
			system = sys
		}
	}
	if singles[0] && system != "" && system != "cubic" && system != "rhombohedral" {
		// A single lattice constant of a non-cubic cell is a only.
		have[1], have[2] = false, false
	}
	if have[3] && have[4] && have[5] && p[3] < math.Pi+0.01 && p[4] < math.Pi+0.01 && p[5] < math.Pi+0.01 {
		// No cell has angles of three degrees or less: they are radians.
		for i := 3; i < 6; i++ {
			p[i] *= 180 / math.Pi
		}
		rd.adapt("angles_in_radians")
	}
	defaulted := false
	fill := func(i int, v float64) {
		if !have[i] {
			p[i], have[i], defaulted = v, true, true
		}
	}
	switch system {
	case "cubic":
		fill(1, p[0])
		fill(2, p[0])
	case "tetragonal", "hexagonal", "trigonal":
		fill(1, p[0])
	case "rhombohedral":
		fill(1, p[0])
		fill(2, p[0])
		if have[3] {
			fill(4, p[3])
			fill(5, p[3])
		}
	}
	if have[0] && have[1] && have[2] {
		if system == "hexagonal" || system == "trigonal" {
			fill(5, 120)
		}
		for i := 3; i < 6; i++ {
			fill(i, 90)
		}
	}
	for i := range have {
		if !have[i] {
			return crystal.CandidateLattice{}, true, decodeErr(codeMissing, prefix+field[i], "missing (give a, b, c in Å and alpha, beta, gamma in degrees)")
		}
	}
	if defaulted {
		rd.adapt("lattice_defaults")
	}
	return crystal.CandidateLattice{Parameters: &crystal.LatticeParameters{A: p[0], B: p[1], C: p[2], Alpha: p[3], Beta: p[4], Gamma: p[5]}}, true, nil
}

func allNumberLike(list []json.RawMessage) bool {
	for _, e := range list {
		if !isNumberLike(e) {
			return false
		}
	}
	return len(list) > 0
}
