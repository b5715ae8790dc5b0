package calibrate

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"

	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/surrogate"
)

// RunOptions are the settings of a whole calibration (Run).
type RunOptions struct {
	Options
	// Relax is how many known compounds the relax tier is measured on
	// (0: not measured).
	Relax int
	// Out is the file written (default DefaultOutput of the data directory).
	Out string
	// Log receives the training progress of missing own surrogates.
	Log func(format string, args ...any)
}

// Run measures every tier on the data directory d — the CGCNN surrogates,
// Crucible's own surrogates (trained first when missing) and, with
// o.Relax, the relax tier — and saves the calibration. It returns the
// calibration and the file written.
func Run(ctx context.Context, d string, o RunOptions) (*Calibration, string, error) {
	or, err := oracle.Open(d, oracle.Options{SurrogateOnly: true})
	if err != nil {
		return nil, "", err
	}
	c, err := Measure(ctx, or, or.Reference(), datadir.Models(d), o.Options)
	if err != nil {
		return nil, "", err
	}
	var own []*surrogate.Model
	for _, p := range surrogate.Properties() {
		m, _, err := surrogate.Ensure(p.Name, d, surrogate.EnsureOptions{Log: o.Log})
		if err != nil {
			return nil, "", err
		}
		own = append(own, m)
	}
	if err := MeasureOwn(ctx, or, own, d, c, o.Options); err != nil {
		return nil, "", err
	}
	if o.Relax > 0 {
		r, err := oracle.OpenRelaxer(d, oracle.RelaxOptions{})
		if err != nil {
			return nil, "", err
		}
		ro := RelaxOptions{Compounds: o.Relax, Seed: o.Seed, Workers: runtime.GOMAXPROCS(0)}
		if err := MeasureRelax(ctx, or, r, or.Reference(), c, ro); err != nil {
			return nil, "", err
		}
	}
	out := o.Out
	if out == "" {
		if out, err = DefaultOutput(d); err != nil {
			return nil, "", err
		}
	}
	return c, out, c.Save(out)
}

// WriteReport writes every tier's errors as a table, one property a line.
func (c *Calibration) WriteReport(w io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(c.Tiers)) {
		tier := c.Tiers[name]
		if name == TierScreen {
			fmt.Fprintf(w, "tier %s, %d compounds (set %s…)\n", name, len(c.Set.Formulas), c.Set.Checksum[:12])
		} else {
			fmt.Fprintf(w, "tier %s, %d compounds relaxed\n", name, len(c.Set.Relaxed))
		}
		fmt.Fprintf(w, "%-26s %5s %9s %9s %9s %9s  %s\n", "property", "n", "MAE", "bias", "q68", "q95", "unit")
		for _, p := range slices.Sorted(maps.Keys(tier.Properties)) {
			s := tier.Properties[p]
			unit := s.Unit
			if s.Log10 {
				unit = "log10 of " + cmp.Or(unit, "the value")
			}
			fmt.Fprintf(w, "%-26s %5d %9.4g %+9.3g %9.4g %9.4g  %s\n", p, s.N, s.MAE, s.Bias, s.Q68, s.Q95, unit)
			for _, why := range slices.Sorted(maps.Keys(s.Excluded)) {
				fmt.Fprintf(w, "%-26s %5d excluded: %s\n", "", s.Excluded[why], why)
			}
		}
	}
}
