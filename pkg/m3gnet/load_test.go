package m3gnet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	m := testModel(t)
	if len(m.elements) != 89 || m.cutoff != 5 || m.cutoff3 != 4 {
		t.Errorf("%d elements, cutoffs %g, %g Å; want 89, 5, 4", len(m.elements), m.cutoff, m.cutoff3)
	}
	// Values NOTES.md gives for the published file.
	if got := float32(m.scale); got != 4.5861335 {
		t.Errorf("data_std %v, want 4.5861335", got)
	}
	if got := float32(m.embedding[0]); got != 0.17732158 {
		t.Errorf("embedding[0,0] %v, want 0.17732158", got)
	}
}

// TestLoadRejects checks that a model.json this implementation cannot
// evaluate, an unknown key, and a state file that is not a torch zip are
// refused with ErrModel.
func TestLoadRejects(t *testing.T) {
	testModel(t)
	src := filepath.Join(os.Getenv("CRUCIBLE_DATA"), DataPath)
	raw, err := os.ReadFile(filepath.Join(src, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string][2]string{
		"use_phi":     {`"use_phi": false`, `"use_phi": true`},
		"max_n":       {`"max_n": 3`, `"max_n": 4`},
		"unknown key": {`"use_phi": false`, `"use_phi": false, "use_psi": 1`},
		"cutoff":      {`"threebody_cutoff": 4.0`, `"threebody_cutoff": 6.0`},
	} {
		if !strings.Contains(string(raw), edit[0]) {
			t.Fatalf("%s: model.json lacks %q", name, edit[0])
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(strings.Replace(string(raw), edit[0], edit[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(src, "state.pt"), filepath.Join(dir, "state.pt")); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(dir); !errors.Is(err, ErrModel) {
			t.Errorf("%s: %v, want ErrModel", name, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "state.pt"), []byte("PK\x03\x04 not really a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrModel) {
		t.Errorf("corrupt state.pt: %v, want ErrModel", err)
	}
}
