package crystal

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrFormulaMismatch is returned when a candidate's formula and its species
// describe different compositions (their reduced formulas differ). It is an
// expected outcome of an LLM answer, to be recorded rather than crashed on.
var ErrFormulaMismatch = errors.New("formula does not match species")

// Candidate is a structure in the format LLM proposers answer in (LLEMA,
// Abhyankar et al. 2025, §3 "Crystallographic Representation": the reduced
// formula, lattice parameters, atomic species and fractional coordinates):
//
//	{"formula": "NaCl",
//	 "lattice": {"a": 5.64, "b": 5.64, "c": 5.64, "alpha": 90, "beta": 90, "gamma": 90},
//	 "species": ["Na", "Cl"],
//	 "coords":  [[0, 0, 0], [0.5, 0.5, 0.5]],
//	 "rationale": "…", "rule": "…"}
//
// The lattice may also be a 3×3 matrix whose rows are a, b, c in Å.
// Rationale and Rule are free text carried along for the record.
//
// Decoding (json.Unmarshal or ParseCandidateJSON) is strict about shape:
// formula, lattice, species and coords are required, each coordinate is
// exactly three numbers, and errors wrap ErrBadStructureJSON and name the
// field. Unknown fields are ignored.
type Candidate struct {
	Formula   string           `json:"formula"`
	Lattice   CandidateLattice `json:"lattice"`
	Species   []string         `json:"species"`
	Coords    []Vec3           `json:"coords"`
	Rationale string           `json:"rationale,omitempty"`
	Rule      string           `json:"rule,omitempty"`
}

// CandidateLattice is a cell given either as a matrix or by its parameters;
// exactly one of the two is set.
type CandidateLattice struct {
	Matrix     *[3][3]float64     // rows a, b, c in Å
	Parameters *LatticeParameters // lengths in Å, angles in degrees
}

// LatticeParameters are a cell's lengths (Å) and angles (degrees): α between
// b and c, β between a and c, γ between a and b.
type LatticeParameters struct {
	A     float64 `json:"a"`
	B     float64 `json:"b"`
	C     float64 `json:"c"`
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	Gamma float64 `json:"gamma"`
}

// Lattice builds the lattice: the matrix as given, or the parameters in
// pymatgen's orientation (LatticeFromParameters).
func (cl CandidateLattice) Lattice() (Lattice, error) {
	switch {
	case cl.Matrix != nil:
		return NewLattice(*cl.Matrix)
	case cl.Parameters != nil:
		p := cl.Parameters
		return LatticeFromParameters(p.A, p.B, p.C, p.Alpha, p.Beta, p.Gamma)
	}
	return Lattice{}, fmt.Errorf("%w: no matrix or parameters", ErrBadLattice)
}

// MarshalJSON writes the matrix, or else the parameters.
func (cl CandidateLattice) MarshalJSON() ([]byte, error) {
	switch {
	case cl.Matrix != nil:
		return json.Marshal(cl.Matrix)
	case cl.Parameters != nil:
		return json.Marshal(cl.Parameters)
	}
	return nil, fmt.Errorf("%w: lattice: no matrix or parameters", ErrBadStructureJSON)
}

// UnmarshalJSON reads a 3×3 matrix or an object with all six of a, b, c,
// alpha, beta, gamma.
func (cl *CandidateLattice) UnmarshalJSON(data []byte) error {
	v, err := parseCandidateLattice(data)
	if err != nil {
		return err
	}
	*cl = v
	return nil
}

func parseCandidateLattice(raw json.RawMessage) (CandidateLattice, error) {
	trimmed := strings.TrimSpace(string(raw))
	switch {
	case strings.HasPrefix(trimmed, "["):
		m, err := jsonMatrix3(raw, "lattice")
		if err != nil {
			return CandidateLattice{}, err
		}
		return CandidateLattice{Matrix: &m}, nil
	case strings.HasPrefix(trimmed, "{"):
		obj, err := jsonObject(raw, "lattice")
		if err != nil {
			return CandidateLattice{}, err
		}
		var p LatticeParameters
		for _, f := range []struct {
			name string
			dst  *float64
		}{{"a", &p.A}, {"b", &p.B}, {"c", &p.C}, {"alpha", &p.Alpha}, {"beta", &p.Beta}, {"gamma", &p.Gamma}} {
			v, ok := obj[f.name]
			if !ok {
				return CandidateLattice{}, fieldError("lattice."+f.name, "missing")
			}
			if *f.dst, err = jsonNumber(v, "lattice."+f.name); err != nil {
				return CandidateLattice{}, err
			}
		}
		return CandidateLattice{Parameters: &p}, nil
	}
	return CandidateLattice{}, fieldError("lattice", "want a 3×3 matrix (rows a, b, c in Å) or {a, b, c, alpha, beta, gamma}")
}

