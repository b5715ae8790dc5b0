package match

import (
	"fmt"
	"strconv"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/spacegroup"
)

// Key is what two structures must share to match: the reduced formula and
// the number of sites of the primitive cell (Match compares the element
// counts of the primitive cells, so structures with different keys never
// match). An index of known structures compares a candidate only with the
// structures of its key.
type Key struct {
	Formula string
	Sites   int
}

// String writes "NaCl/2".
func (k Key) String() string { return k.Formula + "/" + strconv.Itoa(k.Sites) }

// Key returns the reduced structure's key. Reduce both structures with the
// same PrimitiveTol for keys to be comparable.
func (r *Reduced) Key() Key { return Key{Formula: r.formula, Sites: len(r.species)} }

// KeyOf reduces s (see Reduce) and returns its key.
func KeyOf(s *crystal.Structure, opt Options) (Key, error) {
	r, err := Reduce(s, opt)
	if err != nil {
		return Key{}, err
	}
	return r.Key(), nil
}

// SpaceGroup returns the ITA number of the reduced cell's space group at
// the given position tolerance (Å) and the default angle tolerance. It is
// a finer key than Key, but not one Match requires: a distortion within
// STol can lower the symmetry (a cubic cell strained by 5 % matches its
// unstrained self but is tetragonal), so pruning by space group loses
// such matches.
func (r *Reduced) SpaceGroup(symprec float64) (int, error) {
	frac := make([][3]float64, len(r.frac))
	types := make([]int, len(r.species))
	for i := range r.frac {
		frac[i] = r.frac[i]
		types[i] = int(r.species[i])
	}
	ds, err := spacegroup.Detect(r.lat, frac, types, spacegroup.Options{SymPrec: symprec})
	if err != nil {
		return 0, fmt.Errorf("match: space group of %s: %w", r.formula, err)
	}
	return ds.Number, nil
}
