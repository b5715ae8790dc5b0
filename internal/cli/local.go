package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/local"
	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/messages"
)

func init() { register(newLocalCmd) }

// campaignFlags are the flags that shape a campaign, shared by local and
// submit: bound straight to the fields messages.AssembleSpec reads (local
// sets Set.Ordered and SeededID).
type campaignFlags struct{ messages.SpecSource }

func (f *campaignFlags) bind(cmd *cobra.Command) {
	fl, c := cmd.Flags(), &f.Set
	fl.StringVar(&f.TaskName, "task", "", "built-in task by name (see \"crucible tasks\"), case-insensitive")
	fl.StringVar(&f.TaskFile, "task-file", "", "task file: a CSV row in LLEMA's format (Task,Goal,Properties) or YAML/JSON")
	fl.StringVar(&f.File, "spec", "", "campaign spec file (YAML or JSON, the fields of a campaign with its task inline)")
	fl.StringVar(&c.ID, "id", "", "campaign id (default: derived from the task and a random suffix)")
	fl.IntVar(&c.Budget, "budget", 0, "oracle evaluations of proposed candidates")
	fl.IntVar(&c.Islands, "islands", 0, "islands (default 5)")
	fl.IntVar(&c.BatchSize, "batch-size", 0, "candidates per generation, LLEMA's b (default 2)")
	fl.IntVar(&c.Episodes, "episodes", 0, "episodes the budget is split into, with a reflection after each (default 1)")
	fl.IntVar(&c.TopK, "top-k", 0, "demonstrations from each island pool (default 2)")
	fl.Uint64Var(&c.Seed, "seed", 0, "random seed of the campaign (default: random)")
	fl.StringVar(&c.Generator.Kind, "generator", "", "evolve (default) or llm")
	fl.StringVar(&c.Generator.Model, "model", "", "LLM model for --generator llm")
	fl.StringVar(&c.Oracle, "oracle", "", "screen (CGCNN on the structures as proposed; the default) or relax (also relax the candidates that pass the screen with M3GNet)")
	fl.Float64Var(&c.Generator.Temperature, "temperature", 0, "LLM sampling temperature (default 0.8)")
	fl.IntVar(&c.Generator.MaxLLMCalls, "max-llm-calls", 0, "LLM requests the campaign may make, retries included (default 4 × budget / batch size)")
	fl.IntVar(&c.Generator.MaxLLMTokens, "max-llm-tokens", 0, "LLM tokens (prompt and completion) the campaign may spend on every kind of exchange (default: no bound)")
	fl.Float64Var(&c.StabilityThreshold, "stability-threshold", 0, "energy above hull (eV/atom) counted as stable (default 0.1)")
	fl.StringVar(&c.Reflector.Mode, "reflector", os.Getenv("CRUCIBLE_REFLECTOR"), "rules (default), llm or off: how the campaign reflects after each episode [CRUCIBLE_REFLECTOR]")
	fl.StringVar(&c.Reflector.Model, "reflector-model", "", "LLM model for --reflector llm (default: --model)")
	fl.StringVar(&c.Judge.Debate, "debate", "", "offline (default), llm or off: how the judge debates stable hits (docs/debate.md)")
	fl.IntVar(&c.Judge.MaxDebates, "max-debates", 0, "hits debated at most; the rest are judged by the rule checks (default: the budget)")
	fl.IntVar(&c.MaxInFlight, "max-in-flight", 0, "generations in progress at once; with --generator llm, the LLM calls kept in flight (default 4 for llm, 8 otherwise)")
}

// spec assembles the campaign: a spec file, then a task, then flags. A
// task file's warnings go to stderr.
func (f *campaignFlags) spec(stderr io.Writer) (*messages.CampaignSpec, error) {
	if f.TaskName != "" && f.TaskFile != "" {
		return nil, errors.New("--task and --task-file: give one")
	}
	spec, issues, err := messages.AssembleSpec(f.SpecSource)
	for _, is := range issues {
		fmt.Fprintln(stderr, "warning:", is)
	}
	switch {
	case errors.Is(err, messages.ErrNoTask):
		return nil, errors.New("no task: give --task NAME, --task-file FILE or --spec FILE")
	case errors.Is(err, messages.ErrNoBudget):
		return nil, errors.New("no budget: give --budget N")
	}
	return spec, err
}

