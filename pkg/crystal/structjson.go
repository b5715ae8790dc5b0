package crystal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// ErrBadStructureJSON is returned for JSON that does not describe a
// structure in the expected shape: a missing or mistyped field, a matrix
// that is not 3×3, a coordinate that is not three numbers. The message names
// the field ("sites[3].abc", "coords[2]").
var ErrBadStructureJSON = errors.New("bad structure JSON")

// pymatgen's Structure.as_dict() layout (pymatgen.core.structure, 2022.11).
type pmgStructure struct {
	Module  string     `json:"@module"`
	Class   string     `json:"@class"`
	Charge  float64    `json:"charge"`
	Lattice pmgLattice `json:"lattice"`
	Sites   []pmgSite  `json:"sites"`
}

type pmgLattice struct {
	Matrix [3][3]float64 `json:"matrix"`
	PBC    [3]bool       `json:"pbc"`
	A      float64       `json:"a"`
	B      float64       `json:"b"`
	C      float64       `json:"c"`
	Alpha  float64       `json:"alpha"`
	Beta   float64       `json:"beta"`
	Gamma  float64       `json:"gamma"`
	Volume float64       `json:"volume"`
}

type pmgSite struct {
	Species    []pmgSpecies   `json:"species"`
	ABC        Vec3           `json:"abc"`
	XYZ        Vec3           `json:"xyz"`
	Label      string         `json:"label"`
	Properties map[string]any `json:"properties"`
}

type pmgSpecies struct {
	Element string  `json:"element"`
	Occu    float64 `json:"occu"`
}

// ParsePymatgenJSON reads a structure serialised by pymatgen's
// Structure.as_dict() (or MontyEncoder): lattice.matrix (rows a, b, c in Å)
// and sites, each with species [{element, occu, oxidation_state?}] and abc
// (fractional; xyz, Cartesian in Å, is used when abc is absent). Oxidation
// states, labels and site properties are accepted and dropped. A site whose
// species do not make one fully occupied element (occupancy below 1 −
// CIFOccupancyTolerance, or several species) is ErrPartialOccupancy; a
// lattice that is not periodic along all three axes is rejected. Shape
// errors wrap ErrBadStructureJSON and name the field; sites keep the order of
// the file, coordinates are kept as given.
func ParsePymatgenJSON(data []byte) (*Structure, error) {
	top, err := jsonObject(data, "structure")
	if err != nil {
		return nil, err
	}
	if raw, ok := top["@class"]; ok {
		var class string
		if err := json.Unmarshal(raw, &class); err != nil {
			return nil, fieldError("@class", "want a string")
		}
		if class != "Structure" && class != "IStructure" {
			return nil, fmt.Errorf("%w: @class is %q, want Structure", ErrBadStructureJSON, class)
		}
	}
	rawLat, ok := top["lattice"]
	if !ok {
		return nil, fieldError("lattice", "missing (a pymatgen Structure has a lattice)")
	}
	lat, err := parsePymatgenLattice(rawLat)
	if err != nil {
		return nil, err
	}
	rawSites, ok := top["sites"]
	if !ok {
		return nil, fieldError("sites", "missing")
	}
	var sites []json.RawMessage
	if err := json.Unmarshal(rawSites, &sites); err != nil {
		return nil, fieldError("sites", "want an array of sites")
	}
	if len(sites) > MaxReadSites {
		return nil, fmt.Errorf("%w: %d sites, more than %d", ErrTooManySites, len(sites), MaxReadSites)
	}
	species := make([]Element, len(sites))
	frac := make([]Vec3, len(sites))
	for i, raw := range sites {
		species[i], frac[i], err = parsePymatgenSite(raw, i, lat)
		if err != nil {
			return nil, err
		}
	}
	s, err := NewStructure(lat, species, frac)
	if err != nil {
		return nil, err
	}
	if err := requireFinitePositions(s, "sites"); err != nil {
		return nil, err
	}
	return s, nil
}

