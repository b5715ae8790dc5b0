package evolve

import (
	"math/rand/v2"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// parent is a Parent built in a prototype; id is the formula.
func parent(t testing.TB, formula, proto string, props map[string]float64) Parent {
	t.Helper()
	return Parent{ID: formula, Structure: crystaltest.Build(t, proto, formula), Properties: props}
}

// wideGap is LLEMA's "Stable Wide-Bandgap Semiconductors" task.
func wideGap(t testing.TB) task.Task {
	t.Helper()
	tk, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// testGeneration prepares a generation over the given parents (successes).
func testGeneration(t testing.TB, tk task.Task, seed uint64, ps ...Parent) *generation {
	t.Helper()
	return newGeneration(new(Generator), Input{Task: tk, Successes: ps, Slots: 2, RNG: rand.New(rand.NewPCG(seed, 1))})
}

// movesOf runs operator op of generation g on its parents (in order).
func movesOf(t testing.TB, g *generation, op string) []move {
	t.Helper()
	for _, o := range operators {
		if o.name == op {
			if len(g.parents) < o.arity {
				t.Fatalf("%s needs %d parents, have %d", op, o.arity, len(g.parents))
			}
			return g.movesOf(o, g.parents[:max(o.arity, 1)])
		}
	}
	if op == OpScratch {
		return g.movesOf(scratchOperator, nil)
	}
	t.Fatalf("no operator %s", op)
	return nil
}

// formulas returns the reduced formulas of moves, and by formula the
// prototypes they are built in.
func formulas(ms []move) map[string][]string {
	out := map[string][]string{}
	for _, m := range ms {
		f := m.comp.ReducedFormula()
		out[f] = append(out[f], m.proto)
	}
	return out
}

// buildValid builds m and reports whether it passes crystal.Validate.
func buildValid(t testing.TB, m move) (*crystal.Structure, bool) {
	t.Helper()
	s, err := m.build()
	if err != nil {
		t.Logf("%s: build: %v", m.comp.ReducedFormula(), err)
		return nil, false
	}
	rep, err := crystal.Validate(s, crystal.ValidityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid() {
		t.Logf("%s (%s): %v", m.comp.ReducedFormula(), m.op, rep.Reasons())
	}
	if !s.Composition().SameReduced(m.comp) {
		t.Errorf("%s: built %s", m.comp.ReducedFormula(), s.Composition().ReducedFormula())
	}
	return s, rep.Valid()
}