func newLocalCmd() *cobra.Command {
	var (
		cf                campaignFlags
		out, data, state  string
		resumeDir         string
		force             bool
		natsURL, redisURL string
		evaluators        int
		delay, timeout    time.Duration
		baseline, asJSON  bool
		quiet, verbose    bool
		logLevel          string
		llmCfg            llm.Config
	)
	cmd := &cobra.Command{
		Use:   "local --task NAME --budget N [--out DIR]",
		Short: "Run a campaign on this machine: all four services, embedded NATS and Redis",
		Long: `local runs a whole Crucible installation in this process — proposer,
evaluators, reflector and judge, with an embedded NATS server (JetStream on
disk, random port) and an embedded Redis-protocol server — submits one
campaign, shows its progress and writes its results to DIR:

  evaluations.jsonl      one evaluation per line, with its candidate id
  seeds.jsonl            the evaluated seed materials
  discoveries.jsonl      the judge's accepted discoveries, with evidence
                         and their debate (crucible debate --from DIR)
  discoveries/<id>.cif   their structures
  verdicts.jsonl         the judge's rejections, with reasons
  reflections.jsonl      the reflector's lessons and directives
  prompts.jsonl          generator or reflector llm: every prompt sent and
                         its answer, by kind (propose, reflect, memory,
                         debate)
  summary.json           LLEMA's rates over generated and over evaluated
                         candidates, MADE's n_stable, audc, sde and
                         learning_slope, the Pareto front, counters, …
                         (every field: docs/summary.md)

With --seed the campaign runs ordered (one generation at a time,
evaluations recorded in the order of their candidates) and its id derives
from the seed: a second run with the same flags gives the same
evaluations, verdicts and summary, apart from time stamps and timings.
--ordered=false trades that for the overlap of proposing and evaluating.

With --generator llm or --reflector llm the endpoint is checked first (GET /models, else a
completion of one token): a run whose endpoint is unreachable, refuses the
key or does not serve the model is refused with the reason.

SIGINT or SIGTERM (Ctrl-C) pauses the campaign, waits for the work in flight
to be evaluated, writes the results so far and the summary to DIR, keeps
the campaign's state in DIR/.crucible and prints how to resume:
"crucible local --resume DIR" continues to the budget, with no evaluation
lost or repeated. A second Ctrl-C stops waiting for the work in flight:
what is there is written and kept the same way (the resume does the rest);
a third ends the process at once. DIR must be empty unless --force.

With --state DIR the memory banks (reflections, directives, lessons) are
read from DIR/memory.json before the campaign and written back after it,
so that a later local campaign on the same task starts from what this one
learned; campaigns' own state is not kept.

With --nats and --redis (or CRUCIBLE_NATS_URL / CRUCIBLE_REDIS_URL) it uses
real servers instead. Data (CGCNN checkpoints, reference tables) comes from
--data, CRUCIBLE_DATA, a shared folder beside the repository, or the user cache (fill it
with "crucible data pull").

The process runs Go's garbage collector at GOGC=400 unless GOGC is set:
fewer collections for a larger peak heap.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("ordered") {
				cf.Set.Ordered = cf.Set.Seed != 0 && cf.Set.MaxInFlight <= 1
			}
			// Alone on embedded servers, a reproduced run keeps its ids.
			cf.SeededID = cf.Set.Ordered && natsURL == "" && redisURL == ""
			spec, err := localSpec(cmd, &cf, resumeDir)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if !cmd.Flags().Changed("llm-concurrency") && os.Getenv("CRUCIBLE_LLM_CONCURRENCY") == "" {
				// One campaign: its calls in flight are the client's.
				llmCfg.Concurrency = max(llmCfg.Concurrency, spec.MaxInFlight)
			}
			llmClient, err := local.LLMClient(spec, &llmCfg)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if data == "" {
				if data, err = datadir.Find(); err != nil {
					return err
				}
			}
			if out, err = local.OutDir(out, resumeDir, spec.ID, force); err != nil {
				return &exitError{code: 2, err: err}
			}
			log, err := local.Logger(verbose, logLevel)
			if err != nil {
				return err
			}
			local.TuneGC()
			// The first SIGINT or SIGTERM drains the campaign and keeps it
			// for --resume; a second one stops the drain and keeps what is there.
			interrupt, abort, stop := local.Interrupts()
			defer stop()
			o := local.CampaignOptions{Data: data, Out: out, State: state, NATSURL: natsURL, RedisURL: redisURL, Evaluators: evaluators,
				Delay: delay, Timeout: timeout, Baseline: baseline, LLM: llmClient, Log: log, Resume: resumeDir != "", Interrupt: interrupt, Abort: abort}
			if !quiet {
				o.Stderr, o.TTY = cmd.ErrOrStderr(), isTerminal(cmd.ErrOrStderr())
			}
			res, err := local.RunCampaign(cmd.Context(), spec, o)
			if errors.Is(err, local.ErrInterrupted) {
				return interrupted(cmd, res, out)
			}
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(w).Encode(res.Summary)
			}
			results.PrintSummary(w, res.Summary)
			fmt.Fprintf(w, "  results in %s\n", out)
			return nil
		},
	}
	cf.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "directory for the results (default crucible-out/<campaign>); it must be empty, unless --force")
	f.BoolVar(&force, "force", false, "replace the results of an earlier run in --out")
	f.StringVar(&resumeDir, "resume", "", "continue the interrupted run whose results are in this directory, to its budget")
	f.StringVar(&state, "state", "", "keep the memory banks in this directory across runs (read at start, written at the end; see \"crucible memory --state\")")
	f.StringVar(&data, "data", "", "data directory (default: CRUCIBLE_DATA, a shared folder beside the repository, or the user cache)")
	f.StringVar(&natsURL, "nats", os.Getenv("CRUCIBLE_NATS_URL"), "use this NATS server instead of an embedded one [CRUCIBLE_NATS_URL]")
	f.StringVar(&redisURL, "redis", os.Getenv("CRUCIBLE_REDIS_URL"), "use this Redis server instead of an embedded one [CRUCIBLE_REDIS_URL]")
	f.IntVar(&evaluators, "evaluators", 1, "evaluator replicas")
	f.DurationVar(&delay, "oracle-delay", 0, "artificial oracle cost per candidate (benchmarks)")
	f.DurationVar(&timeout, "timeout", 0, "give up after this long (0: never)")
	f.BoolVar(&baseline, "random-baseline", false, "propose with the random-substitution baseline instead of evolve")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	f.BoolVar(&cf.Set.Ordered, "ordered", false, "run the campaign reproducibly from its seed: one generation at a time, evaluations recorded in order (default: on with --seed, unless --max-in-flight is above 1)")
	f.BoolVar(&quiet, "quiet", false, "no progress output")
	f.BoolVar(&verbose, "verbose", false, "log the services to stderr")
	f.StringVar(&logLevel, "log-level", "", "log the services to stderr at this level (debug, info, warn, error)")
	llmCfg.BindFlags(f, false)
	return cmd
}
