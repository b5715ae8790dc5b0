package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHullJSON(t *testing.T) {
	out, _, err := runCLI(t, "", "hull", "--entries", "testdata/hull/entries.csv",
		"--query", "testdata/hull/queries.csv", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Li–O by hand (atomic fraction of O: Li2O 1/3, Li2O2 1/2, LiO2 2/3).
	want := []struct {
		id, formula string
		eah, hull   float64
		stable      *bool
		decomp      map[string]float64
	}{
		{"li2o", "Li2O", 0, -2.0, new(true), map[string]float64{"Li2O": 1}},
		{"li2o2", "Li2O2", 0, -1.7, new(true), map[string]float64{"Li2O2": 1}},
		{"lio2", "LiO2", 1.7/1.5 - 1, -1.7 / 1.5, new(false), map[string]float64{"Li2O2": 2.0 / 3, "O2": 1.0 / 3}},
		{"li2o-b", "Li4O2", 0.1, -2.0, new(false), map[string]float64{"Li2O": 1}},
		{"query-1", "Li3O2", -1.9 + 1.88, -1.88, nil, map[string]float64{"Li2O": 0.6, "Li2O2": 0.4}},
		{"query-2", "LiO2", -1.2 + 1.7/1.5, -1.7 / 1.5, nil, map[string]float64{"Li2O2": 2.0 / 3, "O2": 1.0 / 3}},
		{"query-3", "FeO", -0.5, 0, nil, map[string]float64{"Fe": 0.5, "O2": 0.5}},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(lines[i]), &keys); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		wantKeys := []string{"id", "formula", "e_above_hull", "hull_energy_per_atom", "decomposition"}
		if w.stable != nil {
			wantKeys = append(wantKeys, "stable")
		}
		if len(keys) != len(wantKeys) {
			t.Errorf("line %d: keys %v, want %v", i+1, keys, wantKeys)
		}
		for _, k := range wantKeys {
			if _, ok := keys[k]; !ok {
				t.Errorf("line %d: no key %q", i+1, k)
			}
		}
		var got struct {
			ID            string             `json:"id"`
			Formula       string             `json:"formula"`
			EAboveHull    float64            `json:"e_above_hull"`
			HullEnergy    float64            `json:"hull_energy_per_atom"`
			Stable        *bool              `json:"stable"`
			Decomposition map[string]float64 `json:"decomposition"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		if got.ID != w.id || got.Formula != w.formula || math.Abs(got.EAboveHull-w.eah) > 1e-12 ||
			math.Abs(got.HullEnergy-w.hull) > 1e-12 || (w.stable != nil && *got.Stable != *w.stable) {
			t.Errorf("line %d: %s", i+1, lines[i])
		}
		if len(got.Decomposition) != len(w.decomp) {
			t.Errorf("line %d: decomposition %v, want %v", i+1, got.Decomposition, w.decomp)
		}
		for f, x := range w.decomp {
			if math.Abs(got.Decomposition[f]-x) > 1e-12 {
				t.Errorf("line %d: decomposition %v, want %v", i+1, got.Decomposition, w.decomp)
			}
		}
	}
}

func TestHullTable(t *testing.T) {
	out, _, err := runCLI(t, "", "hull", "--entries", "testdata/hull/entries.csv", "--query", "testdata/hull/queries.csv")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/hull/table.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
}

func TestHullBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "id,formula,e_form_per_atom\na,Li2O,-2\n")
	tests := []struct {
		name, entries, queries string
		want                   string // in the error message, after the file name
	}{
		{"bad formula", "id,formula,e_form_per_atom\na,Li2O,-2\nb,Xq2O,-1\n", "", ":3: unknown element"},
		{"bad energy", "id,formula,e_form_per_atom\na,Li2O,abc\n", "", `:2: e_form_per_atom "abc" is not a finite number`},
		{"NaN energy", "id,formula,e_form_per_atom\na,Li2O,NaN\n", "", `:2: e_form_per_atom "NaN"`},
		{"empty id", "id,formula,e_form_per_atom\n,Li2O,-1\n", "", ":2: empty id"},
		{"conflicting id", "id,formula,e_form_per_atom\na,Li2O,-2\nb,O,0\na,Li2O2,-1\n", "", `:4: duplicate entry id: "a" already used on line 2`},
		{"missing column", "id,formula\na,Li2O\n", "", `:1: header "id,formula" has no column "e_form_per_atom"`},
		{"wrong field count", "id,formula,e_form_per_atom\na,Li2O,-2,7\n", "", ":2: wrong number of fields"},
		{"no entries", "id,formula,e_form_per_atom\n", "", ": no entries"},
		{"empty file", "", "", ": empty file"},
		{"bad query", "", "formula,e_form_per_atom\nLi2O,-1\nLi(O,-1\n", ":3: bad formula"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"hull", "--entries", good}
			file := good
			if tt.entries != "" || tt.queries == "" {
				file = write("entries.csv", tt.entries)
				args[2] = file
			}
			if tt.queries != "" {
				file = write("queries.csv", tt.queries)
				args = append(args, "--query", file)
			}
			_, _, err := runCLI(t, "", args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), file+tt.want) {
				t.Errorf("error %q, want %q", err, file+tt.want)
			}
		})
	}
	if _, _, err := runCLI(t, "", "hull"); err == nil || !strings.Contains(err.Error(), "entries") {
		t.Errorf("no --entries: %v", err)
	}
	if _, _, err := runCLI(t, "", "hull", "--entries", filepath.Join(dir, "absent.csv")); err == nil {
		t.Error("absent file: no error")
	}
}
