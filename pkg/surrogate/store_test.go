package surrogate

import (
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

func TestEnsureTrainsOnceIntoTheCache(t *testing.T) {
	dir := testbed.DataDir(t)
	cache := t.TempDir()
	t.Setenv(CacheEnv, cache)
	if _, err := os.Stat(Path(dir, "conductivity")); err == nil {
		t.Skip("the data directory holds a conductivity model")
	}
	_, _, err := Find("conductivity", dir)
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "crucible train conductivity") {
		t.Fatalf("Find without a model: %v, want ErrNoModel saying how to train it", err)
	}
	var trained atomic.Int32
	opt := EnsureOptions{
		Train: Options{Seed: 2, MaxSamples: 100, Params: quick},
		Log:   func(string, ...any) { trained.Add(1) },
	}
	var wg sync.WaitGroup
	models := make([]*Model, 3)
	paths := make([]string, 3)
	errs := make([]error, 3)
	for i := range models {
		wg.Go(func() { models[i], paths[i], errs[i] = Ensure("conductivity", dir, opt) })
	}
	wg.Wait()
	for i := range models {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if paths[i] != Path(cache, "conductivity") {
			t.Errorf("model at %s, want the cache's %s", paths[i], Path(cache, "conductivity"))
		}
	}
	if n := trained.Load(); n != 1 {
		t.Errorf("trained %d times, want once", n)
	}
	if !models[0].CV.Quick || models[0].Uncertainty.Log10Q68 <= 0 {
		t.Errorf("report quick %v, calibration %+v", models[0].CV.Quick, models[0].Uncertainty)
	}
	sum, err := DataChecksum("conductivity", dir)
	if err != nil || models[0].Training.SHA256 != sum {
		t.Errorf("training checksum %s, data %s (%v)", models[0].Training.SHA256, sum, err)
	}
	m, path, err := Find("conductivity", dir)
	if err != nil || path != paths[0] || m.Training.Trees != models[0].Training.Trees {
		t.Errorf("Find after Ensure: %v %s", err, path)
	}

	// A model trained on other data is stale: not used, and said so.
	m.Training.SHA256 = strings.Repeat("0", 64)
	if err := m.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Find("conductivity", dir); !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "other data") {
		t.Errorf("Find of a stale model: %v", err)
	}
}
