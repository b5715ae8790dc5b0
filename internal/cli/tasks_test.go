package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTasksList(t *testing.T) {
	out, _, err := runCLI(t, "", "tasks")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Hard, Stiff Ceramics (Structural)",
		"Bulk modulus 100–300 GPa",
		"Toxic_Free_Perovskite_Oxide",
		"support: every property from surrogates, the structure or the hull",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runCLI(t, "", "tasks", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 14 {
		t.Fatalf("--json: %d lines, want 14", len(lines))
	}
	for i, l := range lines {
		var tk struct {
			Name        string   `json:"name"`
			Support     string   `json:"support"`
			Unsupported []string `json:"unsupported"`
		}
		if err := json.Unmarshal([]byte(l), &tk); err != nil {
			t.Fatal(err)
		}
		if tk.Support != "surrogate" || len(tk.Unsupported) != 0 {
			t.Errorf("line %d: %+v, want support surrogate", i+1, tk)
		}
	}
}

func TestTasksShow(t *testing.T) {
	out, _, err := runCLI(t, "", "tasks", "show", "wide", "bandgap", "semiconductors")
	if err != nil || !strings.Contains(out, "Stable Wide-Bandgap Semiconductors") || !strings.Contains(out, "goal: ") {
		t.Errorf("show: %v\n%s", err, out)
	}
	out, _, err = runCLI(t, "", "tasks", "show", "--yaml", "Photovoltaic Absorbers")
	if err != nil || !strings.Contains(out, "earth_abundant: true") {
		t.Errorf("show --yaml: %v\n%s", err, out)
	}
	if _, _, err := runCLI(t, "", "tasks", "show", "Superconductors"); err == nil {
		t.Error("show of an unknown task: want an error")
	}
}

func TestTasksCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.csv")
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(good, []byte("Task,Goal\nMine,\"Band gap >= 2 eV, exclude Pb, low cost\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("Task,Goal\nOK,Band gap 1-2 eV\nBad,Hardness >= 3 GPa\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "", "tasks", "check", good)
	if err != nil {
		t.Fatalf("check good: %v", err)
	}
	for _, want := range []string{"Band gap ≥ 2 eV", "must not contain Pb", "note: low cost", `warning: line 2: Mine: not understood, kept as a note: "low cost"`} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, err := runCLI(t, "", "tasks", "check", bad)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("check bad: err %v, want exit status 1", err)
	}
	if !strings.Contains(out, "Band gap 1–2 eV") || !strings.Contains(errOut, `line 3 ("Bad")`) {
		t.Errorf("check bad: stdout\n%s\nstderr\n%s", out, errOut)
	}
}
