// Package wire builds the production dependencies of the services from the
// data directory: the hierarchical oracle for evaluators, and the
// generators, seeder and reference lookup for proposers. The service
// binaries, `crucible local` and the benchmarks share it.
package wire

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/crucible-sci/crucible/internal/modelclient"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/calibrate"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/modelserver"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// Oracle opens the hierarchical oracle of the data directory (CGCNN
// checkpoints, reference tables) for evaluators, with the screen tier's
// calibration when there is one (calibrate.ForData: CRUCIBLE_CALIBRATION,
// the data directory, the user cache; a calibration whose models differ
// from the data directory's is an error). Crucible's own surrogates are
// loaded when a task first needs them, and trained then into the model
// cache when the data directory has none (saying so on stderr).
func Oracle(dataDir string, workers int) (*oracle.Oracle, evaluator.Oracle, error) {
	return OracleWith(dataDir, workers, nil)
}

// OracleWith is Oracle with the plug-in model servers of the data
// directory's registry (pkg/modelserver), reached over the NATS connection conn
// returns when a candidate first needs them (nil: plug-ins get the
// no_responders warning).
func OracleWith(dataDir string, workers int, conn func() (*nats.Conn, error)) (*oracle.Oracle, evaluator.Oracle, error) {
	opts, err := oracleOptions(dataDir, workers, conn)
	if err != nil {
		return nil, nil, err
	}
	o, err := oracle.Open(dataDir, opts)
	if err != nil {
		return nil, nil, err
	}
	return o, evaluator.HierarchicalOracle{Oracle: o}, nil
}

// oracleOptions are the evaluators' oracle options: the screen tier's
// calibration, own surrogates trained on first use, the registry's plug-ins
// over conn.
func oracleOptions(dataDir string, workers int, conn func() (*nats.Conn, error)) (oracle.Options, error) {
	reg, err := modelserver.LoadRegistry(dataDir)
	if err != nil {
		return oracle.Options{}, err
	}
	if conn == nil {
		conn = func() (*nats.Conn, error) { return nil, errors.New("this process has no NATS connection for plug-ins") }
	}
	var names []string
	for _, s := range oracle.Surrogates() {
		names = append(names, s.Checkpoint)
	}
	cal, _, err := calibrate.ForData(dataDir, datadir.Models(dataDir), names)
	if err != nil {
		return oracle.Options{}, err
	}
	return oracle.Options{Workers: workers, TrainModels: true, ModelLog: logStderr, External: modelclient.Clients(conn, reg),
		Calibration: cal.ForOracle(calibrate.TierScreen), RelaxCalibration: cal.ForOracle(calibrate.TierRelax)}, nil
}

// Provided lists the properties the data directory's plug-ins provide
// (what a campaign may constrain beyond the built-in support).
func Provided(dataDir string) ([]string, error) {
	reg, err := modelserver.LoadRegistry(dataDir)
	if err != nil {
		return nil, err
	}
	return reg.Properties(), nil
}

func logStderr(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crucible: "+format+"\n", args...)
}

// RelaxingOracle opens the hierarchical oracle and its relax tier (the
// M3GNet potential, MP's corrections and elemental references, with the
// relax tier's default options), in parallel, for evaluators with the
// relax role.
func RelaxingOracle(dataDir string, workers int) (*oracle.Oracle, evaluator.RelaxOracle, error) {
	return RelaxingOracleWith(dataDir, workers, nil)
}

// RelaxingOracleWith is RelaxingOracle with the registry's plug-ins over
// conn (see OracleWith).
func RelaxingOracleWith(dataDir string, workers int, conn func() (*nats.Conn, error)) (*oracle.Oracle, evaluator.RelaxOracle, error) {
	opts, err := oracleOptions(dataDir, workers, conn)
	if err != nil {
		return nil, nil, err
	}
	var (
		o          *oracle.Oracle
		r          *oracle.Relaxer
		oErr, rErr error
		wg         sync.WaitGroup
	)
	wg.Go(func() { o, oErr = oracle.Open(dataDir, opts) })
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
	// Provided are the properties of the plug-in model servers (Provided).
	Provided []string
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
		Provided:   o.Provided,
	}
}
