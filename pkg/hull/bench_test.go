package hull

import (
	"fmt"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/bench/cputime"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// loop runs f b.N times (b.Loop) and reports, besides the wall-clock
// ns/op, the process CPU time per operation in ms (cpu-ms/op), which other
// work on a shared machine does not inflate.
func loop(b *testing.B, f func()) {
	c0, ok := cputime.Process()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if c1, _ := cputime.Process(); ok && n > 0 {
		b.ReportMetric(float64(c1-c0)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
	}
}

// BenchmarkGolden builds each golden diagram and computes the energy above
// the hull of every entry and every query: the work pymatgen_seconds times
// (plus the queries). Compare with `crucible bench hull`.
func BenchmarkGolden(b *testing.B) {
	g := loadGolden(b)
	for _, sys := range g.Systems {
		entries := sys.entries(b)
		queries := make([]crystal.Composition, len(sys.Queries))
		for i, q := range sys.Queries {
			queries[i] = crystal.MustParseFormula(q.Formula)
		}
		b.Run(sys.name(), func(b *testing.B) {
			loop(b, func() {
				d, err := New(entries)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.Results(); err != nil {
					b.Fatal(err)
				}
				for i, c := range queries {
					if _, err := d.Query(c, sys.Queries[i].EForm); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// scalingCases are the synthetic systems of the scaling benchmarks:
// elements × entries.
var scalingCases = []struct{ dim, n int }{
	{4, 1000}, {4, 5000}, {4, 20000},
	{6, 1000}, {6, 5000}, {6, 20000},
	{8, 1000}, {8, 5000}, {8, 20000},
}

// BenchmarkBuild builds synthetic diagrams (entries of up to 4 elements)
// and reports the number of stable entries.
func BenchmarkBuild(b *testing.B) {
	for _, c := range scalingCases {
		entries := synthetic(b, c.dim, c.n, 4, 1)
		b.Run(fmt.Sprintf("elements=%d/entries=%d", c.dim, c.n), func(b *testing.B) {
			var d *Diagram
			loop(b, func() {
				var err error
				if d, err = New(entries); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(len(d.Stable())), "stable")
		})
	}
}

// BenchmarkBuildDense builds synthetic diagrams whose entries have up to 8
// elements: large subsystems, many vertices per programme.
func BenchmarkBuildDense(b *testing.B) {
	for _, n := range []int{1000, 5000, 20000} {
		entries := synthetic(b, 8, n, 8, 1)
		b.Run(fmt.Sprintf("elements=8/entries=%d", n), func(b *testing.B) {
			var d *Diagram
			loop(b, func() {
				var err error
				if d, err = New(entries); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(len(d.Stable())), "stable")
		})
	}
}

// BenchmarkResults computes every entry's energy above the hull of a built
// synthetic diagram.
func BenchmarkResults(b *testing.B) {
	for _, c := range scalingCases {
		d, err := New(synthetic(b, c.dim, c.n, 4, 1))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("elements=%d/entries=%d", c.dim, c.n), func(b *testing.B) {
			loop(b, func() {
				if _, err := d.Results(); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkQuery places one candidate of four elements in the 8-element,
// 20 000-entry synthetic diagram.
func BenchmarkQuery(b *testing.B) {
	d, err := New(synthetic(b, 8, 20000, 4, 1))
	if err != nil {
		b.Fatal(err)
	}
	c := crystal.MustParseFormula("LiFeMnO4")
	loop(b, func() {
		if _, err := d.Query(c, -1.5); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkAdd adds 2000 new entries, one Add each, to the 8-element,
// 20 000-entry synthetic diagram; the new entries are 0.5 eV/atom lower than
// the synthetic ones, so many become stable and displace others. It reports
// the time per Add (the rebuild of the diagram for each round is not
// timed).
func BenchmarkAdd(b *testing.B) {
	base := synthetic(b, 8, 20000, 4, 1)
	extra := synthetic(b, 8, 2000, 4, 2)
	for i := range extra {
		extra[i].ID = fmt.Sprintf("new-%d", i)
		extra[i].EnergyPerAtom -= 0.5
	}
	var cpu time.Duration
	var stable int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d, err := New(base)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0, _ := cputime.Process()
		for _, e := range extra {
			if err := d.Add(e); err != nil {
				b.Fatal(err)
			}
		}
		c1, _ := cputime.Process()
		cpu += c1 - c0
		stable = len(d.Stable())
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(extra)), "µs/add")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*len(extra)), "cpu-µs/add")
	b.ReportMetric(float64(stable), "stable")
}

// BenchmarkBuildConvex is the worst case for an output-sensitive method:
// formation energies on a convex surface, E = Σ_k x_k² − 1, so that every
// composition is a vertex of the hull.
func BenchmarkBuildConvex(b *testing.B) {
	for _, c := range []struct{ dim, n int }{{4, 5000}, {8, 5000}, {8, 20000}} {
		entries := synthetic(b, c.dim, c.n, 4, 3)
		for i := range entries {
			comp := entries[i].Composition
			e := -1.0
			for _, el := range comp.Elements() {
				f := comp.AtomicFraction(el)
				e += f * f
			}
			entries[i].EnergyPerAtom = e
		}
		b.Run(fmt.Sprintf("elements=%d/entries=%d", c.dim, c.n), func(b *testing.B) {
			var d *Diagram
			loop(b, func() {
				var err error
				if d, err = New(entries); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(len(d.Stable())), "stable")
		})
	}
}