// requireFinitePositions rejects coordinates so large (1e300) that their
// Cartesian positions overflow; field names the list in messages.
func requireFinitePositions(s *Structure, field string) error {
	for i := range s.Frac {
		for _, x := range s.Cartesian(i) {
			if math.IsInf(x, 0) || math.IsNaN(x) {
				return fmt.Errorf("%w: %s[%d]: fractional coordinates %v overflow in Cartesian space", ErrBadStructure, field, i, s.Frac[i])
			}
		}
	}
	return nil
}

func parsePymatgenLattice(raw json.RawMessage) (Lattice, error) {
	obj, err := jsonObject(raw, "lattice")
	if err != nil {
		return Lattice{}, err
	}
	rawM, ok := obj["matrix"]
	if !ok {
		return Lattice{}, fieldError("lattice.matrix", "missing")
	}
	m, err := jsonMatrix3(rawM, "lattice.matrix")
	if err != nil {
		return Lattice{}, err
	}
	if rawPBC, ok := obj["pbc"]; ok {
		var pbc []bool
		if err := json.Unmarshal(rawPBC, &pbc); err != nil || len(pbc) != 3 {
			return Lattice{}, fieldError("lattice.pbc", "want three booleans")
		}
		if !pbc[0] || !pbc[1] || !pbc[2] {
			return Lattice{}, fmt.Errorf("%w: lattice.pbc is %v; only structures periodic in three dimensions are crystals", ErrBadStructureJSON, pbc)
		}
	}
	l, err := NewLattice(m)
	if err == nil {
		err = requireFiniteVolume(l)
	}
	if err != nil {
		return Lattice{}, fmt.Errorf("lattice.matrix: %w", err)
	}
	return l, nil
}

func parsePymatgenSite(raw json.RawMessage, i int, lat Lattice) (Element, Vec3, error) {
	name := fmt.Sprintf("sites[%d]", i)
	obj, err := jsonObject(raw, name)
	if err != nil {
		return 0, Vec3{}, err
	}
	rawSp, ok := obj["species"]
	if !ok {
		return 0, Vec3{}, fieldError(name+".species", "missing")
	}
	var species []map[string]json.RawMessage
	if err := json.Unmarshal(rawSp, &species); err != nil {
		return 0, Vec3{}, fieldError(name+".species", "want an array of {element, occu}")
	}
	if len(species) == 0 {
		return 0, Vec3{}, fieldError(name+".species", "empty")
	}
	if len(species) > 1 {
		return 0, Vec3{}, fmt.Errorf("%w: %s is shared by %d species (a disordered site); Crucible handles ordered structures only",
			ErrPartialOccupancy, name, len(species))
	}
	field := name + ".species[0]"
	var sym string
	if err := json.Unmarshal(species[0]["element"], &sym); err != nil || sym == "" {
		return 0, Vec3{}, fieldError(field+".element", "want an element symbol")
	}
	el, err := ElementBySymbol(sym)
	if err != nil {
		return 0, Vec3{}, fmt.Errorf("%s.element: %w", field, err)
	}
	occu := 1.0 // pymatgen always writes occu; tolerate its absence
	if rawOcc, ok := species[0]["occu"]; ok {
		if err := json.Unmarshal(rawOcc, &occu); err != nil {
			return 0, Vec3{}, fieldError(field+".occu", "want a number")
		}
	}
	if math.Abs(occu-1) > CIFOccupancyTolerance {
		return 0, Vec3{}, fmt.Errorf("%w: %s (%s) has occupancy %g; Crucible handles ordered structures only", ErrPartialOccupancy, name, el, occu)
	}
	if rawABC, ok := obj["abc"]; ok {
		f, err := jsonVec3(rawABC, name+".abc")
		return el, f, err
	}
	if rawXYZ, ok := obj["xyz"]; ok {
		c, err := jsonVec3(rawXYZ, name+".xyz")
		return el, lat.Fractional(c), err
	}
	return 0, Vec3{}, fieldError(name+".abc", "missing (and no xyz)")
}

