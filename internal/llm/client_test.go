package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
)

func ok(content string) llmtest.Reply {
	return llmtest.Reply{Content: content, PromptTokens: 500, CompletionTokens: 120}
}

func simpleRequest() Request {
	return Request{Model: "test-model", Temperature: 0.8, System: "sys", User: "user", Schema: []byte(`{"type":"object"}`), SchemaName: "candidates"}
}

func TestCompleteUsesUsageAndSchema(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(ok(`{"candidates":[]}`))
	c, _ := testClient(t, Config{BaseURL: srv.URL, APIKey: "sk-test"})
	seed := 42
	req := simpleRequest()
	req.Seed = &seed
	comp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if comp.Content != `{"candidates":[]}` || comp.PromptTokens != 500 || comp.CompletionTokens != 120 || comp.Estimated || comp.Requests != 1 {
		t.Fatalf("completion %+v", comp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Format != FormatJSONSchema || r.Auth != "Bearer sk-test" || r.Seed == nil || *r.Seed != 42 || r.MaxTokens != DefaultMaxTokens ||
		r.Temperature < 0.79 || r.Temperature > 0.81 || r.System != "sys" || r.User != "user" {
		t.Fatalf("request %+v", r)
	}
}

func TestCompleteEstimatesWithoutUsage(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Content: "Hello, world!", NoUsage: true})
	c, _ := testClient(t, Config{BaseURL: srv.URL})
	comp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !comp.Estimated || comp.CompletionTokens != 4 || comp.PromptTokens != EstimateChat("sys", "user") {
		t.Fatalf("completion %+v", comp)
	}
	if srv.Requests()[0].Auth != "" {
		t.Fatal("an empty key was sent")
	}
}

func TestCompleteFallsBackToSimplerFormats(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return ok("{}") })
	srv.RefuseFormat(FormatJSONSchema)
	srv.RefuseFormat(FormatJSONObject)
	c, _ := testClient(t, Config{BaseURL: srv.URL})
	comp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if comp.Format != FormatText || comp.Requests != 3 {
		t.Fatalf("format %s after %d requests, want text after 3", comp.Format, comp.Requests)
	}
	// The client remembers what works for the model.
	if comp, err = c.Complete(context.Background(), simpleRequest()); err != nil || comp.Requests != 1 || comp.Format != FormatText {
		t.Fatalf("second completion: %+v, %v", comp, err)
	}
	var formats []string
	for _, r := range srv.Requests() {
		formats = append(formats, r.Format)
	}
	want := []string{FormatJSONSchema, FormatJSONObject, "", ""}
	if len(formats) != len(want) {
		t.Fatalf("formats %q, want %q", formats, want)
	}
	for i := range want {
		if formats[i] != want[i] {
			t.Fatalf("formats %q, want %q", formats, want)
		}
	}
}

func TestCompleteFixedFormat(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(ok("{}"))
	srv.RefuseFormat(FormatJSONObject)
	c, _ := testClient(t, Config{BaseURL: srv.URL, ResponseFormat: FormatJSONObject})
	_, err := c.Complete(context.Background(), simpleRequest())
	// A fixed format the server refuses falls back too (to text).
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests(); len(got) != 2 || got[0].Format != FormatJSONObject || got[1].Format != "" {
		t.Fatalf("requests %+v", got)
	}
}

