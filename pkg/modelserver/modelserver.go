// Package modelserver is the contract of plug-in surrogates: property models
// served by an external process (a GPU model such as ALIGNN or MACE, an
// in-house one) over NATS request/reply, declared in the data directory's
// model registry, so that a property is added without changing Crucible.
//
// # Registry
//
// <data>/models/registry.yaml lists the plug-ins:
//
//	models:
//	  - property: seebeck_coefficient   # a property name of the task registry
//	    unit: µV/K                      # must be the property's unit
//	    endpoint: crucible.model.seebeck  # NATS subject the server answers on
//	    uncertainty: 40                 # σ in unit when a reply gives none
//	    batch: 32                       # structures per request (default 32)
//	    timeout: 30s                    # per request (default 30s)
//	    description: ALIGNN n-Seebeck, JARVIS-DFT
//
// Unknown keys, unknown properties, a unit that is not the property's and
// two plug-ins for one property are errors.
//
// # Messages
//
// A request (JSON) holds up to batch structures as pymatgen Structure
// dictionaries (Structure.as_dict(), read by Structure.from_dict):
//
//	{"version": 1, "property": "seebeck_coefficient",
//	 "structures": [{"id": "0", "structure": {...}}, ...]}
//
// The reply has one result per structure, in any order, matched by id:
//
//	{"version": 1, "results": [
//	   {"id": "0", "value": 152.3, "uncertainty": 35.0},
//	   {"id": "1", "error": {"reason": "unsupported_element", "detail": "no embedding for Og"}}]}
//
// or, when the whole request failed, {"version": 1, "error": {"reason":
// …, "detail": …}}. uncertainty is optional (the registry's is used); a
// value must be finite, an uncertainty finite and non-negative. Reasons a
// server may give: bad_request, bad_structure, unsupported_element,
// outside_domain, model_error, overloaded; the client adds timeout,
// no_responders, bad_reply and missing (no result for a structure). Every
// failure is recorded on the candidate as a warning with its reason; none
// stops a campaign.
package modelserver

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/crucible-sci/crucible/pkg/task"
)

// RegistryFile is the registry's path in a data directory.
const RegistryFile = "models/registry.yaml"

// Version of the message contract.
const Version = 1

// Defaults of a registry entry.
const (
	DefaultBatch   = 32
	DefaultTimeout = 30 * time.Second
)

// ErrRegistry: a registry file that cannot be used.
var ErrRegistry = errors.New("bad model registry")

// Model is one plug-in of the registry.
type Model struct {
	Property    string        `yaml:"property"`
	Unit        string        `yaml:"unit"`
	Endpoint    string        `yaml:"endpoint"`
	Uncertainty float64       `yaml:"uncertainty"`
	Batch       int           `yaml:"batch"`
	Timeout     time.Duration `yaml:"timeout"`
	Description string        `yaml:"description"`
}

// Registry is the model registry.
type Registry struct {
	Models []Model `yaml:"models"`
}

// ByProperty returns the plug-in of a property.
func (r *Registry) ByProperty(property string) (Model, bool) {
	if r == nil {
		return Model{}, false
	}
	for _, m := range r.Models {
		if m.Property == property {
			return m, true
		}
	}
	return Model{}, false
}

// Properties lists the properties the plug-ins provide.
func (r *Registry) Properties() []string {
	if r == nil {
		return nil
	}
	out := make([]string, len(r.Models))
	for i, m := range r.Models {
		out[i] = m.Property
	}
	return out
}

