// Package llm is Crucible's LLM generator: LLEMA's proposer (Abhyankar et
// al. 2025, §2.2, App. D.2), an OpenAI-compatible chat model that reads
// the task, its constraints, a sample of the chemistry rules, the chosen
// island's best and worst candidates and the memory bank's reflections,
// and writes new crystal structures as JSON.
//
// The client speaks the OpenAI chat-completions API through go-openai, so
// it works with OpenAI and with the servers people run themselves (vLLM,
// Ollama, llama.cpp server, LM Studio): structured output by JSON schema
// where the server supports it, JSON mode or plain text where it does not;
// rate limits (requests and tokens per minute) and a bound on concurrent
// requests; retries of rate limits (Retry-After honoured), server errors,
// timeouts and refused connections with exponential backoff and jitter.
// Prompts are versioned text/template files embedded in the binary
// (prompts/v1), kept within a token budget by leaving out the oldest
// demonstrations, and every exchange is returned for the audit trail.
package llm

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"strings"
	"time"
)

// Response formats (Config.ResponseFormat).
const (
	// FormatAuto tries a JSON schema first and falls back, per model, to
	// JSON mode and then to plain text when the server refuses one.
	FormatAuto = "auto"
	// FormatJSONSchema asks for structured output with the answer's JSON
	// schema (OpenAI, vLLM, Ollama ≥ 0.5, llama.cpp server, LM Studio).
	FormatJSONSchema = "json_schema"
	// FormatJSONObject asks for any JSON object (JSON mode).
	FormatJSONObject = "json_object"
	// FormatText asks for nothing: the JSON is extracted from the text.
	FormatText = "text"
)

// Defaults of Config.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultTemperature = 0.8 // LLEMA App. D.2
	DefaultMaxTokens   = 2048
	DefaultTimeout     = 2 * time.Minute
	DefaultConcurrency = 4
	DefaultMaxRetries  = 4
	// DefaultPromptTokens is the prompt's token budget: the task, rules
	// and output format take about 700 tokens, each demonstration with its
	// structure 100–400; 3000 keeps a prompt and a full answer inside a
	// 4096-token context (Ollama's default) with room to spare.
	DefaultPromptTokens = 3000
	// DefaultMaxRetryAfter is the longest Retry-After a request waits for
	// in place; a longer one fails the request, and the generation is
	// retried by redelivery instead of holding a slot.
	DefaultMaxRetryAfter = time.Minute
	DefaultTemplate      = "v1"
)

