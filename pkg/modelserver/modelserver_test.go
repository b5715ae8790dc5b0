package modelserver

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseRegistry(t *testing.T) {
	r, err := ParseRegistry([]byte("models:\n  - {property: seebeck_coefficient, unit: µV/K, endpoint: m.seebeck, uncertainty: 40}\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.ByProperty("seebeck_coefficient")
	if !ok || m.Batch != DefaultBatch || m.Timeout != DefaultTimeout {
		t.Errorf("defaults: %+v", m)
	}
	r, err = ParseRegistry([]byte("models:\n  - {property: conductivity, unit: S/cm, endpoint: m.s, uncertainty: 1, timeout: 2s, batch: 4}\n"))
	if err != nil || r.Models[0].Timeout != 2*time.Second || r.Models[0].Batch != 4 {
		t.Errorf("timeout and batch: %+v %v", r, err)
	}
	for name, bad := range map[string]string{
		"unknown key":      "models:\n  - {property: conductivity, unit: S/cm, endpoint: m, uncertainty: 1, gpu: true}\n",
		"unknown property": "models:\n  - {property: hardness, unit: GPa, endpoint: m, uncertainty: 1}\n",
		"alias":            "models:\n  - {property: sigma, unit: S/cm, endpoint: m, uncertainty: 1}\n",
		"wrong unit":       "models:\n  - {property: conductivity, unit: S/m, endpoint: m, uncertainty: 1}\n",
		"no endpoint":      "models:\n  - {property: conductivity, unit: S/cm, uncertainty: 1}\n",
		"no uncertainty":   "models:\n  - {property: conductivity, unit: S/cm, endpoint: m}\n",
		"twice":            "models:\n  - {property: conductivity, unit: S/cm, endpoint: m, uncertainty: 1}\n  - {property: conductivity, unit: S/cm, endpoint: n, uncertainty: 1}\n",
	} {
		if _, err := ParseRegistry([]byte(bad)); !errors.Is(err, ErrRegistry) {
			t.Errorf("%s: %v, want ErrRegistry", name, err)
		}
	}
	if r, err := LoadRegistry(t.TempDir()); r != nil || err != nil {
		t.Errorf("no registry file: %v %v", r, err)
	}
}

func TestCheck(t *testing.T) {
	m := Model{Property: "conductivity", Uncertainty: 7}
	f := func(v float64) *float64 { return &v }
	vals := m.Check(&Reply{Version: 1, Results: []Result{
		{ID: "2", Value: f(3), Uncertainty: f(0.5)},
		{ID: "0", Value: f(1)},
		{ID: "1", Error: &Error{Reason: "outside_domain", Detail: "a metal"}},
	}}, 4)
	if vals[0].Value != 1 || vals[0].Uncertainty != 7 || vals[2].Value != 3 || vals[2].Uncertainty != 0.5 ||
		vals[1].Err.Reason != "outside_domain" || vals[3].Err.Reason != ReasonMissing {
		t.Errorf("Check: %+v", vals)
	}
	for name, rep := range map[string]*Reply{
		"version":    {Version: 2},
		"bad id":     {Version: 1, Results: []Result{{ID: "x", Value: f(1)}}},
		"repeated":   {Version: 1, Results: []Result{{ID: "0", Value: f(1)}, {ID: "0", Value: f(1)}}},
		"whole":      {Version: 1, Error: &Error{Reason: "overloaded"}},
		"no value":   {Version: 1, Results: []Result{{ID: "0"}}},
		"negative σ": {Version: 1, Results: []Result{{ID: "0", Value: f(1), Uncertainty: f(-1)}}},
	} {
		v := m.Check(rep, 1)
		if v[0].Err == nil {
			t.Errorf("%s: %+v, want an error", name, v)
		} else if name != "whole" && name != "no value" && name != "negative σ" && !strings.Contains(v[0].Err.Reason, ReasonBadReply) {
			t.Errorf("%s: reason %s", name, v[0].Err.Reason)
		}
	}
}
