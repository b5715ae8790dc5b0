package reference

import (
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
)

// TestReferenceData checks the published tables: row counts (those of the
// data folder's README) and values of well-known compounds read from the
// files.
func TestReferenceData(t *testing.T) {
	db, err := Load(testbed.DataPath(t, "data"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[Table]int{
		FormationEnergy: 132752, EnergyAboveHull: 56662, BandGap: 106113,
		BulkModulus: 6307, ShearModulus: 6184, Log10BulkModulus: 10987, Log10ShearModulus: 10987,
		RefractiveIndex: 4764,
	}
	for tb, want := range rows {
		if got, _ := db.Size(tb); got != want {
			t.Errorf("%s: %d rows, want %d", tb.Name, got, want)
		}
	}
	tests := []struct {
		property, formula string
		value             float64
		count             int
	}{
		// mp_e_form rows of NaCl: Cl1Na1 −1.951…, Cl6Na6 −2.0455…, Cl1Na1 −2.1049…
		{"formation_energy_per_atom", "NaCl", -2.10492632913, 3},
		// mp_gap: Cl6Na6 4.3855, Cl1Na1 5.0033 → median 4.6944.
		{"band_gap", "NaCl", (4.3855 + 5.003299999999999) / 2, 2},
		{"e_above_hull", "NaCl", 0, 1},
		// dielectric: Cl1Na1 n = 1.577386129012174.
		{"dielectric_electronic", "NaCl", 1.577386129012174 * 1.577386129012174, 1},
	}
	for _, tc := range tests {
		v, ok := db.Property(tc.property, tc.formula)
		if !ok || !near(v.Value, tc.value) || v.Count != tc.count {
			t.Errorf("%s of %s = %+v (found %v), want %v over %d entries", tc.property, tc.formula, v, ok, tc.value, tc.count)
		}
	}
	// Every reduced composition of mp_e_form is one hull entry.
	if _, formulas := db.Size(FormationEnergy); len(db.HullEntries()) != formulas {
		t.Errorf("%d hull entries for %d formulas", len(db.HullEntries()), formulas)
	}
	if !db.Known("SrTiO3") || !db.Known("GaN") || db.Known("Na7Cl3O11") {
		t.Error("Known: SrTiO3 and GaN must be known, Na7Cl3O11 not")
	}
}

// BenchmarkLoad measures loading every table (about 8 MB of CSV).
func BenchmarkLoad(b *testing.B) {
	dir := testbed.DataPath(b, "data")
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