// Config configures the LLM client and generator. The zero value of every
// field but Model means its default; Model may be empty when every
// campaign names its own.
type Config struct {
	// BaseURL is the OpenAI-compatible endpoint, up to /v1
	// (https://api.openai.com/v1, http://localhost:8000/v1 for vLLM,
	// http://localhost:11434/v1 for Ollama).
	BaseURL string `json:"base_url"`
	// Model is the default model; a campaign's generator.model overrides
	// it.
	Model string `json:"model,omitempty"`
	// APIKey is sent as a bearer token; empty sends none (local servers).
	// It is never logged or serialised.
	APIKey string `json:"-"`
	// Temperature of sampling; a campaign's generator.temperature
	// overrides it.
	Temperature float64 `json:"temperature"`
	// MaxTokens bounds each answer (completion tokens).
	MaxTokens int `json:"max_tokens"`
	// Timeout bounds each HTTP request.
	Timeout time.Duration `json:"timeout"`
	// Concurrency bounds the requests in flight at once, across the
	// proposer replica's generations.
	Concurrency int `json:"concurrency"`
	// RequestsPerMinute and TokensPerMinute are client-side rate limits
	// (0: none), to stay under a provider's quota instead of hitting 429s.
	RequestsPerMinute int `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int `json:"tokens_per_minute,omitempty"`
	// MaxRetries is how many times a request is retried after a rate
	// limit, a server error, a timeout or a refused connection before the
	// generation fails (and is retried by redelivery).
	MaxRetries int `json:"max_retries"`
	// MaxRetryAfter is the longest server-requested wait honoured in place.
	MaxRetryAfter time.Duration `json:"max_retry_after"`
	// PromptTokens is the prompt's token budget (estimated): the oldest
	// demonstrations are left out until the prompt fits.
	PromptTokens int `json:"prompt_tokens"`
	// ResponseFormat is auto, json_schema, json_object or text.
	ResponseFormat string `json:"response_format"`
	// Template is the prompt template version (prompts/<version>).
	Template string `json:"template"`
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Temperature == 0 {
		c.Temperature = DefaultTemperature
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	if c.MaxRetryAfter == 0 {
		c.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if c.PromptTokens == 0 {
		c.PromptTokens = DefaultPromptTokens
	}
	if c.ResponseFormat == "" {
		c.ResponseFormat = FormatAuto
	}
	if c.Template == "" {
		c.Template = DefaultTemplate
	}
	return c
}

// Validate checks a configuration after WithDefaults; the error names the
// field (as the flag spells it).
func (c Config) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("llm: url: %q is not an http(s) URL", c.BaseURL)
	}
	if u.User != nil {
		return errors.New("llm: url: credentials in the URL; give the key in CRUCIBLE_LLM_API_KEY or CRUCIBLE_LLM_API_KEY_FILE")
	}
	if u.Host == "api.openai.com" && c.APIKey == "" {
		return errors.New("llm: OpenAI needs an API key: set CRUCIBLE_LLM_API_KEY or CRUCIBLE_LLM_API_KEY_FILE (or --llm-url for a local server)")
	}
	switch {
	case c.Temperature < 0 || c.Temperature > 2 || math.IsNaN(c.Temperature):
		return fmt.Errorf("llm: temperature: %v outside [0, 2]", c.Temperature)
	case c.MaxTokens < 16 || c.MaxTokens > 1<<20:
		return fmt.Errorf("llm: max-tokens: %d outside [16, %d]", c.MaxTokens, 1<<20)
	case c.Timeout < 0:
		return fmt.Errorf("llm: timeout: %v is negative", c.Timeout)
	case c.Concurrency < 1 || c.Concurrency > 1024:
		return fmt.Errorf("llm: concurrency: %d outside [1, 1024]", c.Concurrency)
	case c.RequestsPerMinute < 0:
		return fmt.Errorf("llm: rpm: %d is negative", c.RequestsPerMinute)
	case c.TokensPerMinute < 0:
		return fmt.Errorf("llm: tpm: %d is negative", c.TokensPerMinute)
	case c.MaxRetries < 0 || c.MaxRetries > 20:
		return fmt.Errorf("llm: max-retries: %d outside [0, 20]", c.MaxRetries)
	case c.MaxRetryAfter < 0:
		return fmt.Errorf("llm: max-retry-after: %v is negative", c.MaxRetryAfter)
	case c.PromptTokens < 256:
		return fmt.Errorf("llm: prompt-tokens: %d, want at least 256", c.PromptTokens)
	}
	switch c.ResponseFormat {
	case FormatAuto, FormatJSONSchema, FormatJSONObject, FormatText:
	default:
		return fmt.Errorf("llm: response-format: %q, want auto, json_schema, json_object or text", c.ResponseFormat)
	}
	if _, err := LoadTemplate(c.Template); err != nil {
		return fmt.Errorf("llm: template: %w", err)
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		return errors.New("llm: API key: contains a line break")
	}
	return nil
}

// Environment variables of the API key.
const (
	EnvAPIKey     = "CRUCIBLE_LLM_API_KEY"
	EnvAPIKeyFile = "CRUCIBLE_LLM_API_KEY_FILE"
)

// APIKeyFromEnv reads the API key from CRUCIBLE_LLM_API_KEY, or from the
// file named by CRUCIBLE_LLM_API_KEY_FILE (a Kubernetes or compose
// secret), trimmed. No key is not an error: local servers need none. A key
// file that cannot be read is.
func APIKeyFromEnv() (string, error) {
	if v := os.Getenv(EnvAPIKey); v != "" {
		return strings.TrimSpace(v), nil
	}
	f := os.Getenv(EnvAPIKeyFile)
	if f == "" {
		return "", nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", fmt.Errorf("llm: %s: %w", EnvAPIKeyFile, err)
	}
	return strings.TrimSpace(string(b)), nil
}
