package llm

import (
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/app"
)

// BindFlags registers the LLM flags on fs, each with a CRUCIBLE_LLM_*
// variable as its default: --llm-url, --llm-model, --llm-temperature
// (without withModel: crucible local sets model and temperature with its
// campaign flags), --llm-max-tokens, --llm-timeout, --llm-concurrency,
// --llm-rpm, --llm-tpm, --llm-max-retries, --llm-prompt-tokens,
// --llm-response-format and --llm-template. The API key is not a flag: it
// comes from CRUCIBLE_LLM_API_KEY or CRUCIBLE_LLM_API_KEY_FILE
// (APIKeyFromEnv), so it never shows in a process list.
func (c *Config) BindFlags(fs *pflag.FlagSet, withModel bool) {
	fs.StringVar(&c.BaseURL, "llm-url", app.EnvString("CRUCIBLE_LLM_URL", ""), "OpenAI-compatible endpoint up to /v1 (default "+DefaultBaseURL+" when a model is set) [CRUCIBLE_LLM_URL]")
	if withModel {
		fs.StringVar(&c.Model, "llm-model", app.EnvString("CRUCIBLE_LLM_MODEL", ""), "default LLM model; a campaign's generator.model overrides it [CRUCIBLE_LLM_MODEL]")
		fs.Float64Var(&c.Temperature, "llm-temperature", app.EnvFloat("CRUCIBLE_LLM_TEMPERATURE", DefaultTemperature), "default sampling temperature; a campaign's generator.temperature overrides it [CRUCIBLE_LLM_TEMPERATURE]")
	}
	fs.IntVar(&c.MaxTokens, "llm-max-tokens", app.EnvInt("CRUCIBLE_LLM_MAX_TOKENS", DefaultMaxTokens), "longest answer, in tokens [CRUCIBLE_LLM_MAX_TOKENS]")
	fs.DurationVar(&c.Timeout, "llm-timeout", app.EnvDuration("CRUCIBLE_LLM_TIMEOUT", DefaultTimeout), "timeout of one LLM request [CRUCIBLE_LLM_TIMEOUT]")
	fs.IntVar(&c.Concurrency, "llm-concurrency", app.EnvInt("CRUCIBLE_LLM_CONCURRENCY", DefaultConcurrency), "LLM requests in flight at once [CRUCIBLE_LLM_CONCURRENCY]")
	fs.IntVar(&c.RequestsPerMinute, "llm-rpm", app.EnvInt("CRUCIBLE_LLM_RPM", 0), "LLM requests per minute, 0 for no limit [CRUCIBLE_LLM_RPM]")
	fs.IntVar(&c.TokensPerMinute, "llm-tpm", app.EnvInt("CRUCIBLE_LLM_TPM", 0), "LLM tokens per minute (prompt and answer), 0 for no limit [CRUCIBLE_LLM_TPM]")
	fs.IntVar(&c.MaxRetries, "llm-max-retries", app.EnvInt("CRUCIBLE_LLM_MAX_RETRIES", DefaultMaxRetries), "retries of a request after a rate limit, server error, timeout or refused connection [CRUCIBLE_LLM_MAX_RETRIES]")
	fs.IntVar(&c.PromptTokens, "llm-prompt-tokens", app.EnvInt("CRUCIBLE_LLM_PROMPT_TOKENS", DefaultPromptTokens), "token budget of a prompt: the oldest demonstrations are left out beyond it [CRUCIBLE_LLM_PROMPT_TOKENS]")
	fs.StringVar(&c.ResponseFormat, "llm-response-format", app.EnvString("CRUCIBLE_LLM_RESPONSE_FORMAT", FormatAuto), "auto, json_schema, json_object or text [CRUCIBLE_LLM_RESPONSE_FORMAT]")
	fs.StringVar(&c.Template, "llm-template", app.EnvString("CRUCIBLE_LLM_TEMPLATE", DefaultTemplate), "prompt template version [CRUCIBLE_LLM_TEMPLATE]")
}

// Enabled reports whether an LLM endpoint or model is configured (the
// llm generator is offered only then).
func (c Config) Enabled() bool { return c.BaseURL != "" || c.Model != "" }

// LogFields describe the configuration for a log line, without the key.
func (c Config) LogFields() []zap.Field {
	return []zap.Field{
		zap.String("llm_url", c.BaseURL), zap.String("llm_model", c.Model), zap.Float64("llm_temperature", c.Temperature),
		zap.Int("llm_max_tokens", c.MaxTokens), zap.Duration("llm_timeout", c.Timeout), zap.Int("llm_concurrency", c.Concurrency),
		zap.Int("llm_rpm", c.RequestsPerMinute), zap.Int("llm_tpm", c.TokensPerMinute), zap.Int("llm_prompt_tokens", c.PromptTokens),
		zap.String("llm_response_format", c.ResponseFormat), zap.String("llm_template", c.Template), zap.Bool("llm_api_key_set", c.APIKey != ""),
	}
}
