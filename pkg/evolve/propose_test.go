package evolve

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

// pools returns a few successes and failures for the wide-gap task, with
// evaluated properties.
func pools(t testing.TB) (successes, failures []Parent) {
	successes = []Parent{
		parent(t, "MgO", "rocksalt", map[string]float64{"band_gap": 4.5, "formation_energy_per_atom": -3.0, "e_above_hull": 0}),
		parent(t, "AlN", "wurtzite", map[string]float64{"band_gap": 4.1, "formation_energy_per_atom": -1.6, "e_above_hull": 0}),
		parent(t, "MgAl2O4", "spinel", map[string]float64{"band_gap": 5.2, "formation_energy_per_atom": -3.3, "e_above_hull": 0.02}),
	}
	for i := range successes {
		successes[i].Feasible, successes[i].Score = true, 0.8-0.1*float64(i)
	}
	failures = []Parent{
		parent(t, "ZnSe", "zincblende", map[string]float64{"band_gap": 1.2, "formation_energy_per_atom": -0.8, "e_above_hull": 0}),
		parent(t, "SrTiO3", "perovskite", map[string]float64{"band_gap": 1.8, "formation_energy_per_atom": -3.4, "e_above_hull": 0}),
		parent(t, "FeO", "rocksalt", map[string]float64{"band_gap": 0.1, "formation_energy_per_atom": -1.4, "e_above_hull": 0.15}),
	}
	for i := range failures {
		failures[i].Score = -0.2 - 0.1*float64(i)
	}
	return successes, failures
}

// checkProposals verifies everything Propose promises about its output.
func checkProposals(t *testing.T, in Input, out []Proposal) {
	t.Helper()
	if len(out) > in.Slots {
		t.Errorf("%d proposals for %d slots", len(out), in.Slots)
	}
	ids := map[string]bool{}
	for _, p := range append(slices.Clone(in.Successes), in.Failures...) {
		ids[p.ID] = true
	}
	fps, formulas := map[string]bool{}, map[string]bool{}
	for _, p := range out {
		if p.Structure == nil {
			t.Fatalf("%s: no structure", p.Formula)
		}
		rep, err := crystal.Validate(p.Structure, crystal.ValidityOptions{})
		if err != nil || !rep.Valid() {
			t.Errorf("%s (%s) invalid: %v %v", p.Formula, p.Operator, err, rep.Reasons())
		}
		comp := p.Structure.Composition()
		if r := in.Task.Check(comp); len(r) > 0 {
			t.Errorf("%s breaks the element rules: %v", p.Formula, r)
		}
		if in.Allowed != nil && !in.Allowed(comp) {
			t.Errorf("%s not allowed", p.Formula)
		}
		if p.Formula != comp.ReducedFormula() {
			t.Errorf("formula %s, structure %s", p.Formula, comp.ReducedFormula())
		}
		fp, err := crystal.Fingerprint(p.Structure)
		switch {
		case p.Fingerprint == "" && (in.SeenFormula == nil || in.SeenFormula(p.Formula) || p.Known):
			t.Errorf("%s: no fingerprint, although its formula is known or seen", p.Formula)
		case p.Fingerprint != "" && (err != nil || fp != p.Fingerprint):
			t.Errorf("%s: fingerprint %s, recomputed %s (%v)", p.Formula, p.Fingerprint, fp, err)
		}
		if fps[fp] {
			t.Errorf("%s: duplicate structure", p.Formula)
		}
		fps[fp] = true
		if formulas[p.Formula] && !p.Known {
			t.Errorf("%s proposed twice", p.Formula)
		}
		formulas[p.Formula] = true
		if in.Seen != nil && in.Seen(fp) {
			t.Errorf("%s: seen structure proposed", p.Formula)
		}
		if known := in.Known != nil && in.Known(p.Formula); known != p.Known {
			t.Errorf("%s: Known %v, reference says %v", p.Formula, p.Known, known)
		}
		if p.Rule != ruleOf(p.Operator) || p.Rationale == "" || p.Operator == "" {
			t.Errorf("%s: operator %q rule %d rationale %q", p.Formula, p.Operator, p.Rule, p.Rationale)
		}
		for _, id := range p.Parents {
			if !ids[id] {
				t.Errorf("%s: parent %q not in the pools", p.Formula, id)
			}
		}
	}
}