// MarshalPymatgenJSON writes s as pymatgen's Structure.as_dict() does, so
// that Structure.from_dict (and ParsePymatgenJSON) read it: @module,
// @class, charge 0, the lattice (matrix, pbc, a, b, c, alpha, beta, gamma,
// volume) and the sites (species [{element, occu: 1}], abc, xyz, label,
// properties {}).
func MarshalPymatgenJSON(s *Structure) ([]byte, error) {
	if s == nil || s.NumSites() == 0 || len(s.Frac) != len(s.Species) || s.Volume() == 0 {
		return nil, fmt.Errorf("marshal pymatgen JSON: %w: empty or unset structure", ErrBadStructure)
	}
	a, b, c, alpha, beta, gamma := s.Lattice.Parameters()
	out := pmgStructure{
		Module: "pymatgen.core.structure",
		Class:  "Structure",
		Lattice: pmgLattice{
			Matrix: s.Lattice.Matrix(),
			PBC:    [3]bool{true, true, true},
			A:      a, B: b, C: c, Alpha: alpha, Beta: beta, Gamma: gamma,
			Volume: s.Volume(),
		},
		Sites: make([]pmgSite, len(s.Species)),
	}
	for i, e := range s.Species {
		if !e.Valid() {
			return nil, fmt.Errorf("marshal pymatgen JSON: %w: site %d: %w: atomic number %d", ErrBadStructure, i, ErrUnknownElement, int(e))
		}
		out.Sites[i] = pmgSite{
			Species:    []pmgSpecies{{Element: e.Symbol(), Occu: 1}},
			ABC:        s.Frac[i],
			XYZ:        s.Cartesian(i),
			Label:      e.Symbol(),
			Properties: map[string]any{},
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("marshal pymatgen JSON: %w", err)
	}
	return data, nil
}

// jsonObject decodes a JSON object into its fields.
func jsonObject(data []byte, field string) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, fmt.Errorf("%w: %s: invalid JSON at byte %d: %v", ErrBadStructureJSON, field, syn.Offset, syn)
		}
		return nil, fieldError(field, "want a JSON object")
	}
	return obj, nil
}

// jsonNumbers decodes an array of finite numbers.
func jsonNumbers(raw json.RawMessage, field string, n int) ([]float64, error) {
	var xs []json.RawMessage
	if err := json.Unmarshal(raw, &xs); err != nil || xs == nil {
		return nil, fieldError(field, fmt.Sprintf("want %d numbers", n))
	}
	if len(xs) != n {
		return nil, fieldError(field, fmt.Sprintf("want %d numbers, got %d values", n, len(xs)))
	}
	out := make([]float64, n)
	for i, x := range xs {
		v, err := jsonNumber(x, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// jsonNumber decodes one number (not null, not a string).
func jsonNumber(raw json.RawMessage, field string) (float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return 0, fieldError(field, fmt.Sprintf("want a number, got %s", cifQuote(string(raw))))
	}
	return v, nil
}

func jsonVec3(raw json.RawMessage, field string) (Vec3, error) {
	xs, err := jsonNumbers(raw, field, 3)
	if err != nil {
		return Vec3{}, err
	}
	return Vec3{xs[0], xs[1], xs[2]}, nil
}

func jsonMatrix3(raw json.RawMessage, field string) ([3][3]float64, error) {
	var rows []json.RawMessage
	var m [3][3]float64
	if err := json.Unmarshal(raw, &rows); err != nil || len(rows) != 3 {
		return m, fieldError(field, "want a 3×3 matrix (rows a, b, c)")
	}
	for i, r := range rows {
		v, err := jsonVec3(r, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return m, err
		}
		m[i] = v
	}
	return m, nil
}

func fieldError(field, msg string) error {
	return fmt.Errorf("%w: %s: %s", ErrBadStructureJSON, field, msg)
}
