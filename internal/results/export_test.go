package results

import (
	"bytes"
	"encoding/csv"
	"testing"

	"github.com/crucible-sci/crucible/pkg/messages"
)

// TestWriteCSVUnits: the CSV heads each property with its unit and gives
// its uncertainty and source.
func TestWriteCSVUnits(t *testing.T) {
	ehull := 0.05
	evs := []*messages.Evaluation{{
		ID: "c-g0-0", Candidate: messages.Candidate{Formula: "ZnO"}, EAboveHull: &ehull,
		Properties: map[string]messages.PropertyValue{
			"band_gap": {Value: 3.1, Unit: "eV", Source: "cgcnn", Uncertainty: 0.39},
			"density":  {Value: 5.6, Unit: "g/cm^3", Source: "structure"},
		},
	}}
	var b bytes.Buffer
	if err := WriteCSV(&b, evs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	got := map[string]string{}
	for i, h := range rows[0] {
		got[h] = rows[1][i]
	}
	for h, want := range map[string]string{
		"e_above_hull [eV/atom]": "0.05", "band_gap [eV]": "3.1", "band_gap uncertainty [eV]": "0.39", "band_gap source": "cgcnn",
		"density [g/cm^3]": "5.6", "density uncertainty [g/cm^3]": "", "density source": "structure",
	} {
		if v, ok := got[h]; !ok || v != want {
			t.Errorf("column %q = %q (present %v), want %q", h, v, ok, want)
		}
	}
}
