package local

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/store"
)

// TestMemoryOnState: the memory verbs on a state directory import a bank,
// list it, show it and export it as the JSON they import.
func TestMemoryOnState(t *testing.T) {
	state := t.TempDir()
	in := filepath.Join(t.TempDir(), "banks.json")
	data, _ := json.Marshal([]*store.BankDump{{Context: "wide_gap"}})
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		var w bytes.Buffer
		if err := Memory(ctx, &w, nil, state, args); err != nil {
			t.Fatalf("memory %v: %v", args, err)
		}
		return w.String()
	}
	run("import", in)
	if out := run("list"); !strings.Contains(out, "wide_gap") {
		t.Errorf("list after import: %q, want the bank wide_gap", out)
	}
	var got []*store.BankDump
	if err := json.Unmarshal([]byte(run("export")), &got); err != nil || len(got) != 1 || got[0].Context != "wide_gap" {
		t.Errorf("export: %v %v, want the one bank wide_gap", got, err)
	}
	if err := Memory(ctx, &bytes.Buffer{}, nil, state, []string{"show", "absent"}); err == nil {
		t.Error("show of a bank that does not exist: no error")
	}
}

// TestOutDir: a new run's folder defaults to crucible-out/<id> and must be
// empty; a resumed run keeps its folder as it is.
func TestOutDir(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OutDir(full, "", "c1", false); err == nil {
		t.Error("a folder with files: no error without force")
	}
	if out, err := OutDir("", full, "c1", false); out != full || err != nil {
		t.Errorf("resume: %q %v, want %q", out, err, full)
	}
	t.Chdir(t.TempDir())
	if out, err := OutDir("", "", "c1", false); out != filepath.Join("crucible-out", "c1") || err != nil {
		t.Errorf("default: %q %v", out, err)
	}
}
