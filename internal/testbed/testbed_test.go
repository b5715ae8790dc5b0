package testbed

import (
	"os"
	"path/filepath"
	"testing"
)

// Without CRUCIBLE_DATA, the data folder is ../shared beside the module's
// root, found from any package directory below it.
func TestFindDataDir(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "clone")
	pkg := filepath.Join(root, "pkg", "cgcnn")
	shared := filepath.Join(base, "shared")
	for _, d := range []string{pkg, filepath.Join(shared, "data"), filepath.Join(shared, "models", "cgcnn")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv("CRUCIBLE_DATA", "")
	if dir, ok := FindDataDir(); !ok || dir != shared {
		t.Errorf("FindDataDir() = %q, %v; want %q", dir, ok, shared)
	}
	// A folder without the models is not the data folder.
	if err := os.RemoveAll(filepath.Join(shared, "models")); err != nil {
		t.Fatal(err)
	}
	if dir, ok := FindDataDir(); ok {
		t.Errorf("FindDataDir() = %q without models/cgcnn", dir)
	}
	// CRUCIBLE_DATA wins, and must exist.
	t.Setenv("CRUCIBLE_DATA", shared)
	if dir, ok := FindDataDir(); !ok || dir != shared {
		t.Errorf("CRUCIBLE_DATA: %q, %v", dir, ok)
	}
	t.Setenv("CRUCIBLE_DATA", filepath.Join(base, "absent"))
	if _, ok := FindDataDir(); ok {
		t.Error("a CRUCIBLE_DATA that does not exist is found")
	}
}
