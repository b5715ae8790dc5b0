package modelclient

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/internal/testsrv"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/modelserver"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/reference"
)

// serve is a Go stand-in for a plug-in model server: it reads each
// request's pymatgen structures back and answers value = 10 × the
// density it computes from them (g/cm³), uncertainty 1, or the error
// unsupported_element for a structure with Cs, as a real server would for
// an element without embedding.
func serve(t *testing.T, nc *nats.Conn, subject string, batches *atomic.Int32) {
	t.Helper()
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		batches.Add(1)
		var req struct {
			Version    int    `json:"version"`
			Property   string `json:"property"`
			Structures []struct {
				ID        string          `json:"id"`
				Structure json.RawMessage `json:"structure"`
			} `json:"structures"`
		}
		rep := modelserver.Reply{Version: modelserver.Version}
		if err := json.Unmarshal(m.Data, &req); err != nil || req.Version != modelserver.Version {
			rep.Error = &modelserver.Error{Reason: "bad_request", Detail: "unreadable request"}
		}
		for _, s := range req.Structures {
			st, err := crystal.ParsePymatgenJSON(s.Structure)
			switch {
			case err != nil:
				rep.Results = append(rep.Results, modelserver.Result{ID: s.ID, Error: &modelserver.Error{Reason: "bad_structure", Detail: err.Error()}})
			case strings.Contains(st.Composition().ReducedFormula(), "Cs"):
				rep.Results = append(rep.Results, modelserver.Result{ID: s.ID, Error: &modelserver.Error{Reason: "unsupported_element", Detail: "no embedding for Cs"}})
			default:
				v, u := 10*st.Density(), 1.0
				rep.Results = append(rep.Results, modelserver.Result{ID: s.ID, Value: &v, Uncertainty: &u})
			}
		}
		data, _ := json.Marshal(rep)
		_ = m.Respond(data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
}

func TestPluginEndToEnd(t *testing.T) {
	url, _ := testsrv.NATS(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ns := testsrv.Namespace()
	reg, err := modelserver.ParseRegistry([]byte(`
models:
  - property: seebeck_coefficient
    unit: µV/K
    endpoint: ` + ns + `.model.seebeck
    uncertainty: 40
    batch: 2
    timeout: 5s
  - property: power_factor
    unit: µW/(cm·K²)
    endpoint: ` + ns + `.model.nobody
    uncertainty: 3
    timeout: 1s
`))
	if err != nil {
		t.Fatal(err)
	}
	var batches atomic.Int32
	serve(t, nc, ns+".model.seebeck", &batches)

	ref, err := reference.Load(testbed.DataPath(t, "data"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := oracle.New(ref, nil, oracle.Options{External: Clients(Static(nc), reg)})
	if err != nil {
		t.Fatal(err)
	}
	props := []string{"seebeck_coefficient", "power_factor"}
	structs := []*crystal.Structure{
		crystaltest.Build(t, "rocksalt", "NaCl"), crystaltest.Build(t, "rocksalt", "KCl"),
		crystaltest.Build(t, "cscl", "CsCl"), crystaltest.Build(t, "zincblende", "GaAs"),
	}
	var reqs []oracle.Request
	for _, s := range structs {
		reqs = append(reqs, oracle.Request{Structure: s, Properties: props})
	}
	reqs = append(reqs, oracle.Request{Structure: structs[0]}) // asks for nothing
	res, err := o.Evaluate(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if n := batches.Load(); n != 2 {
		t.Errorf("%d requests for 4 structures in batches of 2", n)
	}
	for i, r := range res[:4] {
		v, ok := r.Properties["seebeck_coefficient"]
		if i == 2 {
			if ok || !hasWarning(r, "unsupported_element") {
				t.Errorf("CsCl: %+v, warnings %+v: want the server's unsupported_element", v, r.Warnings)
			}
		} else if !ok || v.Source != oracle.SourcePlugin || v.Unit != "µV/K" || v.Uncertainty != 1 ||
			math.Abs(v.Value-10*structs[i].Density()) > 1e-9 {
			t.Errorf("%s: seebeck %+v, want 10 × density %.4g ± 1 from the plug-in", r.Formula, v, 10*structs[i].Density())
		}
		if _, ok := r.Properties["power_factor"]; ok || !hasWarning(r, "no_responders") {
			t.Errorf("%s: power_factor without a server: warnings %+v", r.Formula, r.Warnings)
		}
	}
	if _, ok := res[4].Properties["seebeck_coefficient"]; ok {
		t.Error("a request that does not name the property got it")
	}

	// A server that does not answer in time.
	slow, err := nc.Subscribe(ns+".model.slow", func(m *nats.Msg) { time.Sleep(1500 * time.Millisecond) })
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Unsubscribe()
	c := &Client{Conn: Static(nc), Entry: modelserver.Model{Property: "seebeck_coefficient", Unit: "µV/K", Endpoint: ns + ".model.slow",
		Uncertainty: 1, Batch: 8, Timeout: 300 * time.Millisecond}}
	vals := c.Predict(context.Background(), structs[:1])
	if len(vals) != 1 || vals[0].Err == nil || vals[0].Err.Reason != modelserver.ReasonTimeout {
		t.Errorf("slow server: %+v, want timeout", vals)
	}
}

func hasWarning(r oracle.Result, reason string) bool {
	for _, w := range r.Warnings {
		if w.Code == oracle.ReasonPlugin && strings.Contains(w.Detail, reason) {
			return true
		}
	}
	return false
}
