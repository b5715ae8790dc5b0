package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/loadtest"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func init() { registerBench(newBenchLoadCmd) }

func newBenchLoadCmd() *cobra.Command {
	var (
		o      loadtest.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "load [--campaigns K] [--budget N] [--evaluators E] [--processes]",
		Short: "Run K campaigns at once on a whole installation and measure throughput, latency, Redis load and memory",
		Long: `load starts an installation, submits K campaigns together (each with --budget
evaluations of --task) and waits until all are done and the judge has caught
up. It reports:

  evaluations/s     evaluations of proposed candidates (seeds excluded) over
                    the time from the first submission to the last evaluation
  latency p50/p99   from a candidate's proposed_at (set when the proposer
                    publishes it) to its evaluation's evaluated_at (set when
                    the evaluator has scored it, just before publishing)
  Redis ops/s       commands the Redis server processed during the run
                    (INFO stats total_commands_processed; the embedded server
                    counts its commands)
  memory            the peak resident memory of every service process and
                    server; with the services in this process (the default)
                    they share one process, reported with its Go heap

Servers: nats-server and redis-server as child processes on random ports when
this machine has them, else embedded in this process (--embedded forces
that), or running ones with --nats and --redis. Services: goroutines of this
process, or with --processes the four binaries from --bin (default: next to
this crucible binary), one process each.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.DataDir == "" {
				var err error
				if o.DataDir, err = datadir.Find(); err != nil {
					return err
				}
			}
			if o.Processes && o.BinDir == "" {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				o.BinDir = filepath.Dir(exe)
			}
			res, err := loadtest.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			printLoad(w, res)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Campaigns, "campaigns", 20, "campaigns submitted at once")
	f.IntVar(&o.Budget, "budget", 100, "evaluations per campaign")
	f.StringVar(&o.Task, "task", "Stable Wide-Bandgap Semiconductors", "built-in task of every campaign")
	f.IntVar(&o.Evaluators, "evaluators", 2, "evaluator replicas")
	f.DurationVar(&o.OracleDelay, "oracle-delay", 0, "artificial oracle cost per candidate")
	f.StringVar(&o.NATSURL, "nats", "", "use this NATS server")
	f.StringVar(&o.RedisURL, "redis", "", "use this Redis server")
	f.BoolVar(&o.Embedded, "embedded", false, "run the servers inside this process even if nats-server and redis-server exist")
	f.BoolVar(&o.Processes, "processes", false, "run the services as their binaries, one process each")
	f.StringVar(&o.BinDir, "bin", "", "directory of the service binaries for --processes (default: this binary's)")
	f.StringVar(&o.DataDir, "data", "", "data directory (default: CRUCIBLE_DATA, ../shared, or the user cache)")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "give up after this long")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func printLoad(w interface{ Write([]byte) (int, error) }, r *loadtest.Result) {
	fmt.Fprintf(w, "%d campaigns × %d evaluations, %d evaluators (%s; %s)\n", r.Campaigns, r.Budget, r.Evaluators, r.Services, r.Servers)
	fmt.Fprintf(w, "  %d evaluations (+%d seeds) in %.1f s: %.1f evaluations/s\n", r.Evaluations, r.Seeds, r.Wall.Seconds(), r.EvaluationsPerSec)
	fmt.Fprintf(w, "  proposed → evaluated: p50 %s, p99 %s, max %s\n", r.LatencyP50.Round(time.Millisecond), r.LatencyP99.Round(time.Millisecond), r.LatencyMax.Round(time.Millisecond))
	fmt.Fprintf(w, "  Redis: %d commands, %.0f ops/s (%s)\n", r.RedisCommands, r.RedisOpsPerSec, r.RedisSource)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  memory (peak)\tRSS MiB\tGo heap MiB")
	for _, m := range r.Memory {
		heap := "-"
		if m.Heap > 0 {
			heap = fmt.Sprintf("%.1f", float64(m.Heap)/(1<<20))
		}
		fmt.Fprintf(tw, "  %s\t%.1f\t%s\n", m.Name, float64(m.RSS)/(1<<20), heap)
	}
	tw.Flush()
}
