package evolve

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

func TestRandomSubstitution(t *testing.T) {
	successes, failures := pools(t)
	pv, err := task.ByName("Photovoltaic Absorbers")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for seed := uint64(0); seed < 24; seed++ {
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 2, RNG: rand.New(rand.NewPCG(seed, 2))}
		switch seed % 3 {
		case 1:
			in.Successes, in.Failures = nil, nil // from random prototypes
		case 2:
			in.Task = pv
		}
		out, rej := RandomSubstitution(in)
		checkProposals(t, in, out)
		total += len(out)
		for _, p := range out {
			if p.Operator != OpRandomSubstitution || p.Rule != 0 {
				t.Errorf("%s: operator %s rule %d", p.Formula, p.Operator, p.Rule)
			}
			if len(in.Successes)+len(in.Failures) > 0 {
				// One element changed: the parent's formula with one
				// element swapped.
				if len(p.Parents) != 1 {
					t.Errorf("%s: parents %v", p.Formula, p.Parents)
				}
			}
		}
		if len(rej) > 2*in.Slots+2 {
			t.Errorf("%d rejections", len(rej))
		}
	}
	if total < 36 {
		t.Errorf("only %d of 48 slots filled", total)
	}
	// Deterministic.
	run := func() []string {
		out, _ := RandomSubstitution(Input{Task: wideGap(t), Successes: successes, Slots: 3, RNG: rand.New(rand.NewPCG(5, 5))})
		var f []string
		for _, p := range out {
			f = append(f, p.Fingerprint)
		}
		return f
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Errorf("not deterministic: %v vs %v", a, b)
	}
}

func TestRandomSubstitutionIsUnguided(t *testing.T) {
	// Over many generations from MgO the baseline reaches elements no
	// chemistry operator would put on the Mg site of an oxide (any element
	// with a +2 common state, noble metals and p-block alike) and
	// substitutes the anion as often as the cation.
	mgo := []Parent{parent(t, "MgO", "rocksalt", nil)}
	elements := map[crystal.Element]bool{}
	anion := 0
	for seed := uint64(0); seed < 40; seed++ {
		out, _ := RandomSubstitution(Input{Task: wideGap(t), Successes: mgo, Slots: 2, RNG: rand.New(rand.NewPCG(seed, 9))})
		for _, p := range out {
			c := p.Structure.Composition()
			if !c.Contains(crystal.MustElement("O")) {
				anion++
			}
			for _, e := range c.Elements() {
				elements[e] = true
			}
		}
	}
	if len(elements) < 20 || anion == 0 {
		t.Errorf("%d elements reached, %d anion substitutions", len(elements), anion)
	}
}
