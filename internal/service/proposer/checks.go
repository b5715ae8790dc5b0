package proposer

import (
	"fmt"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// CheckOptions tune the checks every proposal passes before it is
// published.
type CheckOptions struct {
	Validity crystal.ValidityOptions
}

// checker applies, to every generator's output, the structure's validity,
// the task's element, formula, anion and structure-family rules and the
// memory bank's directives. Directives
// are enforced here, in the environment, not merely shown to the
// generator (MADE §5.2–5.3).
type checker struct {
	spec       *messages.CampaignSpec
	directives []messages.Directive
	counts     map[string]int // evaluations per reduced formula so far
	pending    map[string]int // proposals per formula in this generation
	known      func(string) bool
	opts       CheckOptions
}

func newChecker(spec *messages.CampaignSpec, directives []messages.Directive, counts map[string]int, known func(string) bool, opts CheckOptions) *checker {
	return &checker{spec: spec, directives: directives, counts: counts, pending: map[string]int{}, known: known, opts: opts}
}

// check returns why a proposal may not be published (nothing when it may)
// and copies the generator's fingerprint to the candidate (the store
// computes the ones it needs that a generator left out).
func (k *checker) check(p Proposed, c *messages.Candidate) []messages.Reason {
	if p.Structure == nil {
		return []messages.Reason{{Code: "no_structure", Detail: "the generator returned no structure"}}
	}
	var reasons []messages.Reason
	opts := k.opts.Validity
	opts.ExpectedFormula = p.Formula
	rep, err := crystal.Validate(p.Structure, opts)
	if err != nil {
		return []messages.Reason{{Code: string(crystal.ReasonUnreadable), Detail: err.Error()}}
	}
	for _, f := range rep.Failed() {
		reasons = append(reasons, messages.Reason{Code: string(f.Code), Detail: f.Detail})
	}
	comp := p.Structure.Composition()
	for _, v := range k.spec.Task.Violations(p.Structure) {
		reasons = append(reasons, messages.Reason{Code: v.Rule, Detail: v.Detail})
	}
	formula := comp.ReducedFormula()
	system := comp.ChemicalSystem()
	for _, d := range k.directives {
		switch d.Kind {
		case messages.DirectiveExcludeElement:
			if e, err := crystal.ElementBySymbol(d.Element); err == nil && comp.Contains(e) {
				reasons = append(reasons, messages.Reason{Code: "directive", Detail: fmt.Sprintf("contains excluded element %s (%s)", d.Element, d.Reason)})
			}
		case messages.DirectiveAvoidSystem:
			if system == d.System {
				reasons = append(reasons, messages.Reason{Code: "directive", Detail: fmt.Sprintf("chemical system %s is to be avoided (%s)", system, d.Reason)})
			}
		case messages.DirectiveCapComposition:
			if formula == d.Formula && k.counts[formula]+k.pending[formula] >= d.Limit {
				reasons = append(reasons, messages.Reason{Code: "directive", Detail: fmt.Sprintf("%s reached its cap of %d queries (%s)", formula, d.Limit, d.Reason)})
			}
		}
	}
	if len(reasons) > 0 {
		return reasons
	}
	c.Fingerprint = p.Fingerprint
	k.pending[formula]++
	return nil
}
