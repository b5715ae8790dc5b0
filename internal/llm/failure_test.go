package llm

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/llm/llmtest"
	"github.com/crucible-sci/crucible/internal/service/proposer"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// closedPort returns the URL of a local port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	return url
}

// endpoint is a way for an endpoint to fail.
type endpoint struct {
	name string
	// start returns the endpoint's URL.
	start func(t *testing.T) string
	kind  string
	// sentinel is the error the failure matches; exhausted: the generator
	// gives the campaign up at once; unreachable: the proposer ends the
	// campaign when every attempt fails so.
	sentinel               error
	exhausted, unreachable bool
	// reason is what the message says, before the endpoint.
	reason string
}

func scripted(replies ...llmtest.Reply) func(t *testing.T) string {
	return func(t *testing.T) string {
		srv := llmtest.New(t, nil)
		srv.Script(replies...)
		return srv.URL
	}
}

var endpoints = []endpoint{
	{name: "closed port", start: closedPort, kind: KindConnRefused, sentinel: ErrUnreachable, unreachable: true,
		reason: "connection refused"},
	{name: "unknown host", start: func(*testing.T) string { return "http://crucible-test.invalid/v1" }, kind: KindDNS,
		sentinel: ErrUnreachable, unreachable: true, reason: "host name not found"},
	{name: "untrusted certificate", start: func(t *testing.T) string { return llmtest.NewTLS(t, nil).URL }, kind: KindTLS,
		sentinel: ErrUnreachable, unreachable: true, reason: "TLS failed"},
	{name: "401", start: scripted(llmtest.Reply{Status: 401, Error: "Incorrect API key provided"}), kind: KindUnauthorized,
		sentinel: ErrRefused, exhausted: true, reason: "unauthorized (HTTP 401)"},
	{name: "403", start: scripted(llmtest.Reply{Status: 403, Error: "You are not allowed to sample from this model"}),
		kind: KindUnauthorized, sentinel: ErrRefused, exhausted: true, reason: "unauthorized (HTTP 403)"},
	{name: "404 model", start: scripted(llmtest.Reply{Status: 404, Error: "The model `nope` does not exist", ErrorCode: "model_not_found"}),
		kind: KindModelNotFound, sentinel: ErrRefused, exhausted: true, reason: "model or route not found (HTTP 404)"},
	{name: "429", start: scripted(llmtest.Reply{Status: 429, Error: "Rate limit reached"}, llmtest.Reply{Status: 429, Error: "Rate limit reached"}),
		kind: KindRateLimited, sentinel: ErrRateLimited, reason: "rate limited (HTTP 429)"},
	{name: "429 quota", start: scripted(llmtest.Reply{Status: 429, Error: "You exceeded your current quota", ErrorCode: "insufficient_quota"}),
		kind: KindQuota, sentinel: ErrRefused, exhausted: true, reason: "quota spent (HTTP 429)"},
	{name: "500", start: scripted(llmtest.Reply{Status: 500, Error: "boom"}, llmtest.Reply{Status: 500, Error: "boom"}),
		kind: KindServerError, sentinel: ErrUnavailable, reason: "server error (HTTP 500)"},
	{name: "503", start: scripted(llmtest.Reply{Status: 503, Body: "<html>Service Unavailable</html>"}, llmtest.Reply{Status: 503, Body: "<html>Service Unavailable</html>"}),
		kind: KindServerError, sentinel: ErrUnavailable, reason: "server error (HTTP 503)"},
	{name: "timeout", start: scripted(llmtest.Reply{Hang: true}, llmtest.Reply{Hang: true}), kind: KindTimeout,
		sentinel: ErrUnavailable, reason: "no answer in time"},
}

// TestEndpointFailures: each way an endpoint fails is classified, said in
// the error with the endpoint, recorded in the prompt audit (error kind,
// endpoint), and decides what becomes of the campaign: refusals give it up
// at once, unreachable endpoints end it when every attempt fails so
// (proposer.ErrUnreachable), the rest are retried.
func TestEndpointFailures(t *testing.T) {
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			url := ep.start(t)
			timeout := 5 * time.Second
			if ep.kind == KindTimeout {
				timeout = 200 * time.Millisecond
			}
			c, _ := testClient(t, Config{BaseURL: url, MaxRetries: 1, Timeout: timeout})
			g, err := NewGenerator(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.Propose(context.Background(), fixtureInput(t))
			if err == nil {
				t.Fatal("no error")
			}
			var e *Error
			if !errors.As(err, &e) || e.Kind != ep.kind || !errors.Is(err, ep.sentinel) {
				t.Fatalf("error %v (%#v), want kind %s matching %v", err, e, ep.kind, ep.sentinel)
			}
			if errors.Is(err, proposer.ErrExhausted) != ep.exhausted || errors.Is(err, proposer.ErrUnreachable) != ep.unreachable {
				t.Fatalf("error %v: exhausted %v, unreachable %v; want %v, %v", err,
					errors.Is(err, proposer.ErrExhausted), errors.Is(err, proposer.ErrUnreachable), ep.exhausted, ep.unreachable)
			}
			if want := ep.reason + " at " + url; !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %q", err, want)
			}
			if ep.unreachable && !strings.HasPrefix(err.Error(), "LLM endpoint unreachable: ") {
				t.Fatalf("error %q does not say the endpoint is unreachable", err)
			}
			var lf interface{ LogFields() []zap.Field }
			if !errors.As(err, &lf) || len(lf.LogFields()) == 0 {
				t.Fatal("the error gives no log fields")
			}
			if len(out.Prompts) != 1 {
				t.Fatalf("%d audit records", len(out.Prompts))
			}
			p := out.Prompts[0]
			if p.Outcome != messages.PromptFailed || p.ErrorKind != ep.kind || p.Endpoint != url || !strings.Contains(p.Error, url) {
				t.Fatalf("audit record: outcome %s, kind %q, endpoint %q, error %q", p.Outcome, p.ErrorKind, p.Endpoint, p.Error)
			}
			t.Logf("%s", err)
		})
	}
}

