package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// The candidate decoder reads one candidate of an answer as models write
// them, into the canonical crystal.Candidate (formula, lattice, species,
// fractional coordinates, rationale, rule), whose Structure then checks
// it. What it accepts, beyond the format the prompt asks for:
//
//   - key names as models vary them, in any case and with units in the
//     name ("species", "elements", "atoms"; "coords", "frac_coords",
//     "positions"; "lattice", "lattice_parameters", "cell"; "a (Å)", "α"),
//     and the structure nested one level down ({"structure": {…}});
//   - numbers as strings, with units ("4.1 Å", "0.41 nm", "90°"), a
//     Unicode minus, a leading "~", or as fractions ("1/2");
//   - the lattice as {a, b, c, alpha, beta, gamma}, a 3×3 matrix of rows
//     a, b, c, a list of six numbers, lengths and angles as two lists, or
//     its parameters at the candidate's top level; angles left out are
//     90° (γ = 120° for a hexagonal or trigonal cell), and lengths left out
//     follow from the crystal system the answer names (cubic: b = c = a);
//   - sites as parallel lists (species and coordinates), as a list of
//     sites ({"element": "Sr", "xyz": […]}, ["Sr", 0, 0, 0], "Sr 0 0 0",
//     pymatgen's {"species": [{"element": "Sr", "occu": 1}], "abc": […]}),
//     or as a map from element to its positions; coordinates as lists,
//     strings ("0.5 0.5 0") or {x, y, z}; species with charges or site
//     labels ("Sr2+", "O1"), in any case, or by element name; species
//     given once per element or with counts ("O3") when the coordinates
//     and the formula say how many;
//   - Cartesian coordinates (Å) when the answer says so: a key naming
//     them ("cart_coords", "cartesian") or a flag ("coords_are_cartesian":
//     true, "coordinates": "cartesian"); the lattice is then taken in the
//     standard orientation (c along z, a in the xz plane) when it is given
//     by its parameters;
//   - formulas with Unicode subscripts or superscripts, spaces, LaTeX or
//     HTML markup, or a word after them ("SrZrO₃", "Sr Zr O3",
//     "SrZrO$_3$", "SrZrO3 (perovskite)"); a formula left out, or a name
//     in its place, is taken from the species;
//   - the rule as a number, a numbered or named rule, a phrase or a list
//     (resolveRule), and the rationale as text or a list of sentences;
//   - a structure as CIF text under "cif";
//   - any other key, which is ignored and reported (reading.ignored).
//
// Anything else is a decodeError whose code and detail go back to the
// model in its next prompt.

// decodeError is a candidate the decoder could not read.
type decodeError struct {
	// Code is the reason code the island's failure memory shows.
	Code string
	// Field names the part of the answer ("lattice", "coords[2]").
	Field string
	Msg   string
	Err   error
}

