// Package crystaltest holds test helpers for the packages that use
// pkg/crystal (pkg/crystal's own tests cannot import it).
package crystaltest

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// Build builds formula in the named prototype of the crystal library and
// fails the test if either is unknown or the build fails.
func Build(t testing.TB, proto, formula string) *crystal.Structure {
	t.Helper()
	p, err := crystal.PrototypeByName(proto)
	if err != nil {
		t.Fatal(err)
	}
	b, err := crystal.Build(p, crystal.MustParseFormula(formula))
	if err != nil {
		t.Fatal(err)
	}
	return b.Structure
}
