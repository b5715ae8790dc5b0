package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Client sends chat completions to an OpenAI-compatible endpoint with the
// configured limits, retries and response-format fallback. It is safe for
// concurrent use and meant to be shared by a proposer replica's
// generations (the limits are per client).
type Client struct {
	cfg   Config
	api   *openai.Client
	lim   *limiter
	sem   chan struct{}
	clock clock
	calib calibration

	mu      sync.Mutex
	formats map[string]string // per model: the response format that works
}

// NewClient validates cfg (after defaults) and builds a client.
func NewClient(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	// No client-wide timeout: each request gets its own context deadline.
	oc.HTTPClient = capturingDoer{inner: &http.Client{}}
	c := &Client{cfg: cfg, api: openai.NewClientWithConfig(oc), sem: make(chan struct{}, cfg.Concurrency),
		clock: realClock{}, formats: map[string]string{}}
	c.lim = newLimiter(cfg.RequestsPerMinute, cfg.TokensPerMinute, c.clock)
	return c, nil
}

// Config returns the client's configuration (with defaults). Its APIKey
// must not be logged.
func (c *Client) Config() Config { return c.cfg }

// Request is one completion to ask for.
type Request struct {
	Model       string
	Temperature float64
	MaxTokens   int
	System      string
	User        string
	// Schema is the answer's JSON schema for structured output; nil asks
	// for JSON mode at most.
	Schema json.RawMessage
	// SchemaName names the schema (letters, digits, '_' and '-').
	SchemaName string
	// Seed asks the server for reproducible sampling (where supported).
	Seed *int
	// Reserve is called before every HTTP request (retries included); an
	// error (ErrCallBudget) stops the exchange before sending.
	Reserve func(ctx context.Context) error
	// Release, when set, gives back what Reserve took for a request that
	// never reached a server (refused, DNS, TLS): it cost nothing, and an
	// endpoint that is down is reported as such rather than as a spent
	// budget.
	Release func(ctx context.Context)
}

// Completion is the answer to a Request, or what is known of a failed one.
type Completion struct {
	Content      string
	FinishReason string
	// Format is the response format of the last request sent.
	Format string
	// PromptTokens and CompletionTokens are the server's usage, or
	// estimates (Estimated) when it reported none.
	PromptTokens, CompletionTokens int
	Estimated                      bool
	// Requests counts the HTTP requests sent, retries included.
	Requests int
	// Released counts those that never reached a server, whose
	// reservation was given back (Request.Release).
	Released int
	// LastFailure is the failure of the request before the one Reserve
	// refused (nil when none).
	LastFailure *Error
	// Latency is the duration of the last request.
	Latency time.Duration
}

// EstimatePrompt estimates a prompt's tokens for model, calibrated by the
// usage the server reported for earlier prompts of the model.
func (c *Client) EstimatePrompt(model, system, user string) int {
	return c.calib.scale(model, EstimateChat(system, user))
}

// formatFor returns the response format to try first for model.
func (c *Client) formatFor(model string, schema bool) string {
	if c.cfg.ResponseFormat != FormatAuto {
		if c.cfg.ResponseFormat == FormatJSONSchema && !schema {
			return FormatJSONObject
		}
		return c.cfg.ResponseFormat
	}
	c.mu.Lock()
	f, ok := c.formats[model]
	c.mu.Unlock()
	switch {
	case ok:
		return f
	case schema:
		return FormatJSONSchema
	}
	return FormatJSONObject
}

// downgrade records that model's server refused format and returns the
// next one to try ("" when none is left).
func (c *Client) downgrade(model, format string) string {
	next := ""
	switch format {
	case FormatJSONSchema:
		next = FormatJSONObject
	case FormatJSONObject:
		next = FormatText
	}
	if next != "" && c.cfg.ResponseFormat == FormatAuto {
		c.mu.Lock()
		c.formats[model] = next
		c.mu.Unlock()
	}
	return next
}

