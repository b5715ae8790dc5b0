package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/service/proposer"
)

// Sentinel errors of the client; every *Error matches one with errors.Is.
var (
	// ErrContextLength: the prompt (with the answer's room) is longer than
	// the model's context. The generator shrinks the prompt and retries
	// once.
	ErrContextLength = errors.New("prompt exceeds the model's context length")
	// ErrRateLimited: the endpoint kept answering 429 through every
	// retry, or asked for a longer wait than the client waits in place.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable: server errors, timeouts or failed connections
	// through every retry.
	ErrUnavailable = errors.New("endpoint unavailable")
	// ErrUnreachable: no connection to the endpoint through every retry
	// (refused, DNS, TLS, reset); it also matches ErrUnavailable and
	// proposer.ErrUnreachable.
	ErrUnreachable = errors.New("endpoint unreachable")
	// ErrRefused: the endpoint refuses the request for good: a wrong key
	// (401, 403), an unknown model (404), a spent quota.
	ErrRefused = errors.New("request refused")
	// ErrBadRequest: the endpoint rejected the request (400) for another
	// reason than its length or response format.
	ErrBadRequest = errors.New("bad request")
	// ErrCallBudget: the campaign's LLM call budget is spent; nothing was
	// sent.
	ErrCallBudget = errors.New("LLM call budget spent")
)

// Kinds of failure (Error.Kind), also the outcome label of the metrics and
// the error_kind of the prompt audit.
const (
	// No connection: the request never reached a server.
	KindConnRefused = "connection_refused" // nothing listens at the address
	KindDNS         = "dns"                // the host name does not resolve
	KindTLS         = "tls"                // the TLS handshake or certificate failed
	KindConnection  = "connection"         // no connection in time, reset, closed
	// A server answered, or may have.
	KindTimeout           = "timeout"
	KindRateLimited       = "rate_limited"
	KindServerError       = "server_error"
	KindContextLength     = "context_length"
	KindFormatUnsupported = "format_unsupported"
	KindUnauthorized      = "unauthorized"    // 401, 403: a wrong or missing key
	KindModelNotFound     = "model_not_found" // 404: an unknown model or a wrong URL
	KindQuota             = "quota"           // 429 insufficient_quota: the account's quota is spent
	KindBadRequest        = "bad_request"
	KindBudget            = "budget"
)

// reasons are the kinds in words, for messages.
var reasons = map[string]string{
	KindConnRefused: "connection refused", KindDNS: "host name not found", KindTLS: "TLS failed",
	KindConnection: "connection failed", KindTimeout: "no answer in time", KindRateLimited: "rate limited",
	KindServerError: "server error", KindContextLength: "prompt longer than the model's context",
	KindFormatUnsupported: "response format not supported", KindUnauthorized: "unauthorized",
	KindModelNotFound: "model or route not found", KindQuota: "quota spent", KindBadRequest: "bad request",
	KindBudget: "LLM budget spent",
}

// Error is a failed request, classified.
type Error struct {
	Kind string
	// Status is the HTTP status (0 when there was no response).
	Status int
	// Endpoint is the base URL the request went to ("" when none was
	// sent).
	Endpoint string
	Message  string
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms), 0 when it asked none.
	RetryAfter time.Duration
	Err        error
}

