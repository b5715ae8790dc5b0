package hull

import (
	"strings"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
)

func TestBenchHull(t *testing.T) {
	golden := testbed.DataPath(t, "golden", "hull", "phase_diagrams.json")
	res, err := Run(Options{Golden: golden, MinTime: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := res.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"Li-O", "Li-Ni-Co-Mn-O", "total", "pymatgen (golden)"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	// An interpreter that cannot import pymatgen is a clear error.
	_, err = Run(Options{Golden: golden, MinTime: time.Millisecond, Pymatgen: true, Python: "/nonexistent/python", Repeats: 1})
	if err == nil || !strings.Contains(err.Error(), "--pymatgen") {
		t.Errorf("missing interpreter: %v", err)
	}
}
