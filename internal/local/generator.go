package local

import (
	"errors"

	"github.com/crucible-sci/crucible/internal/llm"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/internal/wire"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// LLMClient builds the LLM client of a local run with generator llm: the
// endpoint and limits from cfg, the model and temperature from the
// campaign, the key from CRUCIBLE_LLM_API_KEY or
// CRUCIBLE_LLM_API_KEY_FILE. Other generators need none (nil, nil).
func LLMClient(spec *messages.CampaignSpec, cfg *llm.Config) (*llm.Client, error) {
	if spec.Generator.Kind != messages.GeneratorLLM {
		return nil, nil
	}
	if spec.Generator.Model == "" {
		return nil, errors.New("--generator llm needs --model NAME (and --llm-url URL for a server other than OpenAI)")
	}
	c := *cfg
	c.Model, c.Temperature = spec.Generator.Model, spec.Generator.Temperature
	key, err := llm.APIKeyFromEnv()
	if err != nil {
		return nil, err
	}
	c.APIKey = key
	return llm.NewClient(c)
}

// GeneratorLabel names the campaign's generator for a summary.
func GeneratorLabel(spec *messages.CampaignSpec, baseline bool) string {
	if baseline && spec.Generator.Kind == messages.GeneratorEvolve {
		return "random-substitution baseline"
	}
	return spec.Generator.Kind
}

// WithData loads the oracle and the reference phases from a data directory
// into opts: the evaluators share the oracle, and the proposer proposes
// from the reference phases, with the random-substitution baseline when
// baseline is set and with client, when not nil, as its LLM (the client
// and its limits shared by the replicas).
func WithData(opts Options, data string, baseline bool, client *llm.Client) (Options, error) {
	_, oracle, err := wire.RelaxingOracle(data, 0)
	if err != nil {
		return opts, err
	}
	db, err := wire.Reference(data)
	if err != nil {
		return opts, err
	}
	opts.Oracle = oracle
	opts.Proposer = func(s *store.Store) proposer.Config {
		po := wire.ProposerOptions{Baseline: baseline}
		if client != nil {
			if gen, err := llm.NewGenerator(client, s); err == nil {
				po.LLM = gen
			}
		}
		return wire.Proposer(db, s, po)
	}
	return opts, nil
}
