package predict

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// A short run checks the predictions against the golden values and times
// each configuration; a missing reference interpreter is a clear error.
func TestRun(t *testing.T) {
	data := testbed.DataDir(t)
	testbed.DataPath(t, "golden", "cgcnn", "predictions.json")
	res, err := Run(context.Background(), Options{DataDir: data, MinTime: time.Millisecond, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.bench.worstErr > 1e-9 || res.bench.compared == 0 {
		t.Errorf("max |Δ| %g over %d structures", res.bench.worstErr, res.bench.compared)
	}
	if len(res.rates) != 3 {
		t.Fatalf("%d configurations timed, want one thread and 1, 2 workers", len(res.rates))
	}
	var b strings.Builder
	if err := res.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"crucible, one thread", "crucible, 1 worker", "crucible, 2 workers", "check: max |Δ|"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	_, err = Run(context.Background(), Options{DataDir: data, MinTime: time.Millisecond, Workers: 1, Reference: true, Python: "/nonexistent/python"})
	if err == nil || !strings.Contains(err.Error(), "--reference") {
		t.Errorf("missing interpreter: %v", err)
	}
	if _, err := Run(context.Background(), Options{DataDir: data, Workers: 0}); err == nil {
		t.Error("no workers: no error")
	}
}