// Error reads "connection refused at http://127.0.0.1:9/v1: dial tcp …"
// or "model or route not found (HTTP 404) at …: The model … does not
// exist".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason())
	if e.Endpoint != "" {
		b.WriteString(" at ")
		b.WriteString(e.Endpoint)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Reason is the kind of failure in words, with the HTTP status.
func (e *Error) Reason() string {
	r, ok := reasons[e.Kind]
	if !ok {
		r = e.Kind
	}
	if e.Status != 0 {
		r += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	return r
}

func (e *Error) Unwrap() error { return e.Err }

// RetryDelay is the wait the server asked for (0: none): the proposer
// redelivers the generation no sooner.
func (e *Error) RetryDelay() time.Duration { return e.RetryAfter }

// LogFields describe the failure for a log line.
func (e *Error) LogFields() []zap.Field {
	return []zap.Field{zap.String("llm_endpoint", e.Endpoint), zap.String("error_kind", e.Kind), zap.Int("http_status", e.Status)}
}

// unreachable reports whether the request never reached a server.
func (e *Error) unreachable() bool {
	switch e.Kind {
	case KindConnRefused, KindDNS, KindTLS, KindConnection:
		return true
	}
	return false
}

// Is matches the sentinel of the error's kind.
func (e *Error) Is(target error) bool {
	switch e.Kind {
	case KindContextLength:
		return target == ErrContextLength
	case KindRateLimited:
		return target == ErrRateLimited
	case KindConnRefused, KindDNS, KindTLS, KindConnection:
		return target == ErrUnavailable || target == ErrUnreachable || target == proposer.ErrUnreachable
	case KindServerError, KindTimeout:
		return target == ErrUnavailable
	case KindUnauthorized, KindModelNotFound, KindQuota:
		return target == ErrRefused
	case KindBadRequest, KindFormatUnsupported:
		return target == ErrBadRequest
	case KindBudget:
		return target == ErrCallBudget
	}
	return false
}

// retryable reports whether the same request may succeed later. A
// certificate the client does not trust stays untrusted.
func (e *Error) retryable() bool {
	switch e.Kind {
	case KindRateLimited, KindServerError, KindTimeout, KindConnRefused, KindDNS, KindConnection:
		return true
	}
	return false
}

// contextLengthPhrases are how servers say a prompt is too long: OpenAI
// (code context_length_exceeded, "maximum context length"), vLLM ("This
// model's maximum context length is … tokens"), llama.cpp server ("the
// request exceeds the available context size"), LM Studio and others.
var contextLengthPhrases = []string{
	"context_length_exceeded", "context length", "context_length", "maximum context",
	"context window", "available context", "context size", "too many tokens",
	"prompt is too long", "input is too long", "reduce the length", "exceeds the maximum",
}

// formatPhrases are how servers say they do not support the response
// format asked for (response_format, json_schema, json_object, grammars).
var formatPhrases = []string{
	"response_format", "response format", "json_schema", "json schema", "json_object",
	"structured output", "guided_json", "grammar", "schema",
}

// classify turns a failed request into an *Error. headers are those of the
// response, if any came.
func classify(err error, headers http.Header) *Error {
	e := &Error{Err: err, RetryAfter: retryAfter(headers, time.Now())}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	code := ""
	switch {
	case errors.As(err, &apiErr):
		e.Status, e.Message = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Code != nil {
			code = fmt.Sprint(apiErr.Code)
		}
		if code == "" {
			code = apiErr.Type
		}
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Message = strings.TrimSpace(string(reqErr.Body))
		if e.Message == "" && reqErr.Err != nil {
			e.Message = reqErr.Err.Error()
		}
	case isDial(err) && !errors.Is(err, syscall.ECONNREFUSED) && !isDNS(err):
		// No connection within the time: the endpoint is unreachable, not
		// slow to answer.
		e.Kind, e.Message = KindConnection, err.Error()
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			e.Message = urlErr.Err.Error()
		}
		return e
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = KindTimeout, "no answer within the request timeout"
		return e
	default:
		var netErr net.Error
		var synErr *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		var dnsErr *net.DNSError
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			e.Kind = KindConnRefused
		case errors.As(err, &dnsErr):
			e.Kind = KindDNS
		case isTLSError(err):
			e.Kind = KindTLS
		case errors.As(err, &netErr) && netErr.Timeout():
			e.Kind = KindTimeout
		case errors.As(err, &netErr):
			// Reset or closed connections: every other transport error
			// (*url.Error is a net.Error).
			e.Kind = KindConnection
		case errors.As(err, &synErr) || errors.As(err, &typeErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			// A 200 whose body is not a completion (a proxy's HTML page,
			// a cut connection).
			e.Kind = KindServerError
		default:
			// go-openai refused to build the request.
			e.Kind = KindBadRequest
		}
		e.Message = err.Error()
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			e.Message = urlErr.Err.Error() // the URL is the Endpoint's
		}
		return e
	}
	if len(e.Message) > 500 {
		e.Message = e.Message[:500] + "…"
	}
	low := strings.ToLower(e.Message + " " + code)
	switch s := e.Status; {
	case s == http.StatusTooManyRequests:
		e.Kind = KindRateLimited
		if strings.Contains(low, "insufficient_quota") || strings.Contains(low, "exceeded your current quota") {
			e.Kind = KindQuota // retrying cannot help until someone pays
		}
	case s == http.StatusRequestTimeout:
		e.Kind = KindTimeout
	case s >= 500:
		e.Kind = KindServerError
		if containsAny(low, contextLengthPhrases) {
			e.Kind = KindContextLength // some servers answer 500 for it
		}
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		e.Kind = KindUnauthorized
	case s == http.StatusNotFound:
		e.Kind = KindModelNotFound
	case containsAny(low, contextLengthPhrases):
		e.Kind = KindContextLength
	case (s == http.StatusBadRequest || s == http.StatusUnprocessableEntity || s == http.StatusNotImplemented) && containsAny(low, formatPhrases):
		e.Kind = KindFormatUnsupported
	case s == http.StatusRequestEntityTooLarge:
		e.Kind = KindContextLength
	default:
		e.Kind = KindBadRequest
	}
	return e
}

// isDial reports a failure to connect (the dial of a TCP connection).
func isDial(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func isDNS(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// isTLSError reports a failed TLS handshake or an untrusted certificate.
func isTLSError(err error) bool {
	var rec tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var alert tls.AlertError
	return errors.As(err, &rec) || errors.As(err, &cert) || errors.As(err, &unknown) || errors.As(err, &host) ||
		errors.As(err, &invalid) || errors.As(err, &alert) || strings.Contains(err.Error(), "tls: ")
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// retryAfter reads the wait a response asks for: retry-after-ms
// (OpenAI), else Retry-After in seconds or as an HTTP date (RFC 9110
// §10.2.3). Zero when none or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// headerCapture receives the headers of the response to one request: the
// HTTP client wrapper fills it from the request's context, since go-openai
// returns errors without the response's headers.
type headerCapture struct {
	mu     sync.Mutex
	header http.Header
}

func (c *headerCapture) set(h http.Header) {
	c.mu.Lock()
	c.header = h.Clone()
	c.mu.Unlock()
}

func (c *headerCapture) get() http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.header
}

type captureKey struct{}

// capturingDoer is the HTTP client go-openai uses: it hands each
// response's headers to the capture in its request's context.
type capturingDoer struct{ inner *http.Client }

func (d capturingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.inner.Do(req)
	if resp != nil {
		if c, ok := req.Context().Value(captureKey{}).(*headerCapture); ok {
			c.set(resp.Header)
		}
	}
	return resp, err
}
