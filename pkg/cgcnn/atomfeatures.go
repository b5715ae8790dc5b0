package cgcnn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// ErrAtomFeatures is returned for an atom feature table that cannot be used.
var ErrAtomFeatures = errors.New("bad CGCNN atom feature table")

// AtomFeatures is CGCNN's initial atom representation: a fixed vector per
// element, read from atom_init.json (92 one-hot-encoded properties per
// element in the published file: group, period, electronegativity,
// covalent radius, valence electrons, first ionisation energy, electron
// affinity, block, atomic volume; Xie & Grossman 2018, Table S2).
type AtomFeatures struct {
	length int
	vec    [crystal.MaxZ + 1][]float64 // by atomic number; nil where absent
}

// LoadAtomFeatures reads atom_init.json.
func LoadAtomFeatures(path string) (*AtomFeatures, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cgcnn: %w", err)
	}
	defer f.Close()
	a, err := ReadAtomFeatures(f)
	if err != nil {
		return nil, fmt.Errorf("cgcnn: %s: %w", path, err)
	}
	return a, nil
}

// maxTableZ is the heaviest element a feature table may list (oganesson);
// entries beyond crystal.MaxZ are accepted and ignored.
const maxTableZ = 118

// ReadAtomFeatures reads a table in the format of atom_init.json: a JSON
// object from atomic number (as a string) to a feature vector, every
// vector of the same length.
func ReadAtomFeatures(r io.Reader) (*AtomFeatures, error) {
	var raw map[string][]float64
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAtomFeatures, err)
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: no elements", ErrAtomFeatures)
	}
	a := &AtomFeatures{length: -1}
	for key, v := range raw {
		z, err := strconv.Atoi(key)
		if err != nil || z < 1 || z > maxTableZ {
			return nil, fmt.Errorf("%w: key %q is not an atomic number 1–%d", ErrAtomFeatures, key, maxTableZ)
		}
		if a.length < 0 {
			a.length = len(v)
		}
		if len(v) != a.length || len(v) == 0 {
			return nil, fmt.Errorf("%w: element %d has %d features, others %d", ErrAtomFeatures, z, len(v), a.length)
		}
		for i, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: element %d feature %d is %v", ErrAtomFeatures, z, i, x)
			}
		}
		if z <= crystal.MaxZ { // heavier elements cannot occur in a crystal.Structure
			a.vec[z] = v
		}
	}
	return a, nil
}

// Len is the number of features per element.
func (a *AtomFeatures) Len() int { return a.length }

// Has reports whether the table covers element e.
func (a *AtomFeatures) Has(e crystal.Element) bool {
	return e.Valid() && a.vec[e] != nil
}

// Of returns the feature vector of element e, or nil if the table does not
// cover it. The slice aliases the table.
func (a *AtomFeatures) Of(e crystal.Element) []float64 {
	if !e.Valid() {
		return nil
	}
	return a.vec[e]
}
