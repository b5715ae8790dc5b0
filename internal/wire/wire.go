// Package wire builds the production dependencies of the services from the
// data directory: the hierarchical oracle for evaluators, and the
// generators, seeder and reference lookup for proposers. The service
// binaries, `crucible local` and the benchmarks share it.
package wire

import (
	"errors"
	"fmt"
	"sync"

	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/calibrate"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// Oracle opens the hierarchical oracle of the data directory (CGCNN
// checkpoints, reference tables) for evaluators, with the screen tier's
// calibration when there is one (calibrate.ForData: CRUCIBLE_CALIBRATION,
// the data directory, the user cache); a calibration whose models differ
// from the data directory's is an error.
func Oracle(dataDir string, workers int) (*oracle.Oracle, evaluator.Oracle, error) {
	var names []string
	for _, s := range oracle.Surrogates() {
		names = append(names, s.Checkpoint)
	}
	cal, _, err := calibrate.ForData(dataDir, datadir.Models(dataDir), names)
	if err != nil {
		return nil, nil, err
	}
	o, err := oracle.Open(dataDir, oracle.Options{Workers: workers, Calibration: cal.ForOracle(calibrate.TierScreen)})
	if err != nil {
		return nil, nil, err
	}
	return o, evaluator.HierarchicalOracle{Oracle: o}, nil
}

// RelaxingOracle opens the hierarchical oracle and its relax tier (the
// M3GNet potential, MP's corrections and elemental references, with the
// relax tier's default options), in parallel, for evaluators with the
// relax role.
func RelaxingOracle(dataDir string, workers int) (*oracle.Oracle, evaluator.RelaxOracle, error) {
	var (
		o          *oracle.Oracle
		r          *oracle.Relaxer
		oErr, rErr error
		wg         sync.WaitGroup
	)
	wg.Go(func() { o, oErr = oracle.Open(dataDir, oracle.Options{Workers: workers}) })
	wg.Go(func() { r, rErr = oracle.OpenRelaxer(dataDir, oracle.RelaxOptions{}) })
	wg.Wait()
	if err := errors.Join(oErr, rErr); err != nil {
		return nil, nil, err
	}
	return o, evaluator.RelaxingOracle{HierarchicalOracle: evaluator.HierarchicalOracle{Oracle: o}, Relaxer: r}, nil
}

// Reference loads the reference tables alone (what a proposer needs).
func Reference(dataDir string) (*reference.DB, error) {
	var need []string
	for _, t := range reference.Tables() {
		need = append(need, datadir.TablesDir+"/"+t.File())
	}
	if err := datadir.Require(dataDir, need...); err != nil {
		return nil, fmt.Errorf("reference data: %w", err)
	}
	return reference.Load(datadir.Tables(dataDir))
}

// ProposerOptions choose the generators a proposer offers.
type ProposerOptions struct {
	// Baseline replaces the evolve generator by the random-substitution
	// baseline (for comparisons at equal budget).
	Baseline bool
	// LLM is the generator for campaigns with generator "llm"; nil leaves
	// them unsupported on this proposer.
	LLM proposer.Generator
}

// Proposer returns a proposer configuration over the reference data.
func Proposer(db *reference.DB, st *store.Store, o ProposerOptions) proposer.Config {
	known := func(f string) bool { return db.Known(f) }
	gens := map[string]proposer.Generator{
		messages.GeneratorEvolve: &proposer.Evolve{Store: st, Known: known, Baseline: o.Baseline},
	}
	if o.LLM != nil {
		gens[messages.GeneratorLLM] = o.LLM
	}
	return proposer.Config{
		Generators: gens,
		Seeder:     &proposer.ReferenceSeeder{DB: db},
		Known:      known,
		RuleCount:  len(evolve.Rules),
	}
}
