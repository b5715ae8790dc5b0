package console

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/client"
)

// DeadLetters is the answer of GET /api/campaigns/{id}/deadletters: the
// count of the campaign's dead letters the query selects, by reason
// (client.DeadLetterEntry.ReasonClass), and the last Limit of them.
type DeadLetters struct {
	Campaign    string                   `json:"campaign"`
	Total       int                      `json:"total"`
	ByReason    map[string]int           `json:"by_reason"`
	DeadLetters []client.DeadLetterEntry `json:"deadletters"`
}

// DefaultDeadLetterLimit and MaxDeadLetterLimit bound the dead letters
// one answer carries (each holds a body of up to 64 KiB).
const (
	DefaultDeadLetterLimit = 100
	MaxDeadLetterLimit     = 1000
)

// deadLetters answers GET /api/campaigns/{id}/deadletters[?stream=S]
// [&reason=TEXT][&since=DUR][&limit=N]: read-only, no token.
func (s *Server) deadLetters(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "stream" && k != "reason" && k != "since" && k != "limit" {
			writeError(w, http.StatusBadRequest, fmt.Errorf("unknown parameter %q (want stream, reason, since or limit)", k))
			return
		}
	}
	f := client.DeadLetterFilter{Campaign: id, Stream: q.Get("stream"), Reason: q.Get("reason")}
	limit := DefaultDeadLetterLimit
	if v := q.Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since %q: want a positive duration (30m, 24h)", v))
			return
		}
		f.Since = d
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxDeadLetterLimit {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want 1 to %d", v, MaxDeadLetterLimit))
			return
		}
		limit = n
	}
	if err := f.Check(); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	entries, err := s.Client.DeadLetters(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	out := DeadLetters{Campaign: id, Total: len(entries), ByReason: client.DeadLetterCounts(entries), DeadLetters: entries}
	if len(entries) > limit {
		out.DeadLetters = entries[len(entries)-limit:]
	}
	if out.DeadLetters == nil {
		out.DeadLetters = []client.DeadLetterEntry{}
	}
	writeJSON(w, http.StatusOK, out)
}

// RetryRequest is the optional body of POST
// /api/campaigns/{id}/deadletters/retry: which of the campaign's dead
// letters to retry (all of them when it selects nothing), or only say
// which would be.
type RetryRequest struct {
	Seq    []uint64 `json:"seq,omitempty"`
	Stream string   `json:"stream,omitempty"`
	Reason string   `json:"reason,omitempty"`
	DryRun bool     `json:"dry_run,omitempty"`
}

// RetryAnswer is what the retry did with each dead letter selected.
type RetryAnswer struct {
	Campaign string                `json:"campaign"`
	Outcomes []client.RetryOutcome `json:"outcomes"`
}

// retryDeadLetters answers POST /api/campaigns/{id}/deadletters/retry,
// which needs the control token; the console's NATS user must be allowed
// to re-publish work and remove dead letters (403 otherwise).
func (s *Server) retryDeadLetters(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if _, readOnly := s.Control.(ReadOnly); readOnly {
		writeError(w, http.StatusNotImplemented, fmt.Errorf("retry: %w", ErrUnsupported))
		return
	}
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	var req RetryRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil && !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, fmt.Errorf("retry: body %v (want {\"seq\": [N...], \"stream\": S, \"reason\": TEXT, \"dry_run\": BOOL}, every key optional)", err))
		return
	}
	ctx := r.Context()
	f := client.DeadLetterFilter{Campaign: id, Stream: req.Stream, Reason: req.Reason, Seqs: req.Seq}
	if err := f.Check(); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	entries, err := s.Client.DeadLetters(ctx, f)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	outcomes, err := s.Client.Retry(ctx, entries, req.DryRun)
	switch {
	case errors.Is(err, client.ErrNeedsOperator):
		writeError(w, http.StatusForbidden, err)
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err)
	default:
		s.Log.Info("console dead-letter retry", zap.String("campaign", id), zap.Int("selected", len(outcomes)), zap.Bool("dry_run", req.DryRun))
		writeJSON(w, http.StatusOK, RetryAnswer{Campaign: id, Outcomes: outcomes})
	}
}

// authorized checks the control token of a request that changes
// something, answering 403 (no token configured) or 401 (missing or
// wrong) when it fails.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.Token == "" {
		writeError(w, http.StatusForbidden, errors.New("the console is read-only: start it with a control token (CRUCIBLE_CONSOLE_TOKEN) to use the lifecycle verbs"))
		return false
	}
	got, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="crucible"`)
		writeError(w, http.StatusUnauthorized, errors.New("missing or wrong token (Authorization: Bearer TOKEN)"))
		return false
	}
	return true
}
