package m3gnet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
)

// benchSystems are the golden Materials Project and COD structures of 8 to
// 100 atoms (golden/cgcnn/cifs), a fixed set of real crystals.
func benchSystems(b *testing.B) []*System {
	testModel(b)
	dir := filepath.Join(os.Getenv("CRUCIBLE_DATA"), "golden", "cgcnn", "cifs")
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Skip(err)
	}
	var out []*System
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "mp-") && !strings.HasPrefix(name, "icsd-") {
			continue
		}
		s, err := crystal.ReadFile(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		if n := s.NumSites(); n >= 8 && n <= 100 {
			out = append(out, FromStructure(s))
		}
	}
	if len(out) == 0 {
		b.Skip("no structures of 8–100 atoms")
	}
	return out
}

// BenchmarkEnergyForcesStress evaluates energy, forces and stress of each
// structure of the set in turn on one goroutine; atoms/s is the rate.
func BenchmarkEnergyForcesStress(b *testing.B) {
	systems := benchSystems(b)
	m := testModel(b)
	ws := NewWorkspace()
	var res Result
	atoms := 0
	for _, s := range systems {
		atoms += len(s.Pos)
		if err := m.Evaluate(ws, s, &res); err != nil { // warm the workspace
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range systems {
			if err := m.Evaluate(ws, s, &res); err != nil {
				b.Fatal(err)
			}
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N*len(systems))/sec, "structures/s")
	b.ReportMetric(float64(b.N*atoms)/sec, "atoms/s")
	b.ReportMetric(float64(len(systems)), "structures")
}
