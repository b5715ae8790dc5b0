package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/datadir"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/service/evaluator"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/reference"
	"github.com/crucible-sci/crucible/pkg/task"
)

func init() { registerBench(newBenchPipelineCmd) }

// pipelineReport is what bench pipeline measures.
type pipelineReport struct {
	GOMAXPROCS int `json:"gomaxprocs"`
	// OracleRate is (a): the oracle alone on the campaign's candidates, in
	// the evaluator's batches, structures/s.
	OracleRate float64 `json:"oracle_structures_per_second"`
	// PipelineRate is (b): evaluations/s of a campaign through all four
	// services with one evaluator, and its ratio to (a).
	PipelineRate  float64 `json:"pipeline_evaluations_per_second"`
	PipelineRatio float64 `json:"pipeline_over_oracle"`
	// Scaling is (c): evaluations/s with an artificial oracle delay per
	// candidate, by evaluator replicas, and the speed-up over one.
	Delay   string         `json:"delay"`
	Scaling []scalingPoint `json:"scaling"`
}

type scalingPoint struct {
	Evaluators int     `json:"evaluators"`
	Rate       float64 `json:"evaluations_per_second"`
	Speedup    float64 `json:"speedup"`
	Efficiency float64 `json:"efficiency"`
}

func newBenchPipelineCmd() *cobra.Command {
	var (
		data, replicas string
		budget, batch  int
		delay          time.Duration
		asJSON         bool
		cpuprofile     string
		inFlight       int
	)
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Throughput of the oracle alone, of the whole pipeline, and its scaling with evaluator replicas",
		Long: `pipeline measures, in one run on this machine:

 (a) the oracle alone (validity, reference lookup, CGCNN, hull) on the
     candidates of a campaign, in the evaluator's batches: structures/s;
 (b) a campaign through all four services in local mode (embedded NATS and
     Redis) with one evaluator: evaluations/s, and its ratio to (a);
 (c) the same with an artificial oracle cost per candidate (--delay,
     standing for a DFT-class oracle), with 1, 2, 4, 8 evaluator replicas:
     evaluations/s and the speed-up over one replica.

Rates are taken between the first and the last evaluation of the
campaign's proposed candidates, so start-up and seeds do not count.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if cpuprofile != "" {
				f, err := os.Create(cpuprofile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			if data == "" {
				var err error
				if data, err = datadir.Find(); err != nil {
					return err
				}
			}
			counts, err := parseInts(replicas)
			if err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--replicas: %w", err)}
			}
			_, orc, err := wire.Oracle(data, 0)
			if err != nil {
				return err
			}
			db, err := wire.Reference(data)
			if err != nil {
				return err
			}
			w := cmd.ErrOrStderr()
			rep := pipelineReport{GOMAXPROCS: runtime.GOMAXPROCS(0), Delay: delay.String()}

			fmt.Fprintf(w, "(b) pipeline, 1 evaluator, budget %d …\n", budget)
			res, rate, err := benchCampaign(ctx, orc, db, budget, 1, batch, 0, inFlight)
			if err != nil {
				return err
			}
			rep.PipelineRate = rate
			fmt.Fprintf(w, "(a) oracle alone on the same %d candidates …\n", len(res.Evaluations))
			if rep.OracleRate, err = benchOracle(ctx, orc, res.Evaluations, batch); err != nil {
				return err
			}
			rep.PipelineRatio = rep.PipelineRate / rep.OracleRate
			for _, n := range counts {
				b := max(100, 60*n)
				fmt.Fprintf(w, "(c) %d evaluator(s), %s per candidate, budget %d …\n", n, delay, b)
				_, rate, err := benchCampaign(ctx, orc, db, b, n, 4, delay, 16*n)
				if err != nil {
					return err
				}
				rep.Scaling = append(rep.Scaling, scalingPoint{Evaluators: n, Rate: rate})
			}
			for i := range rep.Scaling {
				rep.Scaling[i].Speedup = rep.Scaling[i].Rate / rep.Scaling[0].Rate * float64(rep.Scaling[0].Evaluators)
				rep.Scaling[i].Efficiency = rep.Scaling[i].Speedup / float64(rep.Scaling[i].Evaluators)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			printPipelineReport(cmd.OutOrStdout(), &rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "data directory (default: CRUCIBLE_DATA, ../shared, or the user cache)")
	f.IntVar(&budget, "budget", 600, "evaluations of the one-evaluator campaign (b)")
	f.IntVar(&batch, "batch", 16, "evaluator batch size for (a) and (b)")
	f.DurationVar(&delay, "delay", 20*time.Millisecond, "artificial oracle cost per candidate for (c)")
	f.StringVar(&replicas, "replicas", "1,2,4,8", "evaluator replica counts for (c)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	f.IntVar(&inFlight, "in-flight", 16, "generations in flight (the campaign's max_in_flight) for (b)")
	return cmd
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchCampaign runs one campaign on a fresh in-process stack and returns
// its evaluations/s between the first and the last proposed candidate's
// evaluation.
func benchCampaign(ctx context.Context, orc evaluator.Oracle, db *reference.DB, budget, evaluators, batch int, delay time.Duration, inFlight int) (*local.Result, float64, error) {
	opts := local.Options{Oracle: orc, Evaluators: evaluators}
	opts.Evaluator.Batch, opts.Evaluator.Delay = batch, delay
	opts.Proposer = func(s *store.Store) proposer.Config {
		cfg := wire.Proposer(db, s, wire.ProposerOptions{})
		cfg.Concurrency = 8
		return cfg
	}
	st, err := local.Start(ctx, opts)
	if err != nil {
		return nil, 0, err
	}
	defer st.Close()
	t, err := task.ByName("Stable Wide-Bandgap Semiconductors")
	if err != nil {
		return nil, 0, err
	}
	spec := &messages.CampaignSpec{ID: fmt.Sprintf("bench-%d-%d", evaluators, time.Now().UnixNano()), Task: t, Budget: budget, Seed: 1, MaxInFlight: inFlight}
	res, err := local.Run(ctx, st, spec, local.RunOptions{Timeout: 20 * time.Minute})
	if err != nil {
		return nil, 0, err
	}
	return res, evaluationRate(res.Evaluations), nil
}

// evaluationRate is (n − 1) / (last − first) over the evaluation times.
func evaluationRate(evs []*messages.Evaluation) float64 {
	if len(evs) < 2 {
		return 0
	}
	ts := make([]time.Time, len(evs))
	for i, ev := range evs {
		ts[i] = ev.EvaluatedAt
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	span := ts[len(ts)-1].Sub(ts[0]).Seconds()
	if span <= 0 {
		return 0
	}
	return float64(len(ts)-1) / span
}

// benchOracle evaluates the candidates' structures in batches, as an
// evaluator does, repeating until a few seconds have passed.
func benchOracle(ctx context.Context, orc evaluator.Oracle, evs []*messages.Evaluation, batch int) (float64, error) {
	var items []evaluator.Item
	for _, ev := range evs {
		s, err := ev.Candidate.Structure.Crystal()
		if err != nil {
			continue
		}
		items = append(items, evaluator.Item{Structure: s, StatedFormula: ev.Candidate.Structure.Formula})
	}
	if len(items) == 0 {
		return 0, fmt.Errorf("no candidate structures to time")
	}
	n := 0
	start := time.Now()
	for time.Since(start) < 3*time.Second || n < len(items) {
		for i := 0; i < len(items); i += batch {
			if _, err := orc.Evaluate(ctx, items[i:min(i+batch, len(items))]); err != nil {
				return 0, err
			}
		}
		n += len(items)
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

func printPipelineReport(w io.Writer, r *pipelineReport) {
	fmt.Fprintf(w, "GOMAXPROCS %d\n", r.GOMAXPROCS)
	fmt.Fprintf(w, "(a) oracle alone:            %8.1f structures/s\n", r.OracleRate)
	fmt.Fprintf(w, "(b) pipeline, 1 evaluator:   %8.1f evaluations/s  = %.0f%% of (a)\n", r.PipelineRate, 100*r.PipelineRatio)
	fmt.Fprintf(w, "(c) oracle delay %s per candidate:\n", r.Delay)
	fmt.Fprintf(w, "    evaluators  evaluations/s  speed-up  efficiency\n")
	for _, p := range r.Scaling {
		fmt.Fprintf(w, "    %10d  %13.1f  %7.2fx  %9.0f%%\n", p.Evaluators, p.Rate, p.Speedup, 100*p.Efficiency)
	}
}
