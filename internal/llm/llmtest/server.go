// Package llmtest is an OpenAI-compatible chat-completions server for
// tests: it answers with scripted replies (answers, error statuses,
// Retry-After headers, hangs) and then with a default answerer, after a
// fixed latency if asked, lists models at GET /models if told them, speaks
// HTTPS with an untrusted certificate if started so (NewTLS), and keeps
// every request it received. Substitute is an answerer that reads the
// demonstrations of Crucible's prompt and answers with same-group
// substitutions of them, so a whole campaign can run against it.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one answer of the server.
type Reply struct {
	// Status is the HTTP status (200 when zero).
	Status int
	// Header adds response headers (Retry-After, retry-after-ms).
	Header map[string]string
	// Error and ErrorCode make an OpenAI error body for a status ≥ 400.
	Error, ErrorCode string
	// Body, when set, is sent verbatim instead.
	Body string
	// Content is the completion's text (status 200).
	Content string
	// Finish is the finish reason ("stop" when empty).
	Finish string
	// PromptTokens and CompletionTokens are the usage reported; NoUsage
	// reports none (as some local servers do).
	PromptTokens, CompletionTokens int
	NoUsage                        bool
	// Hang never answers: the request waits until the client gives up.
	Hang bool
	// ToolCalls, when set, answer with function calls (finish reason
	// "tool_calls") instead of content.
	ToolCalls []ToolCall
}

// ToolCall is a function call of a reply.
type ToolCall struct {
	ID, Name, Arguments string
}

// ToolResult is a tool message of a request: the result of a call.
type ToolResult struct {
	CallID, Content string
}

// Request is a request the server received.
type Request struct {
	Model       string
	Temperature float64
	MaxTokens   int
	// MaxCompletionTokens is set instead of MaxTokens for reasoning
	// models.
	MaxCompletionTokens int
	Seed                *int
	// Format is the response_format type asked for ("" for none).
	Format       string
	System, User string
	// Tools are the names of the function tools offered; ToolResults the
	// tool messages sent back, in order.
	Tools       []string
	ToolResults []ToolResult
	Auth        string // the Authorization header
	// Arrived is when the request arrived (before any latency).
	Arrived time.Time
}

// Server is a fake OpenAI-compatible endpoint.
type Server struct {
	// URL is the base URL to configure clients with (…/v1).
	URL string

	srv                   *httptest.Server
	stop                  chan struct{}
	mu                    sync.Mutex
	script                []Reply
	answer                func(Request) Reply
	refuse                map[string]bool
	requests              []Request
	models                []string // served at GET /models; nil: no such route
	modelsReply           *Reply   // GET /models answers this instead
	latency               time.Duration
	inFlight, maxInFlight int
}

// New starts a server that answers with answer once its script is spent
// (nil answers 500 "no scripted reply"). It is closed when the test ends.
func New(t testing.TB, answer func(Request) Reply) *Server {
	t.Helper()
	s := Start(answer)
	t.Cleanup(s.Close)
	return s
}

// Start starts a server outside a test; the caller closes it.
func Start(answer func(Request) Reply) *Server {
	s := &Server{answer: answer, refuse: map[string]bool{}, stop: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	return s
}

// NewTLS starts a server speaking HTTPS with a certificate no client
// trusts (httptest's), for tests of TLS failures. It is closed when the
// test ends.
func NewTLS(t testing.TB, answer func(Request) Reply) *Server {
	t.Helper()
	s := &Server{answer: answer, refuse: map[string]bool{}, stop: make(chan struct{})}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(s.handle))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// SetModels makes GET /models list ids (by default the server has no
// such route and answers 404).
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = append([]string{}, ids...)
	s.mu.Unlock()
}

// FailModels makes GET /models answer r (an error status).
func (s *Server) FailModels(r Reply) {
	s.mu.Lock()
	s.modelsReply = &r
	s.mu.Unlock()
}

// SetLatency makes every chat completion take d before it is answered,
// as a model's generation does.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	s.latency = d
	s.mu.Unlock()
}

// MaxInFlight is the most chat completions the server was answering at
// once.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Close stops the server; hanging requests return.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.mu.Unlock()
	s.srv.Close()
}

