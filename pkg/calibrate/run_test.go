package calibrate

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteReport: a tier's header, then a row per property with its
// unit (in log10 for a log-scale surrogate) and its exclusions.
func TestWriteReport(t *testing.T) {
	c := &Calibration{
		Set: Set{Formulas: []string{"NaCl", "MgO"}, Checksum: "0123456789abcdef"},
		Tiers: map[string]Tier{TierScreen: {Properties: map[string]Stats{
			"band_gap":     {Unit: "eV", N: 2, MAE: 0.5, Bias: -0.1, Q68: 0.4, Q95: 0.9},
			"conductivity": {Unit: "S/cm", N: 1, MAE: 1, Log10: true, Excluded: map[string]int{"outside domain": 3}},
		}}},
	}
	var w bytes.Buffer
	c.WriteReport(&w)
	lines := strings.Split(strings.TrimSpace(w.String()), "\n")
	want := []string{
		"tier " + TierScreen + ", 2 compounds (set 0123456789ab…)",
		"property",
		"band_gap",
		"conductivity",
		"excluded: outside domain",
	}
	if len(lines) != len(want) {
		t.Fatalf("report:\n%s\nwant %d lines", w.String(), len(want))
	}
	for i, l := range lines {
		if !strings.Contains(l, want[i]) {
			t.Errorf("line %d %q: want %q in it", i, l, want[i])
		}
	}
	if !strings.HasSuffix(lines[3], "log10 of S/cm") || !strings.HasSuffix(lines[2], "  eV") {
		t.Errorf("units: %q, %q", lines[2], lines[3])
	}
}