func TestProposeProperties(t *testing.T) {
	successes, failures := pools(t)
	var tasks []task.Task
	for _, name := range []string{"Stable Wide-Bandgap Semiconductors", "Solid-State Electrolytes", "Photovoltaic Absorbers", "Toxic_Free_Perovskite_Oxide"} {
		tk, err := task.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, tk)
	}
	total := 0
	for seed := uint64(0); seed < 48; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		in := Input{Task: tasks[seed%uint64(len(tasks))], Slots: 1 + int(seed%4), RNG: rng}
		// A random sample of the pools, sometimes empty.
		for _, p := range successes {
			if rng.IntN(2) == 0 {
				in.Successes = append(in.Successes, p)
			}
		}
		for _, p := range failures {
			if rng.IntN(2) == 0 {
				in.Failures = append(in.Failures, p)
			}
		}
		if seed%3 == 1 {
			in.Rules = rng.Perm(len(Rules))[:6]
		}
		if seed%5 == 2 {
			in.Known = func(f string) bool { return len(f) <= 4 }
		}
		out, rej := Propose(in)
		checkProposals(t, in, out)
		if len(rej) > 2*in.Slots+2 {
			t.Errorf("seed %d: %d rejections", seed, len(rej))
		}
		for _, r := range rej {
			if len(r.Reasons) == 0 {
				t.Errorf("seed %d: rejection of %s without reasons", seed, r.Proposal.Formula)
			}
		}
		if len(out) < in.Slots {
			t.Logf("seed %d (%s): %d of %d slots filled", seed, in.Task.Name, len(out), in.Slots)
		}
		total += len(out)
	}
	if total < 48 {
		t.Errorf("only %d proposals over 48 generations", total)
	}
}

func TestProposeFillsSlots(t *testing.T) {
	successes, failures := pools(t)
	for seed := uint64(0); seed < 10; seed++ {
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 2, RNG: rand.New(rand.NewPCG(seed, 3))}
		if seed > 0 {
			in.Rules = rand.New(rand.NewPCG(seed, 4)).Perm(len(Rules))[:6]
		}
		out, _ := Propose(in)
		checkProposals(t, in, out)
		if len(out) != 2 {
			t.Errorf("seed %d: %d proposals", seed, len(out))
		}
	}
}

func TestProposeDeterministic(t *testing.T) {
	successes, failures := pools(t)
	run := func(seed uint64) []string {
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 4,
			Rules: []int{0, 1, 4, 9, 10, 12}, RNG: rand.New(rand.NewPCG(seed, 0))}
		out, rej := Propose(in)
		var keys []string
		for _, p := range out {
			keys = append(keys, p.Fingerprint+" "+p.Operator+" "+p.Rationale)
		}
		for _, r := range rej {
			keys = append(keys, "rejected "+r.Proposal.Formula+" "+strings.Join(r.Reasons, "; "))
		}
		return keys
	}
	a, b := run(11), run(11)
	if !slices.Equal(a, b) {
		t.Errorf("same seed, different proposals:\n%v\n%v", a, b)
	}
	differ := false
	for seed := uint64(12); seed < 16; seed++ {
		differ = differ || !slices.Equal(a, run(seed))
	}
	if !differ {
		t.Error("every seed gives the same proposals")
	}
}

func TestProposeRespectsAllowed(t *testing.T) {
	successes, failures := pools(t)
	banned := []crystal.Element{crystal.MustElement("Ca"), crystal.MustElement("Zn"), crystal.MustElement("Ga"), crystal.MustElement("Mg")}
	allowed := func(c crystal.Composition) bool {
		return !slices.ContainsFunc(banned, c.Contains)
	}
	for seed := uint64(0); seed < 8; seed++ {
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 3, Allowed: allowed, RNG: rand.New(rand.NewPCG(seed, 5))}
		out, rej := Propose(in)
		checkProposals(t, in, out)
		for _, r := range rej {
			if c, err := crystal.ParseFormula(r.Proposal.Formula); err == nil && !allowed(c) {
				t.Errorf("disallowed %s tried and returned as a rejection", r.Proposal.Formula)
			}
		}
		if len(out) == 0 {
			t.Errorf("seed %d: nothing proposed", seed)
		}
	}
	// Nothing allowed: nothing proposed, no panic.
	in := Input{Task: wideGap(t), Successes: successes, Slots: 2, Allowed: func(crystal.Composition) bool { return false }}
	if out, rej := Propose(in); len(out) != 0 || len(rej) != 0 {
		t.Errorf("%d proposals, %d rejections with nothing allowed", len(out), len(rej))
	}
}

