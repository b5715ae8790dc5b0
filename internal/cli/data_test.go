package cli

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/datadir"
)

func exitStatusOf(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestDataCheck(t *testing.T) {
	src := testbed.DataDir(t)
	out, _, err := runCLI(t, "", "data", "check", "--dir", src)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := strings.Count(out, "\nok "); n != len(datadir.Files()) {
		t.Errorf("%d files ok, want %d:\n%s", n, len(datadir.Files()), out)
	}

	empty := t.TempDir()
	out, _, err = runCLI(t, "", "data", "check", "--dir", empty)
	if exitStatusOf(err) != 1 || !strings.Contains(err.Error(), "crucible data pull") {
		t.Errorf("empty directory: error %v, want exit 1 naming data pull", err)
	}
	if !strings.Contains(out, "missing  data/mp_e_form.csv") {
		t.Errorf("empty directory:\n%s", out)
	}
}

func TestDataPull(t *testing.T) {
	src := testbed.DataDir(t)
	const corrupted = "/models/cgcnn/poisson-ratio.pth.tar"
	files := http.FileServer(http.Dir(src))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == corrupted {
			data, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(corrupted)))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			data[100] ^= 0xff
			w.Write(data)
			return
		}
		files.ServeHTTP(w, r)
	}))
	defer ts.Close()
	dst := t.TempDir()

	// The mirror from the environment; one file arrives corrupted.
	t.Setenv(datadir.EnvMirror, ts.URL)
	out, _, err := runCLI(t, "", "data", "pull", "--dir", dst)
	if exitStatusOf(err) != 1 {
		t.Fatalf("pull with a corrupted file: %v\n%s", err, out)
	}
	if !strings.Contains(out, "FAILED   models/cgcnn/poisson-ratio.pth.tar: checksum mismatch") {
		t.Errorf("no checksum failure reported:\n%s", out)
	}
	if n := strings.Count(out, "fetched  "); n != len(datadir.Files())-1 {
		t.Errorf("%d files fetched, want %d:\n%s", n, len(datadir.Files())-1, out)
	}
	out, _, err = runCLI(t, "", "data", "check", "--dir", dst)
	if exitStatusOf(err) != 1 || !strings.Contains(out, "missing  models/cgcnn/poisson-ratio.pth.tar") {
		t.Errorf("check after a failed file: %v\n%s", err, out)
	}

	// A good mirror given by flag: only the missing file is fetched.
	good := httptest.NewServer(files)
	defer good.Close()
	out, _, err = runCLI(t, "", "data", "pull", "--dir", dst, "--mirror", good.URL)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Count(out, "fetched  ") != 1 || strings.Count(out, "present  ") != len(datadir.Files())-1 {
		t.Errorf("second pull should fetch one file and skip the rest:\n%s", out)
	}
	if out, _, err := runCLI(t, "", "data", "check", "--dir", dst); err != nil {
		t.Errorf("check after the pull: %v\n%s", err, out)
	}
}