func TestCompleteRetries(t *testing.T) {
	cases := []struct {
		name     string
		script   []llmtest.Reply
		retries  int
		err      error // nil: success
		requests int
		waits    []time.Duration // exact waits; nil: backoff (checked for bounds)
		kind     string
	}{
		{name: "429 with Retry-After", script: []llmtest.Reply{{Status: 429, Error: "slow down", Header: llmtest.RetryAfter(2)}, ok("{}")},
			requests: 2, waits: []time.Duration{2 * time.Second}},
		{name: "429 with retry-after-ms", script: []llmtest.Reply{{Status: 429, Error: "slow down", Header: map[string]string{"retry-after-ms": "1500"}}, ok("{}")},
			requests: 2, waits: []time.Duration{1500 * time.Millisecond}},
		{name: "429 asking too long a wait", script: []llmtest.Reply{{Status: 429, Error: "slow down", Header: llmtest.RetryAfter(3600)}},
			err: ErrRateLimited, requests: 1, waits: []time.Duration{}, kind: KindRateLimited},
		{name: "429 without header then ok", script: []llmtest.Reply{{Status: 429, Error: "slow down"}, ok("{}")}, requests: 2},
		{name: "quota spent", script: []llmtest.Reply{{Status: 429, Error: "You exceeded your current quota", ErrorCode: "insufficient_quota"}},
			err: ErrRefused, requests: 1, waits: []time.Duration{}, kind: KindQuota},
		{name: "500 then ok", script: []llmtest.Reply{{Status: 500, Error: "boom"}, {Status: 503, Body: "<html>bad gateway</html>"}, ok("{}")}, requests: 3},
		{name: "500s through every retry", retries: 2,
			script: []llmtest.Reply{{Status: 500, Error: "boom"}, {Status: 502, Error: "boom"}, {Status: 500, Error: "boom"}, ok("{}")},
			err:    ErrUnavailable, requests: 3, kind: KindServerError},
		{name: "context length", script: []llmtest.Reply{{Status: 400, Error: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", ErrorCode: "context_length_exceeded"}},
			err: ErrContextLength, requests: 1, waits: []time.Duration{}, kind: KindContextLength},
		{name: "llama.cpp context size", script: []llmtest.Reply{{Status: 400, Error: "the request exceeds the available context size, try increasing it"}},
			err: ErrContextLength, requests: 1, waits: []time.Duration{}, kind: KindContextLength},
		{name: "unauthorized", script: []llmtest.Reply{{Status: 401, Error: "Incorrect API key provided"}},
			err: ErrRefused, requests: 1, waits: []time.Duration{}, kind: KindUnauthorized},
		{name: "forbidden", script: []llmtest.Reply{{Status: 403, Error: "Project does not have access to model"}},
			err: ErrRefused, requests: 1, waits: []time.Duration{}, kind: KindUnauthorized},
		{name: "unknown model", script: []llmtest.Reply{{Status: 404, Error: "The model `nope` does not exist"}},
			err: ErrRefused, requests: 1, waits: []time.Duration{}, kind: KindModelNotFound},
		{name: "bad request", script: []llmtest.Reply{{Status: 400, Error: "temperature must be at most 2"}},
			err: ErrBadRequest, requests: 1, waits: []time.Duration{}, kind: KindBadRequest},
		{name: "200 that is not a completion", script: []llmtest.Reply{{Body: "<html>proxy error</html>"}, ok("{}")}, requests: 2},
		{name: "no choices", script: []llmtest.Reply{{Body: `{"id":"x","choices":[]}`}, ok("{}")}, requests: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, nil)
			srv.Script(tc.script...)
			retries := tc.retries
			if retries == 0 {
				retries = DefaultMaxRetries
			}
			c, fc := testClient(t, Config{BaseURL: srv.URL, MaxRetries: retries})
			comp, err := c.Complete(context.Background(), simpleRequest())
			if tc.err == nil && err != nil {
				t.Fatalf("error %v", err)
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.kind {
					t.Fatalf("error %#v, want kind %s", err, tc.kind)
				}
			}
			if comp.Requests != tc.requests || len(srv.Requests()) != tc.requests {
				t.Fatalf("%d requests (server saw %d), want %d", comp.Requests, len(srv.Requests()), tc.requests)
			}
			waits := fc.waits()
			if tc.waits != nil {
				if len(waits) != len(tc.waits) {
					t.Fatalf("waits %v, want %v", waits, tc.waits)
				}
				for i := range waits {
					if waits[i] != tc.waits[i] {
						t.Fatalf("waits %v, want %v", waits, tc.waits)
					}
				}
				return
			}
			// Backoff: the n-th wait (from 0) lies in [ceil/10, ceil] with
			// ceil = 0.5 s · 2ⁿ.
			if len(waits) != tc.requests-1 {
				t.Fatalf("%d waits for %d requests", len(waits), tc.requests)
			}
			for n, w := range waits {
				ceil := 500 * time.Millisecond << n
				if w < ceil/10 || w > ceil {
					t.Errorf("wait %d = %v outside [%v, %v]", n, w, ceil/10, ceil)
				}
			}
		})
	}
}

func TestCompleteTimeoutIsRetried(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Hang: true}, ok("{}"))
	c, fc := testClient(t, Config{BaseURL: srv.URL, Timeout: 50 * time.Millisecond})
	comp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if comp.Requests != 2 || len(fc.waits()) != 1 {
		t.Fatalf("%d requests, waits %v", comp.Requests, fc.waits())
	}
}

func TestCompleteTimeoutEveryTime(t *testing.T) {
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Hang: true} })
	c, _ := testClient(t, Config{BaseURL: srv.URL, Timeout: 20 * time.Millisecond, MaxRetries: 1})
	_, err := c.Complete(context.Background(), simpleRequest())
	var e *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Kind != KindTimeout {
		t.Fatalf("error %v, want a timeout", err)
	}
}

func TestCompleteConnectionRefused(t *testing.T) {
	srv := llmtest.New(t, nil)
	url := srv.URL
	srv.Close()
	c, fc := testClient(t, Config{BaseURL: url, MaxRetries: 2})
	comp, err := c.Complete(context.Background(), simpleRequest())
	var e *Error
	if !errors.Is(err, ErrUnreachable) || !errors.As(err, &e) || e.Kind != KindConnRefused {
		t.Fatalf("error %v, want a refused connection", err)
	}
	if comp.Requests != 3 || len(fc.waits()) != 2 {
		t.Fatalf("%d requests and waits %v, want 3 and 2", comp.Requests, fc.waits())
	}
}

