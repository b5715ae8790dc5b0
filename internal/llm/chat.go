package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ChatRequest is one turn of a conversation with function tools: the
// messages so far and the tools the model may call.
type ChatRequest struct {
	Model       string
	Temperature float64
	MaxTokens   int
	Messages    []openai.ChatCompletionMessage
	Tools       []openai.Tool
	// Reserve and Release account the request as in Request.
	Reserve func(ctx context.Context) error
	Release func(ctx context.Context)
}

// ChatReply is the model's message (content or tool calls) and what the
// exchange cost.
type ChatReply struct {
	Message                        openai.ChatCompletionMessage
	FinishReason                   string
	PromptTokens, CompletionTokens int
	Estimated                      bool
	Requests                       int
}

// Chat sends one conversation turn with tools, within the client's rate
// limits and concurrency, retrying rate limits, server errors, timeouts
// and refused connections up to MaxRetries times as Complete does.
func (c *Client) Chat(ctx context.Context, req ChatRequest) (*ChatReply, error) {
	if req.MaxTokens <= 0 {
		req.MaxTokens = c.cfg.MaxTokens
	}
	var text strings.Builder
	for _, m := range req.Messages {
		text.WriteString(m.Content)
	}
	estimate := c.calib.scale(req.Model, EstimateTokens(text.String()))
	rep := &ChatReply{}
	for attempt := 0; ; attempt++ {
		if err := c.lim.wait(ctx, estimate+req.MaxTokens); err != nil {
			return rep, err
		}
		if req.Reserve != nil {
			if err := req.Reserve(ctx); err != nil {
				c.lim.adjust(estimate+req.MaxTokens, 0)
				metricRequests.WithLabelValues(KindBudget).Inc()
				return rep, err
			}
		}
		resp, err := c.sendChat(ctx, req)
		rep.Requests++
		if err == nil {
			choice := resp.Choices[0]
			rep.Message, rep.FinishReason = choice.Message, string(choice.FinishReason)
			rep.PromptTokens, rep.CompletionTokens = resp.Usage.PromptTokens, resp.Usage.CompletionTokens
			if rep.PromptTokens == 0 {
				rep.PromptTokens, rep.Estimated = estimate, true
			}
			if rep.CompletionTokens == 0 {
				rep.CompletionTokens, rep.Estimated = EstimateTokens(choice.Message.Content)+8*len(choice.Message.ToolCalls), true
			}
			c.lim.adjust(estimate+req.MaxTokens, rep.PromptTokens+rep.CompletionTokens)
			metricRequests.WithLabelValues("ok").Inc()
			metricTokens.WithLabelValues("prompt").Add(float64(rep.PromptTokens))
			metricTokens.WithLabelValues("completion").Add(float64(rep.CompletionTokens))
			return rep, nil
		}
		c.lim.adjust(estimate+req.MaxTokens, 0)
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		var e *Error
		if !errors.As(err, &e) {
			return rep, err
		}
		if e.unreachable() && req.Release != nil {
			req.Release(ctx)
		}
		metricRequests.WithLabelValues(e.Kind).Inc()
		if !e.retryable() || attempt >= c.cfg.MaxRetries || e.RetryAfter > c.cfg.MaxRetryAfter {
			return rep, e
		}
		wait := backoff(attempt)
		if e.RetryAfter > 0 {
			wait = e.RetryAfter
		}
		if err := c.clock.Sleep(ctx, wait); err != nil {
			return rep, err
		}
	}
}

// sendChat makes one HTTP request of a conversation turn.
func (c *Client) sendChat(ctx context.Context, req ChatRequest) (*openai.ChatCompletionResponse, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	cr := openai.ChatCompletionRequest{Model: req.Model, Messages: req.Messages, Tools: req.Tools,
		Temperature: float32(req.Temperature), MaxTokens: req.MaxTokens}
	if openai.NewReasoningValidator().Validate(cr) != nil {
		cr.MaxCompletionTokens, cr.MaxTokens, cr.Temperature = cr.MaxTokens, 0, 0
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	capture := &headerCapture{}
	rctx = context.WithValue(rctx, captureKey{}, capture)
	resp, err := c.api.CreateChatCompletion(rctx, cr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := classify(err, capture.get())
		e.Endpoint = c.cfg.BaseURL
		return nil, e
	}
	if len(resp.Choices) == 0 {
		return nil, &Error{Kind: KindServerError, Status: http.StatusOK, Endpoint: c.cfg.BaseURL, Message: "answer without choices"}
	}
	return &resp, nil
}