// LoadRegistry reads the registry of a data directory; a directory
// without one has an empty registry (nil, nil).
func LoadRegistry(dir string) (*Registry, error) {
	path := filepath.Join(dir, filepath.FromSlash(RegistryFile))
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := ParseRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// ParseRegistry reads and checks a registry.
func ParseRegistry(data []byte) (*Registry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var r Registry
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRegistry, err)
	}
	seen := map[string]bool{}
	for i := range r.Models {
		m := &r.Models[i]
		p, err := task.PropertyByName(m.Property)
		if err != nil {
			return nil, fmt.Errorf("%w: models[%d]: %v", ErrRegistry, i, err)
		}
		if p.Name != m.Property {
			return nil, fmt.Errorf("%w: models[%d]: property %q: use the canonical name %q", ErrRegistry, i, m.Property, p.Name)
		}
		if m.Unit != p.Unit {
			return nil, fmt.Errorf("%w: models[%d] (%s): unit %q, the property's is %q", ErrRegistry, i, m.Property, m.Unit, p.Unit)
		}
		if m.Endpoint == "" {
			return nil, fmt.Errorf("%w: models[%d] (%s): no endpoint (the NATS subject its server answers on)", ErrRegistry, i, m.Property)
		}
		if !(m.Uncertainty > 0) || math.IsInf(m.Uncertainty, 0) {
			return nil, fmt.Errorf("%w: models[%d] (%s): uncertainty %v must be positive: the judge weighs margins by it", ErrRegistry, i, m.Property, m.Uncertainty)
		}
		if m.Batch < 0 || m.Timeout < 0 {
			return nil, fmt.Errorf("%w: models[%d] (%s): negative batch or timeout", ErrRegistry, i, m.Property)
		}
		if m.Batch == 0 {
			m.Batch = DefaultBatch
		}
		if m.Timeout == 0 {
			m.Timeout = DefaultTimeout
		}
		if seen[m.Property] {
			return nil, fmt.Errorf("%w: two plug-ins for %s", ErrRegistry, m.Property)
		}
		seen[m.Property] = true
	}
	return &r, nil
}

// Request is a batch of structures to predict.
type Request struct {
	Version    int         `json:"version"`
	Property   string      `json:"property"`
	Structures []Structure `json:"structures"`
}

// Structure is one structure of a request: an id and a pymatgen
// Structure dictionary.
type Structure struct {
	ID        string `json:"id"`
	Structure any    `json:"structure"`
}

// Reply is a server's answer.
type Reply struct {
	Version int      `json:"version"`
	Results []Result `json:"results,omitempty"`
	Error   *Error   `json:"error,omitempty"`
}

// Result is one structure's value or error.
type Result struct {
	ID          string   `json:"id"`
	Value       *float64 `json:"value,omitempty"`
	Uncertainty *float64 `json:"uncertainty,omitempty"`
	Error       *Error   `json:"error,omitempty"`
}

// Error is why a structure or a request got no value.
type Error struct {
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}

func (e *Error) Error() string { return e.Reason + ": " + e.Detail }

// Reasons the client gives.
const (
	ReasonTimeout      = "timeout"
	ReasonNoResponders = "no_responders"
	ReasonBadReply     = "bad_reply"
	ReasonMissing      = "missing"
)

// Value is a plug-in's prediction for one structure, or why there is none.
type Value struct {
	Value, Uncertainty float64
	Err                *Error
}

// Check turns a reply to a request of n structures (ids "0" … "n−1") into
// one Value per structure, with the registry's uncertainty where the
// reply gives none. A malformed reply fails every structure with
// bad_reply.
func (m Model) Check(rep *Reply, n int) []Value {
	out := make([]Value, n)
	fail := func(e *Error) []Value {
		for i := range out {
			out[i] = Value{Err: e}
		}
		return out
	}
	if rep.Version != Version {
		return fail(&Error{Reason: ReasonBadReply, Detail: fmt.Sprintf("version %d, want %d", rep.Version, Version)})
	}
	if rep.Error != nil {
		return fail(rep.Error)
	}
	got := make([]bool, n)
	for _, r := range rep.Results {
		var i int
		if _, err := fmt.Sscanf(r.ID, "%d", &i); err != nil || i < 0 || i >= n || fmt.Sprint(i) != r.ID || got[i] {
			return fail(&Error{Reason: ReasonBadReply, Detail: fmt.Sprintf("result id %q is not one of the request's, or repeated", r.ID)})
		}
		got[i] = true
		switch {
		case r.Error != nil:
			out[i] = Value{Err: r.Error}
		case r.Value == nil || math.IsNaN(*r.Value) || math.IsInf(*r.Value, 0):
			out[i] = Value{Err: &Error{Reason: ReasonBadReply, Detail: fmt.Sprintf("%s: value missing or not finite", m.Property)}}
		case r.Uncertainty != nil && (!(*r.Uncertainty >= 0) || math.IsInf(*r.Uncertainty, 0)):
			out[i] = Value{Err: &Error{Reason: ReasonBadReply, Detail: fmt.Sprintf("%s: uncertainty %v", m.Property, *r.Uncertainty)}}
		default:
			u := m.Uncertainty
			if r.Uncertainty != nil {
				u = *r.Uncertainty
			}
			out[i] = Value{Value: *r.Value, Uncertainty: u}
		}
	}
	for i := range out {
		if !got[i] {
			out[i] = Value{Err: &Error{Reason: ReasonMissing, Detail: "no result for this structure"}}
		}
	}
	return out
}
