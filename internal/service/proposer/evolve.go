package proposer

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// Evolve is the rule-based generator: LLEMA's chemistry rules as
// programmatic operators on the island's best and worst (pkg/evolve). With
// Baseline set it is instead the random-substitution baseline, for
// comparisons at equal budget. It keeps, across generations and campaigns,
// an evolve.Generator's memory of parents and builds, and a snapshot of each
// campaign's proposed fingerprints and formulas (a proposal of a formula
// the campaign has not seen goes without a fingerprint); it must not be
// copied after first use.
type Evolve struct {
	Store    *store.Store
	Known    func(string) bool
	Baseline bool

	gen  evolve.Generator
	seen seenCache
}

// Name implements Generator.
func (g *Evolve) Name() string {
	if g.Baseline {
		return "random"
	}
	return messages.GeneratorEvolve
}

// Propose implements Generator.
func (g *Evolve) Propose(ctx context.Context, in *Input) (*Output, error) {
	ein := evolve.Input{
		Task:      in.Spec.Task,
		Successes: parents(in.Successes),
		Failures:  parents(in.Failures),
		Slots:     in.Request.Slots,
		Rules:     in.Rules,
		Allowed:   allowed(in, g.Baseline),
		Known:     g.Known,
		RNG:       rand.New(rand.NewPCG(in.Seed, 0x5deece66d)),
	}
	if !g.Baseline {
		ein.Guidance = evolve.GuidanceFrom(in.Experiences, in.Directives)
	}
	seen, err := g.seen.set(ctx, g.Store, in.Spec.ID)
	if err != nil {
		return nil, err
	}
	ein.Seen, ein.SeenFormula, ein.SeenStructure = seen.has, seen.hasFormula, seen.hasStructure
	var props []evolve.Proposal
	var rejs []evolve.Rejection
	if g.Baseline {
		props, rejs = evolve.RandomSubstitution(ein)
	} else {
		props, rejs = g.gen.Propose(ein)
	}
	for _, p := range props {
		seen.add(p.Formula, p.Fingerprint, p.Structure)
	}
	out := &Output{}
	for _, p := range props {
		out.Candidates = append(out.Candidates, proposed(p))
	}
	for _, r := range rejs {
		rej := Rejected{Proposed: proposed(r.Proposal)}
		for _, reason := range r.Reasons {
			rej.Reasons = append(rej.Reasons, messages.Reason{Code: "generator", Detail: reason})
		}
		out.Rejected = append(out.Rejected, rej)
	}
	return out, nil
}

func proposed(p evolve.Proposal) Proposed {
	rule := ""
	if p.Rule > 0 {
		if r, err := evolve.RuleByNumber(p.Rule); err == nil {
			rule = strconv.Itoa(r.Number) + ". " + r.Name
		}
	}
	return Proposed{Structure: p.Structure, Fingerprint: p.Fingerprint, Parents: p.Parents, Operator: p.Operator, Rule: rule, Rationale: p.Rationale}
}

// parents converts pool members to the generator's parents; a member whose
// structure does not convert (it always does: it was validated) is skipped.
func parents(ms []store.Member) []evolve.Parent {
	out := make([]evolve.Parent, 0, len(ms))
	for _, m := range ms {
		s, err := m.Structure.Crystal()
		if err != nil {
			continue
		}
		props := m.Properties
		if m.EAboveHull != nil {
			props = make(map[string]float64, len(m.Properties)+1)
			for k, v := range m.Properties {
				props[k] = v
			}
			props["e_above_hull"] = *m.EAboveHull
		}
		out = append(out, evolve.Parent{ID: m.ID, Structure: s, Score: m.Score, Feasible: m.Feasible, Properties: props})
	}
	return out
}

// allowed applies the bank's element and system directives before
// anything is built; composition caps are left to the checker, which knows
// the counts. The evolve generator applies the task's element rules
// itself; withTask (the baseline) applies them here too, so that the
// baseline skips such compositions rather than recording them as
// rejections. Nil when nothing applies.
func allowed(in *Input, withTask bool) func(crystal.Composition) bool {
	n := 0
	for _, d := range in.Directives {
		if d.Kind == messages.DirectiveExcludeElement || d.Kind == messages.DirectiveAvoidSystem {
			n++
		}
	}
	if n == 0 && !withTask {
		return nil
	}
	return func(c crystal.Composition) bool {
		if withTask && len(in.Spec.Task.Check(c)) > 0 {
			return false
		}
		for _, d := range in.Directives {
			switch d.Kind {
			case messages.DirectiveExcludeElement:
				if e, err := crystal.ElementBySymbol(d.Element); err == nil && c.Contains(e) {
					return false
				}
			case messages.DirectiveAvoidSystem:
				if c.ChemicalSystem() == d.System {
					return false
				}
			}
		}
		return true
	}
}

// ReferenceSeeder seeds islands with known compounds of the reference data
// that best fit the task, built in the prototype library (LLEMA seeds its
// islands with a few known materials).
type ReferenceSeeder struct {
	DB *reference.DB
	// PerIsland is the number of seeds per island (default 2).
	PerIsland int

	once    sync.Once
	sources []evolve.SeedSource
}

// Seeds implements Seeder. The choice is deterministic for a campaign (its
// seed), so a redelivered submission publishes the same seeds.
func (r *ReferenceSeeder) Seeds(_ context.Context, spec *messages.CampaignSpec) ([]Proposed, error) {
	r.once.Do(func() {
		for _, f := range r.DB.Formulas() {
			props := map[string]float64{}
			for name, v := range r.DB.Properties(f) {
				props[name] = v.Value
			}
			r.sources = append(r.sources, evolve.SeedSource{Formula: f, Properties: props})
		}
	})
	per := r.PerIsland
	if per < 1 {
		per = 2
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x2545f4914f6cdd1d))
	var out []Proposed
	for _, s := range evolve.Seeds(spec.Task, r.sources, per*spec.Islands, rng) {
		out = append(out, Proposed{Structure: s.Structure, Operator: "seed", Rationale: s.Rationale})
	}
	return out, nil
}
