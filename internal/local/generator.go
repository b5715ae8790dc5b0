package local

import (
	"errors"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/service/judge"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/service/reflector"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/debate"
	"github.com/crucible-sci/crucible/pkg/messages"
	"github.com/crucible-sci/crucible/pkg/oracle"
)

// LLMClient builds the LLM client of a local run with generator or
// reflector llm: the endpoint and limits from cfg, the model and
// temperature from the campaign, the key from CRUCIBLE_LLM_API_KEY or
// CRUCIBLE_LLM_API_KEY_FILE. Otherwise none (nil, nil).
func LLMClient(spec *messages.CampaignSpec, cfg *llm.Config) (*llm.Client, error) {
	models := LLMModels(spec)
	if len(models) == 0 {
		if spec.Generator.Kind == messages.GeneratorLLM || spec.Reflector.Mode == messages.ReflectorLLM || spec.Judge.Debate == messages.DebateLLM {
			return nil, errors.New("--generator llm, --reflector llm and --debate llm need --model NAME (and --llm-url URL for a server other than OpenAI)")
		}
		return nil, nil
	}
	c := *cfg
	c.Model, c.Temperature = models[0], spec.Generator.Temperature
	key, err := llm.APIKeyFromEnv()
	if err != nil {
		return nil, err
	}
	c.APIKey = key
	return llm.NewClient(c)
}

// LLMModels are the models a local run asks: the generator's and the
// reflector's (reflector.model, else generator.model), without repeats.
func LLMModels(spec *messages.CampaignSpec) []string {
	var out []string
	if spec.Generator.Kind == messages.GeneratorLLM && spec.Generator.Model != "" {
		out = append(out, spec.Generator.Model)
	}
	if spec.Reflector.Mode == messages.ReflectorLLM {
		m := spec.Reflector.Model
		if m == "" {
			m = spec.Generator.Model
		}
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if spec.Judge.Debate == messages.DebateLLM {
		for _, m := range append([]string{spec.Judge.Model, spec.Generator.Model}, sortedValues(spec.Judge.RoleModels)...) {
			if m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// GeneratorLabel names the campaign's generator for a summary.
func GeneratorLabel(spec *messages.CampaignSpec, baseline bool) string {
	if baseline && spec.Generator.Kind == messages.GeneratorEvolve {
		return "random-substitution baseline"
	}
	return spec.Generator.Kind
}

// Data is what WithData loaded: the oracle (for Prepare) and the
// properties of the data directory's plug-in model servers.
type Data struct {
	Oracle   *oracle.Oracle
	Provided []string
}

// WithData loads the oracle and the reference phases from a data directory
// into opts: the evaluators share the oracle, and the proposer proposes
// from the reference phases, with the random-substitution baseline when
// baseline is set. With client not nil it is the LLM of the campaign's
// generator llm and reflector llm (one client and its limits, shared by
// the replicas). The oracle asks the data directory's plug-in model servers
// over the connection conn returns, and the proposer accepts campaigns on
// their properties.
func WithData(opts Options, data string, baseline bool, spec *messages.CampaignSpec, client *llm.Client, conn func() (*nats.Conn, error)) (Options, Data, error) {
	orc, ev, err := wire.RelaxingOracleWith(data, 0, conn)
	if err != nil {
		return opts, Data{}, err
	}
	db, err := wire.Reference(data)
	if err != nil {
		return opts, Data{}, err
	}
	provided, err := wire.Provided(data)
	if err != nil {
		return opts, Data{}, err
	}
	opts.Oracle = ev
	if opts.Judge.Debate, err = judge.DebateData(db); err != nil {
		return opts, Data{}, err
	}
	if client != nil && spec.Judge.Debate == messages.DebateLLM {
		opts.Judge.Debate.Agents = func(s *store.Store, spec *messages.CampaignSpec) (map[string]debate.Agent, debate.Judge) {
			return llm.DebateAgents(client, s, spec)
		}
	}
	opts.Proposer = func(s *store.Store) proposer.Config {
		po := wire.ProposerOptions{Baseline: baseline, Provided: provided}
		if client != nil && spec.Generator.Kind == messages.GeneratorLLM {
			if gen, err := llm.NewGenerator(client, s); err == nil {
				po.LLM = gen
			}
		}
		return wire.Proposer(db, s, po)
	}
	if client != nil && spec.Reflector.Mode == messages.ReflectorLLM {
		opts.ReflectorLLM = func(s *store.Store) reflector.LLM { return llm.NewReflector(client, s, opts.Log) }
	}
	return opts, Data{Oracle: orc, Provided: provided}, nil
}
