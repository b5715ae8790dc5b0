// Package testbed gives tests the environment they may use: the reference
// data folder and the addresses of real NATS and Redis servers.
package testbed

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FindDataDir returns the data folder tests read (laid out like the
// project's data folder: data/, models/cgcnn/, golden/): the one named by
// CRUCIBLE_DATA when it is set, else ../shared beside the module's root
// (the directory holding go.mod, found by walking up from the working
// directory) when it holds data/ and models/cgcnn/. ok is false when
// there is none, or CRUCIBLE_DATA names a folder that does not exist.
func FindDataDir() (dir string, ok bool) {
	if dir := os.Getenv("CRUCIBLE_DATA"); dir != "" {
		_, err := os.Stat(dir)
		return dir, err == nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", false
	}
	shared := filepath.Join(filepath.Dir(root), "shared")
	if isDir(filepath.Join(shared, "data")) && isDir(filepath.Join(shared, "models", "cgcnn")) {
		return shared, true
	}
	return "", false
}

// ModuleRoot returns the directory holding the module's go.mod: the
// nearest at or above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// DataDir returns the data folder (FindDataDir). Tests that need the real
// data call it and are skipped, with the reason, when there is none.
func DataDir(t testing.TB) string {
	t.Helper()
	dir, ok := FindDataDir()
	switch {
	case !ok && dir != "":
		t.Skipf("CRUCIBLE_DATA=%s does not exist: skipping a test that needs the reference data", dir)
	case !ok:
		t.Skip("no reference data: CRUCIBLE_DATA is not set and there is no ../shared beside the module's root; skipping a test that needs it")
	}
	return dir
}

// DataPath joins parts onto DataDir and skips the test when the file is
// absent.
func DataPath(t testing.TB, parts ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{DataDir(t)}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference file missing: %v", err)
	}
	return p
}

// NATSURL is the real NATS server to test against (CRUCIBLE_TEST_NATS_URL),
// or "" when tests should start an embedded one.
func NATSURL() string { return os.Getenv("CRUCIBLE_TEST_NATS_URL") }

// RedisURL is the real Redis server to test against
// (CRUCIBLE_TEST_REDIS_URL), or "" when tests should start an embedded one.
func RedisURL() string { return os.Getenv("CRUCIBLE_TEST_REDIS_URL") }