// Script queues replies, answered in order before the default answerer.
func (s *Server) Script(r ...Reply) {
	s.mu.Lock()
	s.script = append(s.script, r...)
	s.mu.Unlock()
}

// RefuseFormat makes the server answer 400 to requests asking for a
// response format ("json_schema", "json_object"), as servers without
// structured output do.
func (s *Server) RefuseFormat(format string) {
	s.mu.Lock()
	s.refuse[format] = true
	s.mu.Unlock()
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Temperature         float64 `json:"temperature"`
	MaxTokens           int     `json:"max_tokens"`
	MaxCompletionTokens int     `json:"max_completion_tokens"`
	Seed                *int    `json:"seed"`
	ResponseFormat      *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		s.handleModels(w, r)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "no route "+r.URL.Path, "")
		return
	}
	arrived := time.Now()
	s.mu.Lock()
	latency := s.latency
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.stop:
			t.Stop()
			return
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "")
		return
	}
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		writeError(w, http.StatusBadRequest, "bad JSON: "+err.Error(), "")
		return
	}
	req := Request{Model: cr.Model, Temperature: cr.Temperature, MaxTokens: cr.MaxTokens, MaxCompletionTokens: cr.MaxCompletionTokens,
		Seed: cr.Seed, Auth: r.Header.Get("Authorization"), Arrived: arrived}
	if cr.ResponseFormat != nil {
		req.Format = cr.ResponseFormat.Type
	}
	for _, m := range cr.Messages {
		switch m.Role {
		case "system":
			req.System += m.Content
		case "user":
			req.User += m.Content
		case "tool":
			req.ToolResults = append(req.ToolResults, ToolResult{CallID: m.ToolCallID, Content: m.Content})
		}
	}
	for _, t := range cr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	refused := s.refuse[req.Format]
	var reply Reply
	switch {
	case refused:
		reply = Reply{Status: http.StatusBadRequest, Error: fmt.Sprintf("response_format type %q is not supported by this server", req.Format)}
	case len(s.script) > 0:
		reply, s.script = s.script[0], s.script[1:]
	case s.answer != nil:
		s.mu.Unlock()
		reply = s.answer(req)
		s.mu.Lock()
	default:
		reply = Reply{Status: http.StatusInternalServerError, Error: "no scripted reply"}
	}
	s.mu.Unlock()

	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-s.stop:
		}
		return
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	status := reply.Status
	if status == 0 {
		status = http.StatusOK
	}
	if reply.Body != "" {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply.Body)
		return
	}
	if status >= 400 {
		writeError(w, status, reply.Error, reply.ErrorCode)
		return
	}
	finish := reply.Finish
	if finish == "" {
		finish = "stop"
	}
	message := map[string]any{"role": "assistant", "content": reply.Content}
	if len(reply.ToolCalls) > 0 {
		calls := make([]map[string]any, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			calls[i] = map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		}
		message["tool_calls"] = calls
		if reply.Finish == "" {
			finish = "tool_calls"
		}
	}
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": finish, "message": message}},
	}
	if !reply.NoUsage {
		resp["usage"] = map[string]any{"prompt_tokens": reply.PromptTokens, "completion_tokens": reply.CompletionTokens,
			"total_tokens": reply.PromptTokens + reply.CompletionTokens}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

// handleModels answers GET /models: the models set, a scripted failure,
// or 404.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	models, fail := s.models, s.modelsReply
	s.mu.Unlock()
	switch {
	case fail != nil:
		writeError(w, fail.Status, fail.Error, fail.ErrorCode)
	case models == nil:
		writeError(w, http.StatusNotFound, "no route "+r.URL.Path, "")
	default:
		data := make([]map[string]any, len(models))
		for i, id := range models {
			data[i] = map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "test"}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
	}
}

func writeError(w http.ResponseWriter, status int, msg, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	e := map[string]any{"message": msg, "type": "invalid_request_error"}
	if code != "" {
		e["code"] = code
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

// RetryAfter is the header map of a 429 asking to wait secs seconds.
func RetryAfter(secs float64) map[string]string {
	return map[string]string{"Retry-After": strconv.FormatFloat(secs, 'f', -1, 64)}
}
