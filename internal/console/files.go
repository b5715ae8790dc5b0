package console

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/crucible-sci/crucible/internal/results"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// evaluations answers a campaign's evaluations as a JSON array, the last
// ?limit ones (all without).
func (s *Server) evaluations(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("limit %q: want a non-negative integer", v))
			return
		}
		limit = n
	}
	evs, err := s.Client.Evaluations(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	if limit > 0 && len(evs) > limit {
		evs = evs[len(evs)-limit:]
	}
	if evs == nil {
		evs = []*messages.Evaluation{}
	}
	writeJSON(w, http.StatusOK, evs)
}

// download answers ?format=csv (every evaluation, "crucible results
// --format csv") or the discoveries' structures: cif (one data block
// each; with &symmetrize=1 in the standard setting of each one's space
// group, as "crucible results --symmetrize"), json (an array of pymatgen
// Structure dicts), xyz (one frame each). POSCAR holds one structure: it
// is offered per structure.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("format")
	var f crystal.Format
	if name != "csv" {
		var err error
		if f, err = crystal.ParseWriteFormat(name); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("format: %w (or csv)", err))
			return
		}
		if f == crystal.FormatPOSCAR {
			writeError(w, http.StatusBadRequest, fmt.Errorf("a POSCAR holds one structure: download each from /api/campaigns/%s/structures/ID?format=poscar", id))
			return
		}
	}
	ctx := r.Context()
	evs, err := s.Client.Evaluations(ctx, id)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	var buf bytes.Buffer
	ext := ".csv"
	if name == "csv" {
		err = results.WriteCSV(&buf, evs)
	} else {
		accepted, derr := s.Client.Discovered(ctx, id)
		if derr != nil {
			writeError(w, http.StatusServiceUnavailable, derr)
			return
		}
		var found []*messages.Evaluation
		for _, ev := range evs {
			if accepted[ev.ID] {
				found = append(found, ev)
			}
		}
		symmetrize := r.URL.Query().Get("symmetrize") == "1"
		if symmetrize && f != crystal.FormatCIF {
			writeError(w, http.StatusBadRequest, fmt.Errorf("symmetrize: only a CIF has a space-group setting (format cif)"))
			return
		}
		err, ext = results.WriteStructures(&buf, "", f, found, symmetrize), f.Extension()
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	file := id + "-discoveries" + ext
	if name == "csv" {
		file = id + "-evaluations.csv"
	}
	attach(w, file, buf.Bytes())
}

// structure answers one candidate's final structure, ?format=cif
// (default), poscar, json (pymatgen) or xyz.
func (s *Server) structure(w http.ResponseWriter, r *http.Request) {
	id, ok := s.campaignID(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("format")
	if name == "" {
		name = "cif"
	}
	f, err := crystal.ParseWriteFormat(name)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("format: %w", err))
		return
	}
	cand := r.PathValue("candidate")
	evs, err := s.Client.Evaluations(r.Context(), id)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err)
		return
	}
	for _, ev := range evs {
		if ev.ID != cand {
			continue
		}
		st, err := ev.FinalStructure().Crystal()
		if err != nil {
			writeError(w, http.StatusUnprocessableEntity, fmt.Errorf("%s: %w", cand, err))
			return
		}
		var buf bytes.Buffer
		if err := crystal.WriteStructure(&buf, st, f, "candidate "+cand); err != nil {
			writeError(w, http.StatusUnprocessableEntity, fmt.Errorf("%s: %w", cand, err))
			return
		}
		if r.URL.Query().Get("inline") == "1" {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write(buf.Bytes())
			return
		}
		attach(w, cand+f.Extension(), buf.Bytes())
		return
	}
	writeError(w, http.StatusNotFound, fmt.Errorf("campaign %s has no evaluated candidate %q", id, cand))
}

// attach writes data as a file download named name.
func attach(w http.ResponseWriter, name string, data []byte) {
	ct := "text/plain; charset=utf-8"
	switch {
	case strings.HasSuffix(name, ".json"):
		ct = "application/json"
	case strings.HasSuffix(name, ".csv"):
		ct = "text/csv; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	_, _ = w.Write(data)
}
