package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Keys of a site object, normalised, in order of preference.
var (
	siteElementKeys = []string{"element", "species", "specie", "symbol", "atom", "el", "elem", "element_symbol",
		"atomic_symbol", "chemical_symbol", "atom_type", "type", "kind", "label", "name", "atom_label", "site_label"}
	siteFracKeys = []string{"abc", "frac", "frac_coords", "fractional", "fractional_coords", "fractional_coordinates",
		"frac_coordinates", "fract", "direct", "reduced", "coords", "coordinates", "coord", "position", "positions",
		"pos", "frac_xyz", "frac_position", "fractional_position", "xyz", "location", "r", "point"}
	siteCartKeys = []string{"cart", "cartesian", "cart_coords", "cartesian_coords", "cartesian_coordinates",
		"xyz_cart", "position_cartesian", "cartesian_position", "cart_position", "xyz_angstrom"}
	siteOccuKeys = []string{"occu", "occupancy", "occ", "site_occupancy", "occupation"}
)

// sites are the atoms of a candidate as read.
type sites struct {
	species []string
	// counts are numbers written after the symbols of a species list
	// ("O3"), 0 where none: counts or site labels (expandSpecies).
	counts []int
	coords []crystal.Vec3
	// cartesian: the coordinates are Cartesian by their key's name.
	cartesian bool
}

// readSites reads the atoms: a list of sites, a map from element to
// positions, or parallel lists of species and coordinates.
func readSites(o *object, rd *reading) (*sites, error) {
	for _, k := range sitesKeys {
		m, ok := o.peek(k)
		if !ok || !isSiteList(m.val) {
			continue
		}
		o.take(k)
		if m.norm != "sites" {
			rd.adapt("sites_key")
		}
		return readSiteList(m, rd)
	}
	for _, keys := range [][]string{coordKeys, cartKeys, sitesKeys} {
		for _, k := range keys {
			m, ok := o.peek(k)
			if !ok {
				continue
			}
			if ms, ok := members(m.val); ok && len(ms) > 0 {
				if _, _, ok := elementSymbol(ms[0].key); ok {
					o.take(k)
					o.take(speciesKeys...) // the unique elements, if listed
					s, err := readPositionMap(m, ms, rd)
					if err == nil {
						s.cartesian = slices.Contains(cartKeys, k)
					}
					return s, err
				}
			}
		}
	}
	s := &sites{}
	cm, ok := o.take(coordKeys...)
	if !ok {
		if cm, ok = o.take(cartKeys...); ok {
			s.cartesian = true
		}
	}
	if !ok {
		return nil, decodeErr(codeMissing, "coords", "missing: give \"coords\", the fractional coordinates [x, y, z] of each atom, in the order of \"species\"")
	}
	if cm.norm != "coords" {
		rd.adapt("coords_key")
	}
	if ms, ok := members(cm.val); ok {
		// {"fractional": [[…]]}, {"cartesian": [[…]]}, or the list beside
		// its kind: {"type": "cartesian", "values": [[…]]}.
		inner := newObject(ms)
		if f, ok := inner.take(siteFracKeys...); ok {
			cm = kv{key: cm.key + "." + f.key, norm: f.norm, val: f.val}
		} else if c, ok := inner.take(siteCartKeys...); ok {
			cm = kv{key: cm.key + "." + c.key, norm: c.norm, val: c.val}
			s.cartesian = true
		} else {
			for i, m := range inner.ms {
				var list []json.RawMessage
				var text string
				switch {
				case json.Unmarshal(m.val, &list) == nil && len(list) > 0:
					inner.used[i] = true
					cm = kv{key: cm.key + "." + m.key, norm: m.norm, val: m.val}
				case json.Unmarshal(m.val, &text) == nil:
					low := strings.ToLower(text)
					if strings.Contains(low, "cart") || strings.Contains(low, "angstrom") || strings.Contains(low, "å") {
						inner.used[i] = true
						s.cartesian = true
					} else if strings.Contains(low, "frac") || strings.Contains(low, "direct") {
						inner.used[i] = true
					}
				}
			}
		}
		rd.ignore(inner.unused(cm.key + ".")...)
	}
	sm, ok := o.take(speciesKeys...)
	if !ok {
		return nil, decodeErr(codeMissing, "species", "missing: give \"species\", the element symbol of each atom, in the order of \"coords\"")
	}
	if sm.norm != "species" {
		rd.adapt("species_key")
	}
	var err error
	if s.species, s.counts, err = readSpeciesList(sm, rd); err != nil {
		return nil, err
	}
	if s.coords, err = readCoordList(cm, len(s.species), rd); err != nil {
		return nil, err
	}
	return s, nil
}

