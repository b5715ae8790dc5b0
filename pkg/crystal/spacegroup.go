package crystal

import "github.com/crucible-sci/crucible/pkg/spacegroup"

// SpaceGroup finds the space group of s (package spacegroup's Detect: the
// tolerances default to 0.01 Å and 5°), with atoms typed by element.
func (s *Structure) SpaceGroup(opt spacegroup.Options) (*spacegroup.Dataset, error) {
	frac := make([][3]float64, len(s.Frac))
	types := make([]int, len(s.Species))
	for i := range s.Frac {
		frac[i] = s.Frac[i]
		types[i] = int(s.Species[i])
	}
	return spacegroup.Detect(s.Lattice.Matrix(), frac, types, opt)
}

// SpaceGroupName is the number and symbol of s's space group at the
// tolerances of opt; nil when s is nil or no group can be found (a cell
// Detect refuses, a tolerance that finds no consistent group).
func (s *Structure) SpaceGroupName(opt spacegroup.Options) *spacegroup.Name {
	if s == nil {
		return nil
	}
	ds, err := s.SpaceGroup(opt)
	if err != nil {
		return nil
	}
	n := ds.Name()
	return &n
}
