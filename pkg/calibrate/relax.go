package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"sync"

	"github.com/crucible-sci/crucible/pkg/evolve"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TierRelax is the oracle tier that relaxes a candidate with the M3GNet
// potential and re-predicts the surrogates on the relaxed structure.
const TierRelax = "relax"

// RelaxOptions tune MeasureRelax.
type RelaxOptions struct {
	// Compounds is the number of known compounds relaxed (the relax tier
	// costs seconds of CPU per structure, so it is measured on a subset).
	Compounds int
	// Seed orders the formulas as Options.Seed does.
	Seed uint64
	// Workers relax in parallel (default 1).
	Workers int
}

// MeasureRelax adds the relax tier to c: the first Compounds known
// compounds with a reference formation energy (in the order of Measure's
// seed) are built as candidates are (evolve.BuildKnown), relaxed and
// evaluated as the relax tier evaluates a candidate
// (oracle.EvaluateRelaxed with surrogates alone: the M3GNet formation
// energy with MP's corrections, the CGCNN surrogates re-predicted on the
// relaxed structure), and compared with the reference values. The energy
// above hull takes the formation energy's errors, as in the screen. A
// compound the relax tier cannot relax is counted in Excluded
// ("not_relaxed"). surrogates must be an oracle without calibration, so
// that the values are raw.
func MeasureRelax(ctx context.Context, surrogates *oracle.Oracle, r *oracle.Relaxer, db *reference.DB, c *Calibration, opts RelaxOptions) error {
	if opts.Compounds <= 0 {
		return fmt.Errorf("calibrate relax: %d compounds", opts.Compounds)
	}
	opts.Workers = max(opts.Workers, 1)
	key := func(f string) uint64 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", opts.Seed, f)
		return h.Sum64()
	}
	var formulas []string
	for _, f := range uniqueSorted(db.Formulas()) {
		if _, ok := db.Property("formation_energy_per_atom", f); ok {
			formulas = append(formulas, f)
		}
	}
	slices.SortStableFunc(formulas, func(a, b string) int { return cmp.Compare(key(a), key(b)) })
	var items []evolve.Seed
	for _, f := range formulas {
		if len(items) == opts.Compounds {
			break
		}
		if s, ok := evolve.BuildKnown(f); ok {
			items = append(items, s)
		}
	}
	results := make([]*oracle.Result, len(items))
	var wg sync.WaitGroup
	next := make(chan int)
	for range opts.Workers {
		wg.Go(func() {
			for i := range next {
				res, _, err := surrogates.EvaluateRelaxed(ctx, r, oracle.Request{Structure: items[i].Structure})
				if err == nil {
					results[i] = &res
				}
			}
		})
	}
feed:
	for i := range items {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("calibrate relax: %w", err)
	}
	errs := map[string][]float64{}
	tier := Tier{Properties: map[string]Stats{}, Uncalibrated: map[string]string{}}
	notRelaxed := 0
	var measured []string
	for i, it := range items {
		res := results[i]
		if res == nil {
			notRelaxed++
			continue
		}
		measured = append(measured, it.Formula)
		for _, p := range calibrated {
			ref, ok := db.Property(p, it.Formula)
			v, ok2 := res.Properties[p]
			if !ok || !ok2 || (v.Source != oracle.SourceCGCNN && v.Source != oracle.SourceM3GNet) {
				continue
			}
			errs[p] = append(errs[p], v.Value-ref.Value)
		}
	}
	for _, p := range calibrated {
		if len(errs[p]) > 0 {
			st := statsOf(task.UnitOf(p), errs[p])
			if notRelaxed > 0 {
				st.Excluded = map[string]int{"not_relaxed": notRelaxed}
			}
			tier.Properties[p] = st
		}
	}
	if ef, ok := tier.Properties["formation_energy_per_atom"]; ok {
		ef.Derived = "formation_energy_per_atom"
		ef.Unit = task.UnitOf("e_above_hull")
		tier.Properties["e_above_hull"] = ef
	}
	for _, s := range surrogates.Surrogates() {
		if _, ok := tier.Properties[s.Property]; !ok {
			tier.Uncalibrated[s.Property] = "no reference values in the shipped tables, or not measured in the relax tier"
		}
	}
	for _, p := range oracle.OwnProperties() {
		tier.Uncalibrated[p] = "not measured in the relax tier: its values carry the model's cross-validated error"
	}
	sort.Strings(measured)
	c.Set.Relaxed = measured
	c.Tiers[TierRelax] = tier
	return nil
}