// UnmarshalJSON decodes a candidate strictly (see Candidate).
func (c *Candidate) UnmarshalJSON(data []byte) error {
	obj, err := jsonObject(data, "candidate")
	if err != nil {
		return err
	}
	var out Candidate
	for _, name := range []string{"formula", "lattice", "species", "coords"} {
		if _, ok := obj[name]; !ok {
			return fieldError(name, "missing")
		}
	}
	if err := json.Unmarshal(obj["formula"], &out.Formula); err != nil || strings.TrimSpace(out.Formula) == "" {
		return fieldError("formula", "want a non-empty string")
	}
	if out.Lattice, err = parseCandidateLattice(obj["lattice"]); err != nil {
		return err
	}
	var species []json.RawMessage
	if err := json.Unmarshal(obj["species"], &species); err != nil || species == nil {
		return fieldError("species", "want an array of element symbols")
	}
	if len(species) > MaxReadSites {
		return fmt.Errorf("%w: %d species, more than %d", ErrTooManySites, len(species), MaxReadSites)
	}
	out.Species = make([]string, len(species))
	for i, raw := range species {
		if err := json.Unmarshal(raw, &out.Species[i]); err != nil || string(raw) == "null" {
			return fieldError(fmt.Sprintf("species[%d]", i), fmt.Sprintf("want an element symbol, got %s", cifQuote(string(raw))))
		}
	}
	var coords []json.RawMessage
	if err := json.Unmarshal(obj["coords"], &coords); err != nil || coords == nil {
		return fieldError("coords", "want an array of fractional coordinates [x, y, z]")
	}
	if len(coords) > MaxReadSites {
		return fmt.Errorf("%w: %d coordinates, more than %d", ErrTooManySites, len(coords), MaxReadSites)
	}
	out.Coords = make([]Vec3, len(coords))
	for i, raw := range coords {
		if out.Coords[i], err = jsonVec3(raw, fmt.Sprintf("coords[%d]", i)); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"rationale", &out.Rationale}, {"rule", &out.Rule}} {
		if raw, ok := obj[f.name]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, f.dst); err != nil {
				return fieldError(f.name, "want a string")
			}
		}
	}
	*c = out
	return nil
}

// Structure builds the candidate's structure and checks it against its
// formula. Errors name the field: species[i] for an unknown element,
// "species and coords" for a length mismatch, lattice for a degenerate
// cell, formula for one that does not parse; a formula whose reduced
// composition differs from the species' is ErrFormulaMismatch.
func (c *Candidate) Structure() (*Structure, error) {
	if len(c.Species) != len(c.Coords) {
		return nil, fmt.Errorf("%w: species and coords: %d species but %d coordinates", ErrBadStructureJSON, len(c.Species), len(c.Coords))
	}
	if len(c.Species) == 0 {
		return nil, fieldError("species", "no sites")
	}
	if len(c.Species) > MaxReadSites {
		return nil, fmt.Errorf("%w: %d sites, more than %d", ErrTooManySites, len(c.Species), MaxReadSites)
	}
	lat, err := c.Lattice.Lattice()
	if err == nil {
		err = requireFiniteVolume(lat)
	}
	if err != nil {
		return nil, fmt.Errorf("lattice: %w", err)
	}
	species := make([]Element, len(c.Species))
	for i, sym := range c.Species {
		if species[i], err = ElementBySymbol(sym); err != nil {
			return nil, fmt.Errorf("species[%d]: %w", i, err)
		}
	}
	s, err := NewStructure(lat, species, c.Coords)
	if err == nil {
		err = requireFinitePositions(s, "coords")
	}
	if err != nil {
		return nil, fmt.Errorf("coords: %w", err)
	}
	claimed, err := ParseFormula(c.Formula)
	if err != nil {
		return nil, fmt.Errorf("formula: %w", err)
	}
	if actual := s.Composition(); !claimed.SameReduced(actual) {
		return nil, fmt.Errorf("%w: formula %q is %s but the species give %s",
			ErrFormulaMismatch, c.Formula, claimed.ReducedFormula(), actual.ReducedFormula())
	}
	return s, nil
}

// ParseCandidateJSON decodes one candidate (see Candidate) and builds its
// structure. The candidate is returned whenever the JSON has the right
// shape, so that its rationale and rule can be recorded with a structure
// error; the structure is nil on any error.
func ParseCandidateJSON(data []byte) (*Candidate, *Structure, error) {
	var c Candidate
	if err := json.Unmarshal(data, &c); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, nil, fmt.Errorf("%w: invalid JSON at byte %d: %v", ErrBadStructureJSON, syn.Offset, syn)
		}
		return nil, nil, err
	}
	s, err := c.Structure()
	if err != nil {
		return &c, nil, err
	}
	return &c, s, nil
}

// CandidateFromStructure describes s in the candidate format, for prompts:
// the reduced formula, the lattice parameters (lengths in Å, angles in
// degrees), the element symbols and the fractional coordinates as stored.
func CandidateFromStructure(s *Structure) Candidate {
	a, b, cc, alpha, beta, gamma := s.Lattice.Parameters()
	c := Candidate{
		Formula: s.Composition().ReducedFormula(),
		Lattice: CandidateLattice{Parameters: &LatticeParameters{A: a, B: b, C: cc, Alpha: alpha, Beta: beta, Gamma: gamma}},
		Species: make([]string, len(s.Species)),
		Coords:  append([]Vec3(nil), s.Frac...),
	}
	for i, e := range s.Species {
		c.Species[i] = e.Symbol()
	}
	return c
}
