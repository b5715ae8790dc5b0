package match

import (
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// BenchmarkMatchReduced times MatchReduced over the Materials Project
// pairs of the pymatgen fixture (structures reduced beforehand): one op is
// one pair, matching or not.
func BenchmarkMatchReduced(b *testing.B) {
	if dataDir(b) == "" {
		b.Skip("CRUCIBLE_DATA not set")
	}
	type pair struct{ a, b *Reduced }
	var pairs []pair
	for _, p := range readFixture(b) {
		if p.a[:5] == "hand:" || p.ta != "" || p.tb != "" {
			continue
		}
		pairs = append(pairs, pair{mustReduce(b, loadNamed(b, p.a), Options{}), mustReduce(b, loadNamed(b, p.b), Options{})})
	}
	i := 0
	for b.Loop() {
		p := pairs[i%len(pairs)]
		if _, err := MatchReduced(p.a, p.b, Options{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkReduce times Reduce over the structures of the MP pairs of the
// fixture: one op is one structure.
func BenchmarkReduce(b *testing.B) {
	if dataDir(b) == "" {
		b.Skip("CRUCIBLE_DATA not set")
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range readFixture(b) {
		for _, n := range []string{p.a, p.b} {
			if n[:5] != "hand:" && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	structs := make([]*crystal.Structure, 0, len(names))
	for _, n := range names {
		structs = append(structs, loadNamed(b, n))
	}
	i := 0
	for b.Loop() {
		s := structs[i%len(structs)]
		if _, err := Reduce(s, Options{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
