package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/bench/load"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func init() { registerBench(newBenchLoadCmd) }

func newBenchLoadCmd() *cobra.Command {
	var (
		o      load.Options
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "load [--campaigns K] [--budget N] [--evaluators E] [--processes]",
		Short: "Run K campaigns at once on a whole installation and measure throughput, latency, Redis load and memory",
		Long:  load.Description,
		Args:  cobra.NoArgs,
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
			res, err := load.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			return res.Write(w)
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
	f.StringVar(&o.DataDir, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	f.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "give up after this long")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}
