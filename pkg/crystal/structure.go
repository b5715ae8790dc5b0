package crystal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math"
)

// ErrBadStructure is returned for structures that cannot describe a crystal:
// mismatched site lists, coordinates that are not finite, no sites.
var ErrBadStructure = errors.New("bad structure")

// amuPerA3ToGPerCm3 converts a density in u/Å³ to g/cm³ (1 u = 1.66053906660
// × 10⁻²⁴ g, CODATA 2018; 1 Å³ = 10⁻²⁴ cm³).
const amuPerA3ToGPerCm3 = 1.66053906660

// Structure is an ordered periodic crystal: a lattice and sites, each an
// element at fractional coordinates. Crucible handles ordered structures
// only; partial occupancies are rejected where structures are read.
type Structure struct {
	Lattice Lattice
	Species []Element
	Frac    []Vec3
}

// NewStructure builds a structure and checks that it is well formed: as many
// coordinates as species, at least one site, valid elements and finite
// coordinates. Coordinates are kept as given (not wrapped).
func NewStructure(l Lattice, species []Element, frac []Vec3) (*Structure, error) {
	if l.vol == 0 {
		return nil, fmt.Errorf("%w: lattice not set", ErrBadStructure)
	}
	if len(species) != len(frac) {
		return nil, fmt.Errorf("%w: %d species but %d coordinates", ErrBadStructure, len(species), len(frac))
	}
	if len(species) == 0 {
		return nil, fmt.Errorf("%w: no sites", ErrBadStructure)
	}
	for i, e := range species {
		if !e.Valid() {
			return nil, fmt.Errorf("%w: site %d: %w: atomic number %d", ErrBadStructure, i, ErrUnknownElement, int(e))
		}
		for k, x := range frac[i] {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: site %d coordinate %d is %v", ErrBadStructure, i, k, x)
			}
		}
	}
	return &Structure{
		Lattice: l,
		Species: append([]Element(nil), species...),
		Frac:    append([]Vec3(nil), frac...),
	}, nil
}

// NumSites is the number of atoms in the cell.
func (s *Structure) NumSites() int { return len(s.Species) }

// Copy returns a deep copy.
func (s *Structure) Copy() *Structure {
	return &Structure{
		Lattice: s.Lattice,
		Species: append([]Element(nil), s.Species...),
		Frac:    append([]Vec3(nil), s.Frac...),
	}
}

// Identical reports whether s and t are the same structure number for
// number: lattice, and species and fractional coordinates site by site.
func (s *Structure) Identical(t *Structure) bool {
	if s.Lattice.Matrix() != t.Lattice.Matrix() || len(s.Species) != len(t.Species) || len(s.Frac) != len(t.Frac) {
		return false
	}
	for i := range s.Species {
		if s.Species[i] != t.Species[i] || s.Frac[i] != t.Frac[i] {
			return false
		}
	}
	return true
}

// exactHashSeed keys ExactHash; any seed does, within a process.
var exactHashSeed = maphash.MakeSeed()

// ExactHash hashes what Identical compares, for maps of structures; its
// values agree only within one process.
func (s *Structure) ExactHash() uint64 {
	var h maphash.Hash
	h.SetSeed(exactHashSeed)
	var b [8]byte
	word := func(x uint64) {
		binary.LittleEndian.PutUint64(b[:], x)
		h.Write(b[:])
	}
	for _, row := range s.Lattice.Matrix() {
		for _, x := range row {
			word(math.Float64bits(x))
		}
	}
	for i, e := range s.Species {
		word(uint64(e))
		for _, x := range s.Frac[i] {
			word(math.Float64bits(x))
		}
	}
	return h.Sum64()
}

// Composition counts the atoms of each element in the cell, elements in
// order of first appearance.
func (s *Structure) Composition() Composition {
	var c Composition
	counts := make(map[Element]int, 8)
	order := make([]Element, 0, 8)
	for _, e := range s.Species {
		if counts[e] == 0 {
			order = append(order, e)
		}
		counts[e]++
	}
	c.items = make([]ElementAmount, len(order))
	for i, e := range order {
		c.items[i] = ElementAmount{e, float64(counts[e])}
	}
	return c
}

// Volume is the cell volume in Å³.
func (s *Structure) Volume() float64 { return s.Lattice.Volume() }

// VolumePerAtom is the cell volume divided by the number of sites (Å³/atom).
func (s *Structure) VolumePerAtom() float64 { return s.Volume() / float64(len(s.Species)) }

// Density is the mass density in g/cm³.
func (s *Structure) Density() float64 {
	mass := 0.0
	for _, e := range s.Species {
		mass += e.Mass()
	}
	return mass * amuPerA3ToGPerCm3 / s.Volume()
}

// Cartesian returns the Cartesian position (Å) of site i.
func (s *Structure) Cartesian(i int) Vec3 { return s.Lattice.Cartesian(s.Frac[i]) }

// wrap maps a fractional coordinate into [0, 1).
func wrap(x float64) float64 {
	x -= math.Floor(x)
	if x >= 1 { // -1e-17 - floor(-1e-17) rounds to 1
		x = 0
	}
	return x
}

// Wrapped returns a copy with every fractional coordinate in [0, 1).
func (s *Structure) Wrapped() *Structure {
	w := s.Copy()
	for i := range w.Frac {
		for k := range w.Frac[i] {
			w.Frac[i][k] = wrap(w.Frac[i][k])
		}
	}
	return w
}

// Supercell returns the na × nb × nc supercell; sites are ordered by
// original site, then by translation, and coordinates lie in [0, 1).
func (s *Structure) Supercell(na, nb, nc int) (*Structure, error) {
	if na < 1 || nb < 1 || nc < 1 {
		return nil, fmt.Errorf("%w: supercell multipliers %d×%d×%d must be positive", ErrBadStructure, na, nb, nc)
	}
	m := s.Lattice.Matrix()
	for k, n := range []int{na, nb, nc} {
		for j := 0; j < 3; j++ {
			m[k][j] *= float64(n)
		}
	}
	l, err := NewLattice(m)
	if err != nil {
		return nil, err
	}
	n := len(s.Species) * na * nb * nc
	species := make([]Element, 0, n)
	frac := make([]Vec3, 0, n)
	for i, f := range s.Frac {
		for a := 0; a < na; a++ {
			for b := 0; b < nb; b++ {
				for c := 0; c < nc; c++ {
					species = append(species, s.Species[i])
					frac = append(frac, Vec3{
						(wrap(f[0]) + float64(a)) / float64(na),
						(wrap(f[1]) + float64(b)) / float64(nb),
						(wrap(f[2]) + float64(c)) / float64(nc),
					})
				}
			}
		}
	}
	return &Structure{Lattice: l, Species: species, Frac: frac}, nil
}

// ScaledToVolume returns a copy whose lattice is scaled isotropically to
// the given cell volume (Å³); fractional coordinates are unchanged.
func (s *Structure) ScaledToVolume(volume float64) (*Structure, error) {
	if !(volume > 0) || math.IsInf(volume, 0) {
		return nil, fmt.Errorf("%w: target volume %v must be positive", ErrBadStructure, volume)
	}
	l, err := s.Lattice.Scaled(math.Cbrt(volume / s.Volume()))
	if err != nil {
		return nil, err
	}
	out := s.Copy()
	out.Lattice = l
	return out, nil
}
