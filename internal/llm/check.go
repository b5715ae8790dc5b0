package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// checkTimeout bounds each request of Check.
const checkTimeout = 30 * time.Second

// Check asks the endpoint, before a campaign starts, whether it serves
// model: GET /models, where the model must be listed; where the server has
// no such route, fails otherwise, or does not list the model (it may serve
// it under an alias, or list nothing), a completion of one token. The error is an *Error saying what failed and where: no
// connection (refused, DNS, TLS), a timeout, a refused key, an unknown
// model (with the models the endpoint lists), a spent quota, a server
// error. An endpoint that answers the probe at all — even to refuse its
// format or length — or asks to slow down passes. Nothing is retried and
// no call budget is charged.
func (c *Client) Check(ctx context.Context, model string) error {
	listed, err := c.listModels(ctx)
	var e *Error
	switch {
	case err == nil && servedAs(model, listed) != "":
		return nil
	case err != nil && errors.As(err, &e) && (e.unreachable() || e.Kind == KindUnauthorized || e.Kind == KindTimeout):
		return err
	case err != nil && !errors.As(err, &e):
		return err // the context ended
	}
	perr := c.probe(ctx, model)
	switch {
	case perr == nil:
		return nil
	case !errors.As(perr, &e):
		return perr
	}
	switch e.Kind {
	case KindRateLimited, KindBadRequest, KindFormatUnsupported, KindContextLength:
		return nil // it answered: the request reached the model
	case KindModelNotFound:
		if len(listed) > 0 {
			e.Message = fmt.Sprintf("model %q is not served; the endpoint lists %s (%s)", model, listing(listed, 8), e.Message)
		}
	}
	return e
}

// listModels reads GET /models.
func (c *Client) listModels(ctx context.Context) ([]string, error) {
	rctx, cancel := context.WithTimeout(ctx, min(c.cfg.Timeout, checkTimeout))
	defer cancel()
	capture := &headerCapture{}
	rctx = context.WithValue(rctx, captureKey{}, capture)
	list, err := c.api.ListModels(rctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := classify(err, capture.get())
		e.Endpoint = c.cfg.BaseURL
		return nil, e
	}
	ids := make([]string, len(list.Models))
	for i, m := range list.Models {
		ids[i] = m.ID
	}
	return ids, nil
}

// probe asks for a completion of one token.
func (c *Client) probe(ctx context.Context, model string) error {
	rctx, cancel := context.WithTimeout(ctx, min(c.cfg.Timeout, checkTimeout))
	defer cancel()
	capture := &headerCapture{}
	rctx = context.WithValue(rctx, captureKey{}, capture)
	cr := openai.ChatCompletionRequest{Model: model, MaxTokens: 1,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Reply with OK."}}}
	if openai.NewReasoningValidator().Validate(cr) != nil {
		cr.MaxCompletionTokens, cr.MaxTokens = cr.MaxTokens, 0
	}
	_, err := c.api.CreateChatCompletion(rctx, cr)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	e := classify(err, capture.get())
	e.Endpoint = c.cfg.BaseURL
	return e
}

// servedAs returns the listed id that serves model ("" when none): the
// same name, or it with Ollama's ":latest" tag, a provider's "models/"
// prefix or an organisation in front ("org/model").
func servedAs(model string, listed []string) string {
	for _, id := range listed {
		if id == model || id == model+":latest" || model == id+":latest" || id == "models/"+model ||
			strings.HasSuffix(id, "/"+model) {
			return id
		}
	}
	return ""
}

// listing writes up to n ids, and how many more there are.
func listing(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}