// Complete asks for one completion. It waits for the rate limits and a
// concurrency slot, retries rate limits (honouring Retry-After up to
// MaxRetryAfter), server errors, timeouts and refused connections up to
// MaxRetries times with exponential backoff and full jitter, and falls
// back to a simpler response format when the server refuses one. The
// Completion is returned with the error too, with what the failed
// exchange cost (Requests).
func (c *Client) Complete(ctx context.Context, req Request) (*Completion, error) {
	if req.MaxTokens <= 0 {
		req.MaxTokens = c.cfg.MaxTokens
	}
	comp := &Completion{Format: c.formatFor(req.Model, req.Schema != nil)}
	estimate := c.EstimatePrompt(req.Model, req.System, req.User)
	var last *Error // the previous request's failure
	for attempt := 0; ; {
		if err := c.lim.wait(ctx, estimate+req.MaxTokens); err != nil {
			return comp, err
		}
		if req.Reserve != nil {
			if err := req.Reserve(ctx); err != nil {
				c.lim.adjust(estimate+req.MaxTokens, 0)
				metricRequests.WithLabelValues(KindBudget).Inc()
				comp.LastFailure = last
				return comp, err
			}
		}
		resp, latency, err := c.send(ctx, req, comp.Format)
		comp.Requests++
		comp.Latency = latency
		if err == nil {
			c.settle(req, comp, resp, estimate)
			metricRequests.WithLabelValues("ok").Inc()
			metricLatency.WithLabelValues("ok").Observe(latency.Seconds())
			return comp, nil
		}
		c.lim.adjust(estimate+req.MaxTokens, 0)
		if ctx.Err() != nil {
			return comp, ctx.Err()
		}
		var e *Error
		if !errors.As(err, &e) {
			return comp, err
		}
		last = e
		if e.unreachable() && req.Release != nil {
			req.Release(ctx)
			comp.Released++
		}
		metricRequests.WithLabelValues(e.Kind).Inc()
		metricLatency.WithLabelValues(e.Kind).Observe(latency.Seconds())
		if e.Kind == KindFormatUnsupported {
			if next := c.downgrade(req.Model, comp.Format); next != "" {
				comp.Format = next
				continue // not a retry: the request changed
			}
			e.Kind = KindBadRequest
		}
		if !e.retryable() {
			return comp, e
		}
		if attempt >= c.cfg.MaxRetries {
			return comp, e
		}
		wait := backoff(attempt)
		if e.RetryAfter > 0 {
			if e.RetryAfter > c.cfg.MaxRetryAfter {
				e.Kind = KindRateLimited
				e.Message = fmt.Sprintf("server asks to wait %v (more than %v): %s", e.RetryAfter.Round(time.Second), c.cfg.MaxRetryAfter, e.Message)
				return comp, e
			}
			wait = e.RetryAfter
		}
		metricRetryWait.Add(wait.Seconds())
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return comp, err
		}
		attempt++
	}
}

// backoff is the wait before retry n+1: full jitter over an exponential
// ceiling, min(30 s, 0.5 s · 2ⁿ), never under a tenth of it (Brooker,
// "Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
func backoff(n int) time.Duration {
	ceil := min(30*time.Second, 500*time.Millisecond<<min(n, 10))
	return ceil/10 + time.Duration(rand.Int64N(int64(ceil-ceil/10)+1))
}

// send makes one HTTP request in format, within a concurrency slot and
// the request timeout.
func (c *Client) send(ctx context.Context, req Request, format string) (*openai.ChatCompletionResponse, time.Duration, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	defer func() { <-c.sem }()
	metricInFlight.Inc()
	defer metricInFlight.Dec()

	cr := openai.ChatCompletionRequest{
		Model: req.Model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: req.System},
			{Role: openai.ChatMessageRoleUser, Content: req.User},
		},
		Temperature: float32(req.Temperature),
		MaxTokens:   req.MaxTokens,
		Seed:        req.Seed,
	}
	switch format {
	case FormatJSONSchema:
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: req.SchemaName, Schema: req.Schema, Strict: true,
			},
		}
	case FormatJSONObject:
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	if openai.NewReasoningValidator().Validate(cr) != nil {
		// Reasoning models (o1, o3, o4, gpt-5…) take max_completion_tokens
		// and no temperature.
		cr.MaxCompletionTokens, cr.MaxTokens, cr.Temperature = cr.MaxTokens, 0, 0
		if err := openai.NewReasoningValidator().Validate(cr); err != nil {
			return nil, 0, &Error{Kind: KindBadRequest, Endpoint: c.cfg.BaseURL, Message: err.Error(), Err: err}
		}
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	capture := &headerCapture{}
	rctx = context.WithValue(rctx, captureKey{}, capture)
	start := c.clock.Now()
	resp, err := c.api.CreateChatCompletion(rctx, cr)
	latency := c.clock.Now().Sub(start)
	if err != nil {
		if ctx.Err() != nil {
			return nil, latency, ctx.Err()
		}
		e := classify(err, capture.get())
		e.Endpoint = c.cfg.BaseURL
		return nil, latency, e
	}
	if len(resp.Choices) == 0 {
		return nil, latency, &Error{Kind: KindServerError, Status: http.StatusOK, Endpoint: c.cfg.BaseURL, Message: "answer without choices"}
	}
	return &resp, latency, nil
}

// settle fills the completion from a response: its content, its usage (or
// estimates), and settles the token limiter and the calibration.
func (c *Client) settle(req Request, comp *Completion, resp *openai.ChatCompletionResponse, estimate int) {
	choice := resp.Choices[0]
	comp.Content = choice.Message.Content
	comp.FinishReason = string(choice.FinishReason)
	comp.PromptTokens, comp.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
	if comp.PromptTokens > 0 {
		c.calib.observe(req.Model, EstimateChat(req.System, req.User), comp.PromptTokens)
	} else {
		comp.PromptTokens, comp.Estimated = estimate, true
	}
	if comp.CompletionTokens == 0 && comp.Content != "" {
		comp.CompletionTokens, comp.Estimated = EstimateTokens(comp.Content), true
	}
	c.lim.adjust(estimate+req.MaxTokens, comp.PromptTokens+comp.CompletionTokens)
	metricPromptTokens.Observe(float64(comp.PromptTokens))
	metricTokens.WithLabelValues("prompt").Add(float64(comp.PromptTokens))
	metricTokens.WithLabelValues("completion").Add(float64(comp.CompletionTokens))
}