func TestProposeEmptyPools(t *testing.T) {
	for _, name := range []string{"Stable Wide-Bandgap Semiconductors", "Solid-State Electrolytes", "Photovoltaic Absorbers"} {
		tk, err := task.ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		in := Input{Task: tk, Slots: 4, RNG: rand.New(rand.NewPCG(1, 1)), Rules: []int{0}}
		out, _ := Propose(in)
		checkProposals(t, in, out)
		if len(out) != 4 {
			t.Errorf("%s: %d proposals from scratch", name, len(out))
		}
		for _, p := range out {
			if p.Operator != OpScratch || len(p.Parents) != 0 || p.Rule != 9 || p.Prototype == "" {
				t.Errorf("%s: %+v", p.Formula, p)
			}
		}
	}
}

func TestProposePrefersNovelCompositions(t *testing.T) {
	successes, failures := pools(t)
	// Every binary is "known": the generation should find novel ternaries.
	binaries := func(f string) bool {
		c, err := crystal.ParseFormula(f)
		return err == nil && c.Len() <= 2
	}
	in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 4, Known: binaries, RNG: rand.New(rand.NewPCG(2, 2))}
	out, _ := Propose(in)
	checkProposals(t, in, out)
	if len(out) != 4 {
		t.Fatalf("%d proposals", len(out))
	}
	for _, p := range out {
		if p.Known {
			t.Errorf("known %s proposed while novel ones exist", p.Formula)
		}
	}
	// Everything known: known compositions in new structures are proposed
	// rather than nothing.
	in.Known = func(string) bool { return true }
	out, _ = Propose(in)
	checkProposals(t, in, out)
	if len(out) == 0 {
		t.Fatal("nothing proposed when everything is known")
	}
	for _, p := range out {
		if !p.Known {
			t.Errorf("%s not marked known", p.Formula)
		}
	}
}

func TestProposeSkipsSeenStructures(t *testing.T) {
	successes, _ := pools(t)
	in := Input{Task: wideGap(t), Successes: successes, Slots: 2, Seen: func(string) bool { return true }}
	if out, _ := Propose(in); len(out) != 0 {
		t.Errorf("%d proposals although every structure is seen", len(out))
	}
	var seen []string
	in.Seen = func(fp string) bool { return slices.Contains(seen, fp) }
	in.RNG = rand.New(rand.NewPCG(9, 9))
	first, _ := Propose(in)
	for _, p := range first {
		seen = append(seen, p.Fingerprint)
	}
	in.RNG = rand.New(rand.NewPCG(9, 9))
	second, _ := Propose(in)
	checkProposals(t, in, second)
	if len(second) == 0 {
		t.Error("nothing new proposed")
	}
}

// TestProposeFingerprintsOnlyWhenNeeded: a campaign of generations
// proposes the same structures whether every proposal is fingerprinted or
// only those of formulas the campaign has seen (with a store that, like
// the real one, fingerprints earlier structures of a formula on demand),
// and the second computes fewer fingerprints.
func TestProposeFingerprintsOnlyWhenNeeded(t *testing.T) {
	successes, failures := pools(t)
	parentFormulas := map[string]bool{}
	for _, p := range append(slices.Clone(successes), failures...) {
		parentFormulas[p.Structure.Composition().ReducedFormula()] = true
	}
	type record struct{ formula, fp, rationale string }
	campaign := func(lazy bool) (out [][]record, keyed int) {
		gen := new(Generator)
		var proposed []Proposal
		// seen is the store's side: fingerprints of every structure of a
		// formula, those proposed without one computed when a query first
		// needs them.
		seen := map[string]bool{}
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 3,
			Rules: []int{0, 1, 4, 9, 10, 12}, RNG: rand.New(rand.NewPCG(5, 5))}
		in.Seen = func(fp string) bool {
			f, _ := crystal.FingerprintFormula(fp)
			for i, p := range proposed {
				if p.Formula == f && p.Fingerprint == "" {
					k, err := crystal.Fingerprint(p.Structure)
					if err != nil {
						t.Fatal(err)
					}
					seen[k] = true
					proposed[i].Fingerprint = k
				}
			}
			return seen[fp]
		}
		if lazy {
			in.SeenFormula = func(f string) bool {
				return slices.ContainsFunc(proposed, func(p Proposal) bool { return p.Formula == f })
			}
			// As the proposer does, for the structures it proposed
			// without a fingerprint.
			in.SeenStructure = func(s *crystal.Structure) bool {
				return slices.ContainsFunc(proposed, func(p Proposal) bool { return p.Fingerprint == "" && p.Structure.Identical(s) })
			}
		}
		for g := 0; g < 12; g++ {
			props, _ := gen.Propose(in)
			checkProposals(t, in, props)
			var recs []record
			for _, p := range props {
				recs = append(recs, record{p.Formula, p.Fingerprint, p.Rationale})
				if p.Fingerprint != "" {
					keyed++
					seen[p.Fingerprint] = true
				} else if parentFormulas[p.Formula] {
					t.Errorf("%s, a parent's formula, proposed without a fingerprint", p.Formula)
				}
			}
			proposed = append(proposed, props...)
			out = append(out, recs)
		}
		return out, keyed
	}
	eager, keyedEager := campaign(false)
	lazy, keyedLazy := campaign(true)
	if len(eager) != len(lazy) {
		t.Fatalf("%d generations eager, %d lazy", len(eager), len(lazy))
	}
	total := 0
	for g := range eager {
		total += len(eager[g])
		if len(eager[g]) != len(lazy[g]) {
			t.Fatalf("generation %d: %d proposals eager, %d lazy", g, len(eager[g]), len(lazy[g]))
		}
		for i, e := range eager[g] {
			l := lazy[g][i]
			if e.formula != l.formula || e.rationale != l.rationale || (l.fp != "" && l.fp != e.fp) {
				t.Errorf("generation %d proposal %d: eager %+v, lazy %+v", g, i, e, l)
			}
		}
	}
	if keyedEager != total || keyedLazy >= keyedEager || total < 20 {
		t.Errorf("%d proposals, %d fingerprinted eagerly, %d lazily: want all, then fewer", total, keyedEager, keyedLazy)
	}
	t.Logf("%d proposals; fingerprinted %d lazily", total, keyedLazy)
}