// isSiteList reports whether raw is a list of sites: objects naming an
// element, ["Sr", x, y, z] lists, or "Sr x y z" strings.
func isSiteList(raw json.RawMessage) bool {
	var elems []json.RawMessage
	if json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
		return false
	}
	first := bytes.TrimSpace(elems[0])
	switch first[0] {
	case '{':
		ms, ok := members(first)
		if !ok {
			return false
		}
		for _, m := range ms {
			if slices.Contains(siteElementKeys, m.norm) {
				return true
			}
		}
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(first, &parts) != nil {
			return false
		}
		for _, p := range parts {
			var s string
			if json.Unmarshal(p, &s) == nil {
				if _, _, ok := elementSymbol(s); ok {
					return true
				}
			}
		}
	case '"':
		var s string
		_ = json.Unmarshal(first, &s)
		m := siteText.FindStringSubmatch(s)
		return m != nil && strings.ContainsAny(m[2], "0123456789")
	}
	return false
}

var siteText = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9+\-^()]*)\s*(?:[:=@,]|\bat\b)?\s*(.+)$`)

// readSiteList reads a list of sites.
func readSiteList(m kv, rd *reading) (*sites, error) {
	var elems []json.RawMessage
	_ = json.Unmarshal(m.val, &elems)
	if len(elems) > crystal.MaxReadSites {
		return nil, fmt.Errorf("%w: %d sites, more than %d", crystal.ErrTooManySites, len(elems), crystal.MaxReadSites)
	}
	s := &sites{}
	kinds := map[bool]int{}
	for i, e := range elems {
		field := fmt.Sprintf("%s[%d]", m.key, i)
		sym, xs, cart, err := readSite(e, field, rd)
		if err != nil {
			return nil, err
		}
		kinds[cart]++
		for _, x := range xs {
			s.species = append(s.species, sym)
			s.counts = append(s.counts, 0)
			s.coords = append(s.coords, x)
		}
	}
	if kinds[true] > 0 && kinds[false] > 0 {
		return nil, decodeErr(codeBadCoords, m.key, "%d sites with Cartesian and %d with fractional coordinates: give all in one kind", kinds[true], kinds[false])
	}
	s.cartesian = kinds[true] > 0
	return s, nil
}

// readSite reads one site: an object, a list or a text. An object may
// give one element at several positions ({"element": "O", "coords":
// [[…], […], […]]}).
func readSite(raw json.RawMessage, field string, rd *reading) (sym string, xs []crystal.Vec3, cart bool, err error) {
	var x crystal.Vec3
	v := bytes.TrimSpace(raw)
	switch v[0] {
	case '{':
		ms, _ := members(v)
		o := newObject(ms)
		em, ok := o.take(siteElementKeys...)
		if !ok {
			return "", nil, false, decodeErr(codeMissing, field, "a site names its element (\"element\": \"Sr\")")
		}
		if sym, err = siteElement(em.val, field+"."+em.key); err != nil {
			return "", nil, false, err
		}
		if om, ok := o.take(siteOccuKeys...); ok {
			occ, _, err := parseNumber(om.val, plain)
			if err != nil || occ < 1-crystal.CIFOccupancyTolerance {
				return "", nil, false, decodeErr(codePartial, field+"."+om.key, "occupancy %s: only fully occupied sites can be evaluated", strings.TrimSpace(string(om.val)))
			}
		}
		cm, ok := o.take(siteFracKeys...)
		if !ok {
			if cm, ok = o.take(siteCartKeys...); ok {
				cart = true
			}
		}
		switch {
		case ok:
			var list []json.RawMessage
			if json.Unmarshal(cm.val, &list) == nil && len(list) > 1 && isVecLike(list[0]) {
				for i, p := range list {
					if x, err = parseVec3(p, rd); err != nil {
						return "", nil, false, coordErr(fmt.Sprintf("%s.%s[%d]", field, cm.key, i), err)
					}
					xs = append(xs, x)
				}
				rd.adapt("site_positions_list")
				break
			}
			if x, err = parseVec3(cm.val, rd); err != nil {
				return "", nil, false, coordErr(field+"."+cm.key, err)
			}
			xs = append(xs, x)
		default:
			if x, err = parseVec3(v, &reading{}); err != nil { // x, y, z beside the element
				return "", nil, false, decodeErr(codeMissing, field, "a site gives its coordinates (\"coords\": [x, y, z])")
			}
			for _, k := range []string{"x", "y", "z", "fract_x", "fract_y", "fract_z", "frac_x", "frac_y", "frac_z", "fx", "fy", "fz", "u", "v", "w"} {
				o.take(k)
			}
			xs = append(xs, x)
		}
		rd.ignore(o.unused("sites[].")...)
		return sym, xs, cart, nil
	case '[':
		var parts []json.RawMessage
		_ = json.Unmarshal(v, &parts)
		var nums []json.RawMessage
		for _, p := range parts {
			var s string
			if sym == "" && json.Unmarshal(p, &s) == nil {
				if e, _, ok := elementSymbol(s); ok {
					sym = e
					continue
				}
			}
			nums = append(nums, p)
		}
		if sym == "" {
			return "", nil, false, decodeErr(codeBadCoords, field, "a site [\"Sr\", x, y, z] names its element")
		}
		rd.adapt("site_as_list")
		if len(nums) == 1 {
			x, err = parseVec3(nums[0], rd)
		} else {
			x, err = parseVec3(mustJSON(nums), rd)
		}
		if err != nil {
			return "", nil, false, coordErr(field, err)
		}
		return sym, []crystal.Vec3{x}, false, nil
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		m := siteText.FindStringSubmatch(s)
		if m == nil {
			return "", nil, false, decodeErr(codeBadCoords, field, "cannot read the site %q", s)
		}
		e, _, ok := elementSymbol(m[1])
		if !ok {
			return "", nil, false, decodeErr(codeUnknownElement, field, "%q is not an element", m[1])
		}
		nums, err := splitNumbers(m[2], plain)
		if err != nil || len(nums) != 3 {
			return "", nil, false, decodeErr(codeBadCoords, field, "want \"Sr x y z\", got %q", s)
		}
		rd.adapt("site_as_text")
		return e, []crystal.Vec3{{nums[0], nums[1], nums[2]}}, false, nil
	}
	return "", nil, false, decodeErr(codeBadCoords, field, "want a site {\"element\": …, \"coords\": […]}, got %s", kindOf(v))
}

// siteElement reads a site's element: "Sr", ["Sr"], {"element": "Sr"} or
// pymatgen's [{"element": "Sr", "occu": 1}].
func siteElement(raw json.RawMessage, field string) (string, error) {
	v := bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(v, &s) == nil {
		if e, _, ok := elementSymbol(s); ok {
			return e, nil
		}
		return "", decodeErr(codeUnknownElement, field, "%q is not an element", s)
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil {
		if len(list) != 1 {
			return "", decodeErr(codePartial, field, "%d species on one site: only fully occupied sites of one element can be evaluated", len(list))
		}
		return siteElement(list[0], field)
	}
	if ms, ok := members(v); ok {
		o := newObject(ms)
		if om, ok := o.take(siteOccuKeys...); ok {
			if occ, _, err := parseNumber(om.val, plain); err != nil || occ < 1-crystal.CIFOccupancyTolerance {
				return "", decodeErr(codePartial, field, "occupancy %s: only fully occupied sites can be evaluated", strings.TrimSpace(string(om.val)))
			}
		}
		if em, ok := o.take(siteElementKeys...); ok {
			return siteElement(em.val, field)
		}
	}
	return "", decodeErr(codeUnknownElement, field, "want an element symbol, got %s", kindOf(v))
}

// readPositionMap reads {"Sr": [0, 0, 0], "O": [[…], […], […]]}: each
// element with one position or a list of them.
func readPositionMap(m kv, ms []kv, rd *reading) (*sites, error) {
	s := &sites{}
	rd.adapt("positions_by_element")
	for _, e := range ms {
		sym, _, ok := elementSymbol(e.key)
		if !ok {
			return nil, decodeErr(codeUnknownElement, m.key+"."+e.key, "%q is not an element", e.key)
		}
		var list []json.RawMessage
		if json.Unmarshal(e.val, &list) == nil && len(list) > 0 && isVecLike(list[0]) {
			for i, p := range list {
				x, err := parseVec3(p, rd)
				if err != nil {
					return nil, coordErr(fmt.Sprintf("%s.%s[%d]", m.key, e.key, i), err)
				}
				s.species, s.counts, s.coords = append(s.species, sym), append(s.counts, 0), append(s.coords, x)
			}
			continue
		}
		x, err := parseVec3(e.val, rd)
		if err != nil {
			return nil, coordErr(m.key+"."+e.key, err)
		}
		s.species, s.counts, s.coords = append(s.species, sym), append(s.counts, 0), append(s.coords, x)
	}
	return s, nil
}

// readSpeciesList reads the species: a list of symbols, a text ("Sr Zr O
// O O"), or counts by element ({"Sr": 1, "Zr": 1, "O": 3}).
func readSpeciesList(m kv, rd *reading) ([]string, []int, error) {
	v := bytes.TrimSpace(m.val)
	var tokens []string
	switch {
	case len(v) > 0 && v[0] == '[':
		var list []json.RawMessage
		_ = json.Unmarshal(v, &list)
		if len(list) > crystal.MaxReadSites {
			return nil, nil, fmt.Errorf("%w: %d species, more than %d", crystal.ErrTooManySites, len(list), crystal.MaxReadSites)
		}
		out := make([]string, len(list))
		counts := make([]int, len(list))
		for i, e := range list {
			field := fmt.Sprintf("%s[%d]", m.key, i)
			var s string
			if json.Unmarshal(e, &s) != nil {
				sym, err := siteElement(e, field)
				if err != nil {
					return nil, nil, err
				}
				out[i] = sym
				continue
			}
			sym, n, ok := elementSymbol(s)
			if !ok {
				return nil, nil, decodeErr(codeUnknownElement, field, "%q is not an element", s)
			}
			if sym != s {
				rd.adapt("species_notation")
			}
			out[i], counts[i] = sym, n
		}
		return out, counts, nil
	case len(v) > 0 && v[0] == '"':
		var s string
		_ = json.Unmarshal(v, &s)
		tokens = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' })
		rd.adapt("species_as_text")
	case len(v) > 0 && v[0] == '{':
		ms, _ := members(v)
		var out []string
		for _, e := range ms {
			sym, _, ok := elementSymbol(e.key)
			if !ok {
				return nil, nil, decodeErr(codeUnknownElement, m.key+"."+e.key, "%q is not an element", e.key)
			}
			n, _, err := parseNumber(e.val, plain)
			if err != nil || n < 1 || n != math.Trunc(n) || n > crystal.MaxReadSites {
				return nil, nil, decodeErr(codeBadNumber, m.key+"."+e.key, "want a whole number of atoms, got %s", strings.TrimSpace(string(e.val)))
			}
			for k := 0; k < int(n); k++ {
				out = append(out, sym)
			}
		}
		rd.adapt("species_as_counts")
		return out, make([]int, len(out)), nil
	default:
		return nil, nil, decodeErr(codeBadJSON, m.key, "want a list of element symbols, got %s", kindOf(v))
	}
	out := make([]string, len(tokens))
	counts := make([]int, len(tokens))
	for i, t := range tokens {
		sym, n, ok := elementSymbol(t)
		if !ok {
			return nil, nil, decodeErr(codeUnknownElement, fmt.Sprintf("%s[%d]", m.key, i), "%q is not an element", t)
		}
		out[i], counts[i] = sym, n
	}
	return out, counts, nil
}

// readCoordList reads the coordinates: a list of triples, or a flat list
// of 3n numbers.
func readCoordList(m kv, nSpecies int, rd *reading) ([]crystal.Vec3, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(m.val, &list); err != nil {
		var s string
		if json.Unmarshal(m.val, &s) == nil { // "0 0 0; 0.5 0.5 0.5"
			for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == '\n' || r == '|' }) {
				list = append(list, mustJSON(part))
			}
		}
		if len(list) == 0 {
			return nil, decodeErr(codeBadCoords, m.key, "want a list of fractional coordinates [x, y, z], got %s", kindOf(m.val))
		}
	}
	if len(list) > crystal.MaxReadSites {
		return nil, fmt.Errorf("%w: %d coordinates, more than %d", crystal.ErrTooManySites, len(list), crystal.MaxReadSites)
	}
	if allNumberLike(list) && len(list)%3 == 0 && (len(list) > 3 || nSpecies == 1) {
		rd.adapt("coords_flat")
		var out []crystal.Vec3
		for i := 0; i < len(list); i += 3 {
			x, err := parseVec3(mustJSON(list[i:i+3]), rd)
			if err != nil {
				return nil, coordErr(fmt.Sprintf("%s[%d]", m.key, i), err)
			}
			out = append(out, x)
		}
		return out, nil
	}
	out := make([]crystal.Vec3, len(list))
	for i, e := range list {
		x, err := parseVec3(e, rd)
		if err != nil {
			return nil, coordErr(fmt.Sprintf("%s[%d]", m.key, i), err)
		}
		out[i] = x
	}
	return out, nil
}

// expandSpecies makes species match n coordinates when the answer gave
// them in short: with counts ("Sr", "Zr", "O3": one Sr, one Zr, three O),
// or once per element in the order of a formula whose atoms, times a
// whole number of formula units, are the n coordinates ("Sr", "Zr", "O"
// with five coordinates and formula SrZrO3). The coordinates are then
// taken to be grouped by element in that order, as models list them.
func expandSpecies(s *sites, n int, formula string) ([]string, bool) {
	total := 0
	for _, c := range s.counts {
		total += max(c, 1)
	}
	if total == n {
		var out []string
		for i, sym := range s.species {
			for k := 0; k < max(s.counts[i], 1); k++ {
				out = append(out, sym)
			}
		}
		return out, true
	}
	if formula == "" {
		return nil, false
	}
	comp, err := crystal.ParseFormula(formula)
	if err != nil || comp.Len() != len(s.species) {
		return nil, false
	}
	atoms := comp.NumAtoms()
	units := float64(n) / atoms
	if units < 1 || units != math.Trunc(units) {
		return nil, false
	}
	var out []string
	for _, sym := range s.species {
		e, err := crystal.ElementBySymbol(sym)
		if err != nil || !comp.Contains(e) {
			return nil, false
		}
		k := comp.Amount(e) * units
		if k != math.Trunc(k) {
			return nil, false
		}
		for j := 0; j < int(k); j++ {
			out = append(out, sym)
		}
	}
	return out, len(out) == n
}
