package cli

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/pipeline"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func init() { registerBench(newBenchPipelineCmd) }

func newBenchPipelineCmd() *cobra.Command {
	var (
		o        pipeline.Options
		replicas string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Throughput of the oracle alone, of the whole pipeline, and its scaling with evaluator replicas",
		Long:  pipeline.Description,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			local.TuneGC()
			var err error
			if o.DataDir == "" {
				if o.DataDir, err = datadir.Find(); err != nil {
					return err
				}
			}
			if o.Replicas, err = pipeline.ParseCounts(replicas); err != nil {
				return &exitError{code: 2, err: fmt.Errorf("--replicas: %w", err)}
			}
			if o.Rounds < 1 {
				return &exitError{code: 2, err: fmt.Errorf("--rounds: %d is not a positive integer", o.Rounds)}
			}
			o.Progress = cmd.ErrOrStderr()
			rep, err := pipeline.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			rep.Write(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	f.IntVar(&o.Budget, "budget", 600, "evaluations of the one-evaluator campaign (b)")
	f.IntVar(&o.Batch, "batch", 16, "evaluator batch size for (a) and (b)")
	f.DurationVar(&o.Delay, "delay", 20*time.Millisecond, "artificial oracle cost per candidate for (c)")
	f.StringVar(&replicas, "replicas", "1,2,4,8", "evaluator replica counts for (c)")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the first campaign (b) to this file")
	f.StringVar(&o.MemProfile, "memprofile", "", "write the allocations up to the end of the first campaign (b) to this file, and up to its start to this file + .base (go tool pprof -base)")
	f.IntVar(&o.InFlight, "in-flight", 16, "generations in flight (the campaign's max_in_flight) for (b)")
	f.StringVar(&o.NATSURL, "nats", "", "run the campaigns on this NATS server instead of an embedded one (streams in memory, deleted afterwards)")
	f.StringVar(&o.RedisURL, "redis", "", "run the campaigns on this Redis server instead of an embedded one (keys deleted afterwards)")
	f.IntVar(&o.Workers, "workers", 0, "oracle workers of the evaluator, for (a) and (b) (0 = one per CPU)")
	f.IntVar(&o.ProposerConcurrency, "proposer-concurrency", 8, "generation requests the proposer handles at once")
	f.IntVar(&o.Rounds, "rounds", 5, "rounds of (b) then (a); the report gives the round with the median ratio, and every round")
	return cmd
}
