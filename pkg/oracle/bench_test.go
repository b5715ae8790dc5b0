package oracle

import (
	"context"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
)

// BenchmarkOpen measures loading the oracle: reference tables, seven CGCNN
// checkpoints and the hull cache's reference phases.
func BenchmarkOpen(b *testing.B) {
	dir := testbed.DataDir(b)
	for b.Loop() {
		if _, err := Open(dir, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluate measures a batch of eight prototype structures with
// stability, after the diagrams of their systems are cached.
func BenchmarkEvaluate(b *testing.B) {
	o := testOracle(b)
	cases := []struct{ proto, formula string }{
		{"rocksalt", "NaCl"}, {"rocksalt", "KI"}, {"perovskite", "BaZrO3"}, {"wurtzite", "ZnO"},
		{"perovskite", unknownFormula}, {"perovskite", "CsCaCl3"}, {"rutile", "SnO2"}, {"spinel", "MgAl2O4"},
	}
	var reqs []Request
	for _, c := range cases {
		reqs = append(reqs, Request{Structure: crystaltest.Build(b, c.proto, c.formula), Hull: true})
	}
	if _, err := o.Evaluate(context.Background(), reqs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := o.Evaluate(context.Background(), reqs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(reqs))/1e3, "µs/structure")
}
