// Package console is the web console of "crucible serve": a JSON API over
// an installation's NATS and Redis (the client's reads), server-sent
// events of campaign progress, status and discoveries, the lifecycle verbs
// behind a token, and the embedded web application that uses them
// (docs/console.md).
package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/internal/client"
	"github.com/crucible-sci/crucible/internal/report"
	"github.com/crucible-sci/crucible/internal/store"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// Server serves the console. The zero Control is ReadOnly; an empty
// Token refuses every lifecycle verb (the console is read-only).
type Server struct {
	Client  *client.Client
	Control Controller
	// Token authorises the lifecycle verbs (Authorization: Bearer TOKEN).
	Token string
	Log   *zap.Logger
	// Assets are the web application's files (Assets() by default).
	Assets fs.FS

	mu       sync.Mutex
	cache    map[string]cached
	hubOnce  sync.Once
	progress *hub
}

// progressHub returns the server's progress poller.
func (s *Server) progressHub() *hub {
	s.hubOnce.Do(func() { s.progress = &hub{read: s.campaigns, period: ProgressInterval} })
	return s.progress
}

// cached is a campaign's report data and the state it was built at.
type cached struct {
	key  string
	data *report.Data
}

// Handler returns the console's routes.
func (s *Server) Handler() http.Handler {
	if s.Control == nil {
		s.Control = ReadOnly{}
	}
	if s.Log == nil {
		s.Log = zap.NewNop()
	}
	assets := s.Assets
	if assets == nil {
		assets = Assets()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.ready)
	mux.HandleFunc("GET /api/info", s.info)
	mux.HandleFunc("GET /api/campaigns", s.list)
	mux.HandleFunc("GET /api/campaigns/{id}", s.detail)
	mux.HandleFunc("GET /api/campaigns/{id}/plots/{plot}", s.plot)
	mux.HandleFunc("GET /api/campaigns/{id}/evaluations", s.evaluations)
	mux.HandleFunc("GET /api/campaigns/{id}/download", s.download)
	mux.HandleFunc("GET /api/campaigns/{id}/structures/{candidate}", s.structure)
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("POST /api/campaigns/{id}/{verb}", s.lifecycle)
	mux.HandleFunc("GET /api/campaigns/{id}/deadletters", s.deadLetters)
	mux.HandleFunc("POST /api/campaigns/{id}/deadletters/retry", s.retryDeadLetters)
	mux.Handle("GET /", http.FileServerFS(assets))
	return mux
}

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, apiError{Error: err.Error()})
}

// campaignID reads and checks the {id} of a route: 400 when malformed,
// 404 when the store does not hold it.
func (s *Server) campaignID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if err := messages.ValidateCampaignID(id); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return "", false
	}
	if _, err := s.Client.Store.Spec(r.Context(), id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			writeError(w, http.StatusNotFound, fmt.Errorf("no campaign %s", id))
		} else {
			writeError(w, http.StatusServiceUnavailable, err)
		}
		return "", false
	}
	return id, true
}

// ready answers 200 when the store answers, 503 otherwise.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if _, err := s.Client.Store.Campaigns(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

func (s *Server) info(w http.ResponseWriter, _ *http.Request) {
	_, readOnly := s.Control.(ReadOnly)
	writeJSON(w, http.StatusOK, map[string]bool{"control": s.Token != "" && !readOnly})
}

// Campaign is a campaign of the list: its task, state, budget and counters.
type Campaign struct {
	Campaign string            `json:"campaign"`
	Task     string            `json:"task"`
	State    string            `json:"state"`
	Budget   int               `json:"budget"`
	Counters messages.Counters `json:"counters"`
	// Progress is evaluated / budget, in [0, 1].
	Progress float64 `json:"progress"`
}

// campaigns reads every campaign's spec and state; a campaign whose spec
// or state cannot be read (being deleted) is left out.
func (s *Server) campaigns(ctx context.Context) ([]Campaign, error) {
	ids, err := s.Client.Store.Campaigns(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Campaign, 0, len(ids))
	for _, id := range ids {
		spec, st, err := s.Client.Campaign(ctx, id)
		if err != nil {
			continue
		}
		c := Campaign{Campaign: id, Task: spec.Task.Name, State: st.Status, Budget: spec.Budget, Counters: st.Counters}
		if spec.Budget > 0 {
			c.Progress = min(1, float64(st.Counters.Evaluated)/float64(spec.Budget))
		}
		out = append(out, c)
	}
	return out, nil
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	cs, err := s.campaigns(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, cs)
}

// data returns a campaign's report data, rebuilt from the streams only
// when its state (counters and status) changed since the last build.
func (s *Server) data(ctx context.Context, id string) (*report.Data, error) {
	_, st, err := s.Client.Campaign(ctx, id)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s/%d/%d/%d", st.Status, st.Counters.Evaluated, st.Counters.Discoveries, st.Counters.JudgeRejected)
	s.mu.Lock()
	c, ok := s.cache[id]
	s.mu.Unlock()
	if ok && c.key == key {
		return c.data, nil
	}
	d, err := report.FromClient(ctx, s.Client, id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[string]cached{}
	}
	s.cache[id] = cached{key: key, data: d}
	s.mu.Unlock()
	return d, nil
}

func (s *Server) detail(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	d, err := s.data(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) plot(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	name := strings.TrimSuffix(r.PathValue("plot"), ".svg")
	d, err := s.data(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	for _, c := range report.Charts(d) {
		if c.Name == name {
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(c.SVG()))
			return
		}
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("no plot %q (want curve, rates or pareto)", name))
}

// lifecycle runs a verb: POST /api/campaigns/{id}/{cancel|pause|resume|
// delete}, or extend with {"budget": N}.
func (s *Server) lifecycle(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	verb := r.PathValue("verb")
	ctx := r.Context()
	var err error
	switch verb {
	case "cancel":
		err = s.Control.Cancel(ctx, id)
	case "pause":
		err = s.Control.Pause(ctx, id)
	case "resume":
		err = s.Control.Resume(ctx, id)
	case "delete":
		err = s.Control.Delete(ctx, id)
	case "extend":
		var body struct {
			Budget int `json:"budget"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
		dec.DisallowUnknownFields()
		if derr := dec.Decode(&body); derr != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("extend: body %v (want {\"budget\": N})", derr))
			return
		}
		if body.Budget < 1 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("extend: budget %d, want a positive number of evaluations", body.Budget))
			return
		}
		err = s.Control.Extend(ctx, id, body.Budget)
	default:
		writeError(w, http.StatusNotFound, fmt.Errorf("no verb %q (want cancel, pause, resume, extend or delete)", verb))
		return
	}
	switch {
	case errors.Is(err, ErrUnsupported):
		writeError(w, http.StatusNotImplemented, fmt.Errorf("%s: %w", verb, err))
	case err != nil:
		writeError(w, http.StatusConflict, fmt.Errorf("%s %s: %w", verb, id, err))
	default:
		s.Log.Info("console lifecycle verb", zap.String("campaign", id), zap.String("verb", verb))
		writeJSON(w, http.StatusOK, map[string]string{"campaign": id, "done": verb})
	}
}
