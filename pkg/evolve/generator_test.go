package evolve

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/pkg/task"
)

// generationInputs is a sequence of generations as a campaign makes them:
// the pools change slowly, parents recur, the seen set grows with what was
// proposed. Two tasks share the sequence (a Generator serves several
// campaigns).
func generationInputs(t testing.TB, n int) []func(seen func(string) bool) Input {
	successes, failures := pools(t)
	var tasks []task.Task
	for _, name := range []string{"Stable Wide-Bandgap Semiconductors", "Solid-State Electrolytes"} {
		tk, err := task.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, tk)
	}
	var out []func(func(string) bool) Input
	for i := range n {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		k := 1 + i%len(successes)
		in := Input{Task: tasks[i%len(tasks)], Successes: successes[:k], Failures: failures[(i/2)%len(failures):], Slots: 2}
		if i%4 != 0 {
			in.Rules = rng.Perm(len(Rules))[:6]
		}
		if i%5 == 0 {
			in.Known = func(f string) bool { return f == "MgO" || f == "CaO" || f == "ZnO" }
		}
		out = append(out, func(seen func(string) bool) Input {
			in := in
			in.Seen = seen
			in.RNG = rand.New(rand.NewPCG(uint64(i), 11))
			return in
		})
	}
	return out
}

// summary writes what a generation returned, structure fingerprints
// included.
func summary(ps []Proposal, rs []Rejection) string {
	s := ""
	for _, p := range ps {
		s += fmt.Sprintf("%s %s %s %s %v %s %v|", p.Formula, p.Fingerprint, p.Operator, p.Prototype, p.Parents, p.Rationale, p.Known)
	}
	for _, r := range rs {
		s += fmt.Sprintf("rejected %s %s %v|", r.Proposal.Formula, r.Proposal.Rationale, r.Reasons)
	}
	return s
}

// A Generator's memory changes nothing: over a sequence of generations it
// proposes exactly what Propose, which remembers nothing, does.
func TestGeneratorProposesWhatProposeDoes(t *testing.T) {
	inputs := generationInputs(t, 40)
	var gen Generator
	seenA, seenB := map[string]bool{}, map[string]bool{}
	for i, input := range inputs {
		want, wantRej := Propose(input(func(fp string) bool { return seenA[fp] }))
		got, gotRej := gen.Propose(input(func(fp string) bool { return seenB[fp] }))
		if a, b := summary(want, wantRej), summary(got, gotRej); a != b {
			t.Fatalf("generation %d:\nPropose   %s\nGenerator %s", i, a, b)
		}
		for k, p := range got {
			if !reflect.DeepEqual(p.Structure, want[k].Structure) {
				t.Errorf("generation %d: %s built differently", i, p.Formula)
			}
			seenA[p.Fingerprint], seenB[p.Fingerprint] = true, true
		}
	}
	if len(gen.outcomes.young) == 0 || len(gen.tasks) != 2 {
		t.Errorf("the Generator remembered %d outcomes, %d tasks", len(gen.outcomes.young), len(gen.tasks))
	}
}

// Several goroutines may share a Generator (run with -race).
func TestGeneratorConcurrent(t *testing.T) {
	inputs := generationInputs(t, 24)
	want := make([]string, len(inputs))
	for i, input := range inputs {
		want[i] = summary(Propose(input(nil)))
	}
	var gen Generator
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := range inputs {
				i := (k + 5*w) % len(inputs)
				if got := summary(gen.Propose(inputs[i](nil))); got != want[i] {
					t.Errorf("worker %d, generation %d:\ngot  %s\nwant %s", w, i, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

func TestMemoForgetsOldEntries(t *testing.T) {
	var m memo[int, int]
	for i := range 10 {
		m.put(i, i*i, 4)
	}
	// The young map holds 8 and 9 (it turned over at 8), the old one 4–7.
	for i, want := range []bool{false, false, false, false, true, true, true, true, true, true} {
		v, ok := m.get(i)
		if ok != want || (ok && v != i*i) {
			t.Errorf("get(%d) = %d, %v; want present %v", i, v, ok, want)
		}
	}
}