func (e *decodeError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func (e *decodeError) Unwrap() error { return e.Err }

func decodeErr(code, field, format string, args ...any) *decodeError {
	return &decodeError{Code: code, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// coordErr is a coordinate that cannot be read: bad_number when a number
// is not one (NaN, a word), bad_coords otherwise.
func coordErr(field string, err error) *decodeError {
	code := codeBadCoords
	var ne numberError
	if errors.As(err, &ne) {
		code = codeBadNumber
	}
	return &decodeError{Code: code, Field: field, Msg: err.Error(), Err: err}
}

// Reason codes of decodeError.
const (
	codeBadJSON        = "bad_json"
	codeMissing        = "missing_field"
	codeBadNumber      = "bad_number"
	codeBadLattice     = "bad_lattice"
	codeBadCoords      = "bad_coords"
	codeLength         = "length_mismatch"
	codeUnknownElement = "unknown_element"
	codeBadFormula     = "bad_formula"
	codePartial        = "partial_occupancy"
	codeNotFractional  = "not_fractional"
)

// reading is how the decoder read a candidate, for the prompt audit.
type reading struct {
	// Ignored are the keys it did not read ("space_group",
	// "lattice.volume", "sites[].wyckoff").
	Ignored []string
	// Adapted name the departures from the asked-for format it read
	// anyway ("number_as_string", "lattice_matrix", "cartesian", …).
	Adapted []string
}

func (r *reading) adapt(what string) {
	if !slices.Contains(r.Adapted, what) {
		r.Adapted = append(r.Adapted, what)
	}
}

func (r *reading) ignore(keys ...string) {
	for _, k := range keys {
		if !slices.Contains(r.Ignored, k) {
			r.Ignored = append(r.Ignored, k)
		}
	}
}

// kv is one key of a JSON object, in the order written.
type kv struct {
	key  string // as written
	norm string // normKey(key)
	val  json.RawMessage
}

// members reads a JSON object's members in order (duplicate keys kept).
func members(raw json.RawMessage) ([]kv, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []kv
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, kv{key: k, norm: normKey(k), val: v})
	}
	return out, true
}

// object is a JSON object being read: members are taken as they are used,
// and what is left was ignored.
type object struct {
	ms   []kv
	used []bool
}

func newObject(ms []kv) *object { return &object{ms: ms, used: make([]bool, len(ms))} }

// find returns the index of the first unused kv whose normalised key
// is names[0], else names[1], …; -1 when none.
func (o *object) find(names ...string) int {
	for _, n := range names {
		for i, m := range o.ms {
			if !o.used[i] && m.norm == n {
				return i
			}
		}
	}
	return -1
}

// take returns and uses the kv find finds.
func (o *object) take(names ...string) (kv, bool) {
	i := o.find(names...)
	if i < 0 {
		return kv{}, false
	}
	o.used[i] = true
	return o.ms[i], true
}

// peek returns the kv find finds without using it.
func (o *object) peek(names ...string) (kv, bool) {
	i := o.find(names...)
	if i < 0 {
		return kv{}, false
	}
	return o.ms[i], true
}

// unused lists the keys not taken, each prefixed.
func (o *object) unused(prefix string) []string {
	var out []string
	for i, m := range o.ms {
		if !o.used[i] {
			out = append(out, prefix+m.key)
		}
	}
	return out
}

// Key names, normalised (normKey), in order of preference.
var (
	formulaKeys = []string{"formula", "reduced_formula", "chemical_formula", "formula_pretty", "pretty_formula",
		"chemical_formula_reduced", "formula_unit", "compound_formula", "composition"}
	// nameKeys may hold a formula or a name; they are read only when they
	// hold a formula.
	nameKeys    = []string{"compound", "material", "name", "material_name", "compound_name", "chemical_name"}
	latticeKeys = []string{"lattice", "lattice_parameters", "lattice_params", "lattice_parameter", "cell",
		"cell_parameters", "cell_params", "unit_cell", "unit_cell_parameters", "lattice_constants", "lattice_vectors",
		"lattice_matrix", "cell_vectors", "cell_matrix", "cell_dimensions", "lattice_cell"}
	speciesKeys = []string{"species", "elements", "atoms", "atom_types", "symbols", "atomic_species", "element_list",
		"species_list", "types", "atom_symbols", "atomic_symbols", "chemical_symbols", "element_symbols", "elements_list",
		"atom_list", "atom_labels", "site_species", "specie", "atom_species"}
	coordKeys = []string{"coords", "frac_coords", "fractional_coords", "fractional_coordinates", "frac_coordinates",
		"coordinates", "positions", "frac_positions", "fractional_positions", "atomic_positions", "atom_positions",
		"scaled_positions", "xyz", "abc", "reduced_coordinates", "direct_coordinates", "crystal_coordinates",
		"site_coordinates", "atomic_coordinates", "atom_coords", "atom_coordinates", "frac", "fractional",
		"positions_frac", "coords_frac", "frac_xyz", "basis", "wyckoff_positions"}
	cartKeys = []string{"cart_coords", "cartesian_coords", "cartesian_coordinates", "cartesian_positions",
		"positions_cartesian", "cart_positions", "cartesian", "xyz_cartesian", "coords_cartesian", "cart_coordinates",
		"cartesian_xyz", "positions_angstrom", "coords_angstrom", "cart"}
	sitesKeys = []string{"sites", "atoms", "atomic_sites", "site_list", "atom_sites", "basis", "atomic_positions",
		"positions", "coordinates", "coords", "wyckoff_positions", "atom_positions", "structure_sites"}
	// coordFlagKeys say whether coordinates are Cartesian or fractional.
	coordFlagKeys = []string{"coords_are_cartesian", "coordinates_are_cartesian", "cartesian", "is_cartesian",
		"coords_are_fractional", "fractional", "is_fractional", "coordinates", "coordinate_system", "coordinate_type",
		"coords_type", "coord_type", "coordinates_type", "coordinate_mode", "coordinate_format", "position_type",
		"positions_type", "coord_system", "coordinate_units", "coords_units", "position_units", "coordinate_frame"}
	systemKeys = []string{"crystal_system", "lattice_system", "lattice_type", "bravais_lattice", "crystal_family",
		"system", "symmetry", "space_group", "spacegroup", "space_group_number", "spacegroup_number"}
	structureKeys = []string{"structure", "crystal_structure", "crystal", "unit_cell_structure"}
	textKeys      = []string{"cif", "cif_text", "structure_cif", "cif_string"}
)

// hasFormula reports whether an object names its formula.
func hasFormula(ms []kv) bool {
	for _, m := range ms {
		if slices.Contains(formulaKeys, m.norm) {
			return true
		}
	}
	return false
}

// hasSpeciesAndCoords reports whether an object lists species and
// coordinates.
func hasSpeciesAndCoords(ms []kv) bool {
	sp, co := false, false
	for _, m := range ms {
		sp = sp || slices.Contains(speciesKeys, m.norm)
		co = co || slices.Contains(coordKeys, m.norm) || slices.Contains(cartKeys, m.norm)
	}
	return sp && co
}

// looksLikeCandidate reports whether an object is a candidate: it has a
// formula, a lattice, species, sites, coordinates or a structure.
func looksLikeCandidate(ms []kv) bool {
	for _, m := range ms {
		if m.norm == "formula" {
			var f string
			if json.Unmarshal(m.val, &f) == nil && strings.Trim(f, ".… ") == "" {
				return false // the prompt's example echoed: {"formula": "…", …}
			}
		}
	}
	for _, m := range ms {
		n := m.norm
		if slices.Contains(formulaKeys[:len(formulaKeys)-1], n) || slices.Contains(latticeKeys, n) ||
			slices.Contains(speciesKeys, n) || slices.Contains(sitesKeys, n) || slices.Contains(coordKeys, n) ||
			slices.Contains(cartKeys, n) || slices.Contains(textKeys, n) {
			return true
		}
		if slices.Contains(structureKeys, n) || n == "composition" {
			v := bytes.TrimSpace(m.val)
			if len(v) > 0 && (v[0] == '{' || v[0] == '"') {
				return true
			}
		}
	}
	return false
}

// decodeCandidate reads one candidate (see the comment above decodeError).
// The candidate is returned whenever it is an object, so that its formula,
// rationale and rule can be recorded with an error; the structure is nil
// on any error.
func decodeCandidate(raw json.RawMessage) (*crystal.Candidate, *crystal.Structure, *reading, error) {
	rd := &reading{}
	ms, ok := members(raw)
	if !ok {
		return nil, nil, rd, decodeErr(codeBadJSON, "", "a candidate is a JSON object {\"formula\": …, \"lattice\": …, \"species\": …, \"coords\": …}, not %s", kindOf(raw))
	}
	o := newObject(ms)
	// A structure nested one level down ({"structure": {"lattice": …}},
	// {"atoms": {"species": […], "positions": […]}}): its members join the
	// candidate's.
	for i := 0; i < len(o.ms); i++ {
		m := o.ms[i]
		if o.used[i] || !(slices.Contains(structureKeys, m.norm) || slices.Contains(sitesKeys, m.norm)) {
			continue
		}
		inner, ok := members(m.val)
		if !ok || !looksLikeCandidate(inner) || (!slices.Contains(structureKeys, m.norm) && !hasSpeciesAndCoords(inner)) {
			continue
		}
		o.used[i] = true
		o.ms = append(o.ms, inner...)
		o.used = append(o.used, make([]bool, len(inner))...)
		rd.adapt("nested_structure")
	}
	c := &crystal.Candidate{}
	c.Rationale = readRationale(o)
	c.Rule = readRule(o, rd)
	s, err := readStructure(o, c, rd)
	rd.ignore(o.unused("")...)
	if err != nil {
		return c, nil, rd, err
	}
	return c, s, rd, nil
}

// readStructure reads the formula, lattice and sites of o into c and
// builds the structure.
func readStructure(o *object, c *crystal.Candidate, rd *reading) (*crystal.Structure, error) {
	formula, err := readFormula(o, rd)
	c.Formula = formula
	if err != nil {
		return nil, err
	}
	if m, ok := o.take(textKeys...); ok {
		return readText(m, c, rd)
	}
	if m, ok := o.peek(structureKeys...); ok {
		var text string
		if json.Unmarshal(m.val, &text) == nil && (strings.Contains(text, "_cell_length") || strings.Contains(text, "data_")) {
			o.take(m.norm)
			return readText(m, c, rd)
		}
	}
	system := crystalSystem(o)
	lat, err := readLattice(o, system, rd)
	if err != nil {
		return nil, err
	}
	cartesian, declared := coordinateKind(o, rd)
	st, err := readSites(o, rd)
	if err != nil {
		return nil, err
	}
	if st.cartesian {
		cartesian, declared = true, true
	}
	species, coords := st.species, st.coords
	if len(species) != len(coords) {
		expanded, ok := expandSpecies(st, len(coords), formula)
		if !ok {
			return nil, decodeErr(codeLength, "species and coords", "%d species but %d coordinates: give one species per atom, in the order of the coordinates", len(species), len(coords))
		}
		species = expanded
		rd.adapt("species_counts")
	}
	c.Lattice, c.Species = lat, species
	if cartesian {
		l, err := lat.Lattice()
		if err != nil {
			return nil, decodeErr(codeBadLattice, "lattice", "%v", err)
		}
		c.Coords = make([]crystal.Vec3, len(coords))
		for i, x := range coords {
			c.Coords[i] = l.Fractional(x)
		}
		rd.adapt("cartesian")
	} else {
		c.Coords = coords
		if !declared {
			for i, x := range coords {
				for _, v := range x {
					if v > 1.5 || v < -1.5 {
						return nil, decodeErr(codeNotFractional, fmt.Sprintf("coords[%d]", i),
							"%v is not a fractional coordinate: give fractional coordinates in [0, 1), or say \"coords_are_cartesian\": true for Cartesian ones in Å", x)
					}
				}
			}
		}
	}
	if c.Formula == "" {
		c.Formula = formulaOfSpecies(species)
		rd.adapt("formula_from_species")
	}
	s, err := c.Structure()
	if errors.Is(err, crystal.ErrFormulaMismatch) && slices.ContainsFunc(rd.Ignored, isWyckoffKey) {
		return nil, &decodeError{Code: string(crystal.ReasonFormulaMismatch), Err: err,
			Msg: err.Error() + "; the sites look like one per Wyckoff position: list every atom of the cell"}
	}
	return s, err
}

// isWyckoffKey reports a site key naming a Wyckoff position or a
// multiplicity.
func isWyckoffKey(k string) bool {
	k = strings.ToLower(k)
	return strings.HasPrefix(k, "sites[].") && (strings.Contains(k, "wyckoff") || strings.Contains(k, "multiplicity"))
}

// readText reads a structure given as CIF text.
func readText(m kv, c *crystal.Candidate, rd *reading) (*crystal.Structure, error) {
	var text string
	if json.Unmarshal(m.val, &text) != nil || strings.TrimSpace(text) == "" {
		return nil, decodeErr(codeBadJSON, m.key, "want the structure's text as a string")
	}
	s, err := crystal.ParseStructure([]byte(text))
	if err != nil {
		return nil, &decodeError{Code: codeBadJSON, Field: m.key, Msg: err.Error(), Err: err}
	}
	rd.adapt("structure_text")
	formula := c.Formula
	*c = crystal.Candidate{Formula: formula, Rationale: c.Rationale, Rule: c.Rule,
		Lattice: crystal.CandidateLattice{Matrix: ptr(s.Lattice.Matrix())}, Coords: s.Frac}
	for _, e := range s.Species {
		c.Species = append(c.Species, e.Symbol())
	}
	if c.Formula == "" {
		c.Formula = s.Composition().ReducedFormula()
	}
	return c.Structure()
}

func ptr[T any](v T) *T { return &v }

// readFormula reads the formula the answer states ("" when it states
// none, or a name instead); with an error, the text as written.
func readFormula(o *object, rd *reading) (string, error) {
	if m, ok := o.take(formulaKeys...); ok {
		text, err := formulaText(m.val)
		if err != nil {
			return "", decodeErr(codeBadFormula, m.key, "%v", err)
		}
		f, err := normalFormula(text)
		switch {
		case err == nil:
			if f != text {
				rd.adapt("formula_notation")
			}
			return f, nil
		case looksLikeName(text):
			rd.adapt("formula_is_a_name")
			return "", nil
		case errors.Is(err, crystal.ErrUnknownElement):
			return text, &decodeError{Code: codeUnknownElement, Field: m.key, Msg: err.Error(), Err: err}
		}
		return text, &decodeError{Code: codeBadFormula, Field: m.key, Msg: err.Error(), Err: err}
	}
	for _, k := range nameKeys {
		if m, ok := o.peek(k); ok {
			var text string
			if json.Unmarshal(m.val, &text) == nil {
				if f, err := normalFormula(text); err == nil {
					o.take(k)
					rd.adapt("formula_key")
					return f, nil
				}
			}
		}
	}
	return "", nil
}

// formulaText is a formula given as a string, or as a map from element to
// amount ({"Sr": 1, "Zr": 1, "O": 3}).
func formulaText(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	ms, ok := members(raw)
	if !ok || len(ms) == 0 {
		return "", fmt.Errorf("want a formula such as \"SrTiO3\", got %s", kindOf(raw))
	}
	var b strings.Builder
	for _, m := range ms {
		x, _, err := parseNumber(m.val, plain)
		if err != nil {
			return "", fmt.Errorf("amount of %s: %v", m.key, err)
		}
		fmt.Fprintf(&b, "%s%g", m.key, x)
	}
	return b.String(), nil
}

// formulaOfSpecies is the reduced formula of a list of element symbols
// ("" when one is not an element: Structure reports it).
func formulaOfSpecies(species []string) string {
	m := map[string]float64{}
	for _, s := range species {
		m[s]++
	}
	comp, err := crystal.CompositionFromMap(m)
	if err != nil {
		return ""
	}
	return comp.ReducedFormula()
}

// readRationale reads the rationale: text, or a list of sentences.
func readRationale(o *object) string {
	m, ok := o.take("rationale", "reasoning", "reason", "explanation", "justification", "design_rationale", "why",
		"motivation", "hypothesis", "description", "comment", "comments", "notes", "note")
	if !ok {
		return ""
	}
	const maxRationale = 2000
	var s string
	var list []string
	switch {
	case json.Unmarshal(m.val, &s) == nil:
	case json.Unmarshal(m.val, &list) == nil:
		s = strings.Join(list, " ")
	default:
		s = string(bytes.TrimSpace(m.val))
	}
	s = strings.TrimSpace(s)
	if len(s) > maxRationale {
		s = strings.ToValidUTF8(s[:maxRationale], "") + "…"
	}
	return s
}

// readRule reads the design rule the candidate names, as resolveRule
// names it.
func readRule(o *object, rd *reading) string {
	m, ok := o.take("rule", "design_rule", "rule_applied", "applied_rule", "rule_used", "rule_number", "rule_id",
		"rule_name", "evolution_rule", "strategy", "operator", "rules", "rules_applied", "design_rules")
	if !ok {
		return ""
	}
	rule, how := resolveRule(m.val)
	if how != "" {
		rd.adapt(how)
	}
	return rule
}

// crystalSystem returns the crystal system the answer names, in lower
// case ("cubic", "hexagonal"), or "".
func crystalSystem(o *object) string {
	for _, k := range systemKeys {
		m, ok := o.peek(k)
		if !ok {
			continue
		}
		if s := systemOf(m.val); s != "" {
			return s
		}
	}
	return ""
}

// coordinateKind reads whether the answer says its coordinates are
// Cartesian (a flag such as "coords_are_cartesian": true or
// "coordinates": "cartesian"); declared is false when it says nothing.
func coordinateKind(o *object, rd *reading) (cartesian, declared bool) {
	for _, k := range coordFlagKeys {
		m, ok := o.peek(k)
		if !ok {
			continue
		}
		var b bool
		var s string
		switch {
		case json.Unmarshal(m.val, &b) == nil:
			if strings.Contains(m.norm, "frac") {
				b = !b
			} else if !strings.Contains(m.norm, "cart") {
				continue
			}
			o.take(k)
			return b, true
		case json.Unmarshal(m.val, &s) == nil:
			s = strings.ToLower(s)
			switch {
			case strings.Contains(s, "cart") || strings.Contains(s, "angstrom") || strings.Contains(s, "å"):
				o.take(k)
				return true, true
			case strings.Contains(s, "frac") || strings.Contains(s, "direct") || strings.Contains(s, "reduced") ||
				strings.Contains(s, "crystal") || strings.Contains(s, "scaled") || strings.Contains(s, "relative"):
				o.take(k)
				return false, true
			}
		}
	}
	return false, false
}

// kindOf names a JSON value's kind for a message.
func kindOf(raw json.RawMessage) string {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		s := string(v)
		if len(s) > 40 {
			s = s[:40] + "…\""
		}
		return "the string " + s
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "the number " + string(v)
}