func TestCompleteCancelled(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		arrived <- struct{}{}
		return llmtest.Reply{Hang: true}
	})
	c, _ := testClient(t, Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, simpleRequest())
		done <- err
	}()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("returned before the request was sent: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestCompleteReserve(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Status: 500, Error: "boom"}, ok("{}"))
	c, _ := testClient(t, Config{BaseURL: srv.URL})
	n := 0
	req := simpleRequest()
	req.Reserve = func(context.Context) error {
		n++
		if n > 1 {
			return &Error{Kind: KindBudget, Message: "spent"}
		}
		return nil
	}
	comp, err := c.Complete(context.Background(), req)
	if !errors.Is(err, ErrCallBudget) {
		t.Fatalf("error %v, want ErrCallBudget", err)
	}
	// The retry was not sent: the budget allowed one request.
	if comp.Requests != 1 || len(srv.Requests()) != 1 {
		t.Fatalf("%d requests", comp.Requests)
	}
}

func TestCompleteReasoningModel(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(ok("{}"))
	c, _ := testClient(t, Config{BaseURL: srv.URL})
	req := simpleRequest()
	req.Model = "o3-mini"
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.MaxTokens != 0 || r.MaxCompletionTokens != DefaultMaxTokens || r.Temperature != 0 {
		t.Fatalf("reasoning model request %+v", r)
	}
}

func TestCompleteConcurrencyBound(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 6)
	var inFlight, peak atomic.Int32
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		arrived <- struct{}{}
		<-release
		inFlight.Add(-1)
		return ok("{}")
	})
	c, _ := testClient(t, Config{BaseURL: srv.URL, Concurrency: 2})
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
				t.Error(err)
			}
		}()
	}
	wait := func() {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("no request arrived")
		}
	}
	// Two requests arrive; each one released lets exactly one more in.
	wait()
	wait()
	for i := 0; i < 4; i++ {
		release <- struct{}{}
		wait()
	}
	release <- struct{}{}
	release <- struct{}{}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak of %d requests in flight, want 2", p)
	}
}

func TestClassifyRetryAfterDate(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
	if got := retryAfter(h, now); got != 90*time.Second {
		t.Fatalf("retryAfter = %v, want 90s", got)
	}
	h.Set("Retry-After", "soon")
	if got := retryAfter(h, now); got != 0 {
		t.Fatalf("unreadable Retry-After gave %v", got)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*Config)
	}{
		{"url", func(c *Config) { c.BaseURL = "ftp://x" }},
		{"url", func(c *Config) { c.BaseURL = "http://user:secret@host/v1" }},
		{"temperature", func(c *Config) { c.Temperature = 3 }},
		{"max-tokens", func(c *Config) { c.MaxTokens = 1 }},
		{"concurrency", func(c *Config) { c.Concurrency = -1 }},
		{"rpm", func(c *Config) { c.RequestsPerMinute = -1 }},
		{"tpm", func(c *Config) { c.TokensPerMinute = -1 }},
		{"prompt-tokens", func(c *Config) { c.PromptTokens = 10 }},
		{"response-format", func(c *Config) { c.ResponseFormat = "yaml" }},
		{"template", func(c *Config) { c.Template = "v999" }},
		{"template", func(c *Config) { c.Template = "../v1" }},
	}
	for _, tc := range cases {
		c := Config{Model: "m", APIKey: "sk-test"}.WithDefaults()
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !containsAny(err.Error(), []string{tc.field}) {
			t.Errorf("%s: error %v", tc.field, err)
		}
	}
	if err := (Config{APIKey: "sk-test"}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if err := (Config{}).WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "API key") {
		t.Fatalf("OpenAI without a key: %v", err)
	}
}

func TestAPIKeyFromEnv(t *testing.T) {
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvAPIKeyFile, "")
	if k, err := APIKeyFromEnv(); k != "" || err != nil {
		t.Fatalf("no key: %q, %v", k, err)
	}
	f := t.TempDir() + "/key"
	if err := writeFile(f, "sk-from-file\n"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvAPIKeyFile, f)
	if k, err := APIKeyFromEnv(); k != "sk-from-file" || err != nil {
		t.Fatalf("file key: %q, %v", k, err)
	}
	t.Setenv(EnvAPIKey, " sk-env ")
	if k, err := APIKeyFromEnv(); k != "sk-env" || err != nil {
		t.Fatalf("env key: %q, %v", k, err)
	}
	t.Setenv(EnvAPIKey, "")
	t.Setenv(EnvAPIKeyFile, f+".missing")
	if _, err := APIKeyFromEnv(); err == nil {
		t.Fatal("a missing key file is not an error")
	}
}
