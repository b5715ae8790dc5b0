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