func TestProposeRulesRestrictOperators(t *testing.T) {
	successes, failures := pools(t)
	for i, r := range Rules {
		if len(r.Operators) == 0 {
			continue
		}
		in := Input{Task: wideGap(t), Successes: successes, Failures: failures, Slots: 2, Rules: []int{i}, RNG: rand.New(rand.NewPCG(uint64(i), 0))}
		out, _ := Propose(in)
		checkProposals(t, in, out)
		for _, p := range out {
			if !slices.Contains(r.Operators, p.Operator) && p.Rule != r.Number {
				// Only when the rule's operators ran dry may others step in.
				t.Logf("rule %d: %s from %s", r.Number, p.Formula, p.Operator)
			}
		}
		if len(out) > 0 && !slices.ContainsFunc(out, func(p Proposal) bool { return slices.Contains(r.Operators, p.Operator) }) &&
			r.Number != 6 && r.Number != 10 { // no coordination change or property deficit may apply
			t.Errorf("rule %d: no proposal from its operators %v", r.Number, r.Operators)
		}
	}
}

func TestProposeBadInput(t *testing.T) {
	tk := wideGap(t)
	if out, rej := Propose(Input{Task: tk, Slots: 0}); out != nil || rej != nil {
		t.Error("proposals for zero slots")
	}
	bad := []Parent{
		{ID: "nil"},
		{ID: "empty", Structure: &crystal.Structure{}},
	}
	in := Input{Task: tk, Successes: bad, Failures: bad, Slots: 2}
	out, _ := Propose(in)
	checkProposals(t, in, out)
	if len(out) != 2 {
		t.Errorf("%d proposals with unusable parents (should build from scratch)", len(out))
	}
	// An intermetallic parent has no ionic assignment: the charge-based
	// operators pass, the generation still succeeds or returns nothing,
	// without panicking.
	in = Input{Task: tk, Successes: []Parent{parent(t, "NiAl", "cscl", nil)}, Slots: 2}
	out, _ = Propose(in)
	checkProposals(t, in, out)
	// A task that allows no anion: nothing can be built, and the
	// generation ends.
	metals := tk
	metals.Elements = task.ElementRules{AllowedOnly: []string{"Fe", "Ni", "Al"}}
	in = Input{Task: metals, Slots: 2}
	if out, _ := Propose(in); len(out) != 0 {
		t.Errorf("%d proposals from metals only", len(out))
	}
}

func BenchmarkPropose(b *testing.B) {
	successes, failures := pools(b)
	tk := wideGap(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := Input{Task: tk, Successes: successes[:2], Failures: failures[:2], Slots: 2,
			Rules: []int{0, 1, 4, 9, 10, 12}, RNG: rand.New(rand.NewPCG(uint64(i), 0))}
		if out, _ := Propose(in); len(out) == 0 {
			b.Fatal("nothing proposed")
		}
	}
}

// BenchmarkGeneratorPropose: generations of a campaign (recurring parents,
// a growing seen set) on one long-lived Generator, as the proposer runs
// them.
func BenchmarkGeneratorPropose(b *testing.B) {
	inputs := generationInputs(b, 40)
	var gen Generator
	seen := map[string]bool{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out, _ := gen.Propose(inputs[i%len(inputs)](func(fp string) bool { return seen[fp] }))
		for _, p := range out {
			seen[p.Fingerprint] = true
		}
	}
}