// TestUnreachableIsNotCharged: a request that never reached a server
// gives its reservation back; one that reached it does not.
func TestUnreachableIsNotCharged(t *testing.T) {
	srv := llmtest.New(t, nil)
	srv.Script(llmtest.Reply{Status: 500, Error: "boom"})
	for _, c := range []struct {
		url      string
		released int
	}{{closedPort(t), 2}, {srv.URL, 0}} {
		cl, _ := testClient(t, Config{BaseURL: c.url, MaxRetries: 1})
		reserved, released := 0, 0
		req := simpleRequest()
		req.Reserve = func(context.Context) error { reserved++; return nil }
		req.Release = func(context.Context) { released++ }
		comp, _ := cl.Complete(context.Background(), req)
		if reserved != 2 || released != c.released || comp.Released != c.released {
			t.Errorf("%s: %d reserved, %d released (%d counted), want 2, %d", c.url, reserved, released, comp.Released, c.released)
		}
	}
}

// TestCheck: the check before a campaign starts passes an endpoint that
// serves the model and refuses, with the reason, one that does not.
func TestCheck(t *testing.T) {
	cases := []struct {
		name   string
		server func(t *testing.T) string
		kind   string // "" passes
		says   string
	}{
		{name: "listed", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.SetModels("other", "test-model")
			return s.URL
		}},
		{name: "listed with a tag", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.SetModels("test-model:latest")
			return s.URL
		}},
		{name: "not listed but served", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.SetModels("alias-of-test-model")
			s.Script(ok("OK"))
			return s.URL
		}},
		{name: "not listed, not served", kind: KindModelNotFound, says: "the endpoint lists llama3, qwen2.5", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.SetModels("llama3", "qwen2.5")
			s.Script(llmtest.Reply{Status: 404, Error: "model not found"})
			return s.URL
		}},
		{name: "no models route", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.Script(ok("OK"))
			return s.URL
		}},
		{name: "models refuse the key", kind: KindUnauthorized, server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.FailModels(llmtest.Reply{Status: 401, Error: "Incorrect API key provided"})
			return s.URL
		}},
		{name: "probe rate limited", server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.Script(llmtest.Reply{Status: 429, Error: "slow down"})
			return s.URL
		}},
		{name: "probe server error", kind: KindServerError, server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.Script(llmtest.Reply{Status: 502, Error: "bad gateway"})
			return s.URL
		}},
		{name: "probe hangs", kind: KindTimeout, server: func(t *testing.T) string {
			s := llmtest.New(t, nil)
			s.Script(llmtest.Reply{Hang: true})
			return s.URL
		}},
		{name: "closed port", kind: KindConnRefused, server: closedPort},
		{name: "unknown host", kind: KindDNS, server: func(*testing.T) string { return "http://crucible-test.invalid/v1" }},
		{name: "untrusted certificate", kind: KindTLS, server: func(t *testing.T) string { return llmtest.NewTLS(t, nil).URL }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := c.server(t)
			timeout := 5 * time.Second
			if c.kind == KindTimeout {
				timeout = 200 * time.Millisecond
			}
			cl, _ := testClient(t, Config{BaseURL: url, Timeout: timeout})
			err := cl.Check(context.Background(), "test-model")
			var e *Error
			switch {
			case c.kind == "" && err != nil:
				t.Fatalf("error %v", err)
			case c.kind != "" && (!errors.As(err, &e) || e.Kind != c.kind):
				t.Fatalf("error %v, want kind %s", err, c.kind)
			case c.kind != "" && !strings.Contains(err.Error(), url):
				t.Fatalf("error %q does not name the endpoint", err)
			case c.says != "" && !strings.Contains(err.Error(), c.says):
				t.Fatalf("error %q does not say %q", err, c.says)
			}
			if err != nil {
				t.Logf("%v", err)
			}
		})
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// TestClassifyTransport: failures to connect are unreachable, whatever
// ended them; a request that connected and got no answer in time is a
// timeout.
func TestClassifyTransport(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://10.0.0.1/v1/chat/completions", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	cases := []struct {
		err  error
		kind string
	}{
		{dial(&os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}), KindConnRefused},
		{dial(&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}), KindDNS},
		{dial(timeoutError{}), KindConnection},
		{dial(context.DeadlineExceeded), KindConnection},
		{&url.Error{Op: "Post", URL: "http://x/v1", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, KindConnection},
		{&url.Error{Op: "Post", URL: "http://x/v1", Err: context.DeadlineExceeded}, KindTimeout},
		{&url.Error{Op: "Post", URL: "http://x/v1", Err: &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}}, KindTimeout},
	}
	for _, c := range cases {
		e := classify(c.err, nil)
		if e.Kind != c.kind {
			t.Errorf("classify(%v) = %s, want %s", c.err, e.Kind, c.kind)
		}
		if (c.kind == KindConnection || c.kind == KindConnRefused || c.kind == KindDNS) != errors.Is(e, ErrUnreachable) {
			t.Errorf("classify(%v): unreachable %v", c.err, errors.Is(e, ErrUnreachable))
		}
	}
}
