package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// ProgressInterval is how often the console reads the campaigns'
// counters for progress events (once for all the event streams open).
const ProgressInterval = 500 * time.Millisecond

// heartbeat keeps idle event streams open through proxies.
const heartbeat = 15 * time.Second

// Discovery is the body of a discovery event: an accepted verdict in
// brief.
type Discovery struct {
	Campaign   string   `json:"campaign"`
	ID         string   `json:"id"`
	Formula    string   `json:"formula"`
	EAboveHull *float64 `json:"e_above_hull,omitempty"`
	JudgedAt   string   `json:"judged_at"`
}

// event is one server-sent event.
type event struct {
	name string
	data any
}

// events streams server-sent events (text/event-stream) for every
// campaign, or one with ?campaign=ID: "progress" (a Campaign, whenever its
// counters or state change, read from the store by the server's one
// poller), "status" (a status event
// of the CAMPAIGNS stream) and "discovery" (a Discovery, from the
// DISCOVERIES stream), from the moment of connection on.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	filter := "*"
	if c := r.URL.Query().Get("campaign"); c != "" {
		if err := messages.ValidateCampaignID(c); err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		filter = c
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Errorf("the connection cannot stream"))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	out := make(chan event, 64)
	send := func(e event) {
		select {
		case out <- e:
		case <-ctx.Done():
		}
	}
	follow := func(stream, prefix string, decode func([]byte) (event, bool)) {
		err := s.Client.FollowNew(ctx, stream, messages.Subject(prefix, filter), nil, func(_ string, data []byte) (bool, error) {
			if e, ok := decode(data); ok {
				send(e)
			}
			return false, nil
		})
		if err != nil && ctx.Err() == nil {
			s.Log.Warn("console events", zap.String("stream", stream), zap.Error(err))
		}
	}
	go follow(messages.StreamCampaigns, messages.SubjectStatus, func(data []byte) (event, bool) {
		var st messages.Status
		if err := messages.Decode(data, &st); err != nil {
			return event{}, false
		}
		return event{"status", &st}, true
	})
	go follow(messages.StreamDiscoveries, messages.SubjectDiscoveries, func(data []byte) (event, bool) {
		var v messages.Verdict
		if err := messages.Decode(data, &v); err != nil {
			return event{}, false
		}
		return event{"discovery", Discovery{Campaign: v.Campaign, ID: v.ID, Formula: v.Formula,
			EAboveHull: v.Evaluation.EAboveHull, JudgedAt: v.JudgedAt.Format(time.RFC3339)}}, true
	})
	sub, unsubscribe := s.progressHub().subscribe(filter)
	defer unsubscribe()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": crucible console events\n\n")
	flusher.Flush()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
			fmt.Fprint(w, ": heartbeat\n\n")
		case <-sub.notify:
			for _, c := range sub.take() {
				if !write(w, event{"progress", c}) {
					return
				}
			}
		case e := <-out:
			if !write(w, e) {
				return
			}
		}
		flusher.Flush()
	}
}

// write writes one server-sent event; false when the connection failed.
func write(w http.ResponseWriter, e event) bool {
	data, err := json.Marshal(e.data)
	if err != nil {
		return true // nothing of ours fails to marshal; skip it if it did
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, data)
	return err == nil
}
