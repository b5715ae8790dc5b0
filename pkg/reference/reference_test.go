package reference

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/task"
)

func loadFixture(t *testing.T) *DB {
	t.Helper()
	db, err := Load(filepath.Join("testdata", "tables"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestLookupCombinesPolymorphs(t *testing.T) {
	db := loadFixture(t)
	tests := []struct {
		table   Table
		formula string
		want    Stats
	}{
		// Cl1Na1, Cl6Na6 and NaCl are one reduced formula.
		{FormationEnergy, "NaCl", Stats{Count: 3, Min: -2.1, Median: -2.0, Max: -1.9, MinRow: 1, MinFormula: "Cl6Na6"}},
		// A repeated formula string that becomes the lowest later on.
		{FormationEnergy, "TiO2", Stats{Count: 3, Min: -3.5, Median: -3.45, Max: -3.4, MinRow: 11, MinFormula: "O2Ti1"}},
		{FormationEnergy, "Na", Stats{Count: 2, Min: 0, Median: 0.05, Max: 0.1, MinRow: 3, MinFormula: "Na1"}},
		{FormationEnergy, "Cl2", Stats{Count: 1, Min: 0, Median: 0, Max: 0, MinRow: 5, MinFormula: "Cl2"}},
		{FormationEnergy, "Sr(AlH)2", Stats{Count: 1, Min: -0.5, Median: -0.5, Max: -0.5, MinRow: 6, MinFormula: "Sr(AlH)2"}},
		// Even count: the mean of the two middle values. CRLF line ends.
		{BandGap, "NaCl", Stats{Count: 2, Min: 4, Median: 4.5, Max: 5, MinRow: 0, MinFormula: "Cl6Na6"}},
		{BandGap, "TiO2", Stats{Count: 3, Min: 1.8, Median: 2.0, Max: 3.0, MinRow: 2, MinFormula: "TiO2"}},
		// A byte-order mark and a trailing blank line.
		{RefractiveIndex, "TiO2", Stats{Count: 2, Min: 2.5, Median: 2.55, Max: 2.6, MinRow: 1, MinFormula: "TiO2"}},
	}
	for _, tc := range tests {
		got, ok := db.Lookup(tc.table, tc.formula)
		if !ok {
			t.Errorf("%s %s: not found", tc.table.Name, tc.formula)
			continue
		}
		if got.Count != tc.want.Count || got.MinRow != tc.want.MinRow || got.MinFormula != tc.want.MinFormula ||
			!near(got.Min, tc.want.Min) || !near(got.Median, tc.want.Median) || !near(got.Max, tc.want.Max) {
			t.Errorf("%s %s = %+v, want %+v", tc.table.Name, tc.formula, got, tc.want)
		}
	}
	if _, ok := db.Lookup(BandGap, "Cl1Na1"); ok {
		t.Error("lookup by an unreduced formula succeeded; keys must be reduced formulas")
	}
	if rows, formulas := db.Size(FormationEnergy); rows != 12 || formulas != 7 {
		t.Errorf("Size(mp_e_form) = %d rows, %d formulas; want 12, 7", rows, formulas)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

func TestProperty(t *testing.T) {
	db := loadFixture(t)
	tests := []struct {
		name, formula string
		value         float64
		table         string
		rule          Rule
		count         int
	}{
		{"formation_energy_per_atom", "NaCl", -2.1, "mp_e_form", Lowest, 3},
		{"e_above_hull", "TiO2", 0, "mp_e_hull", Lowest, 2},
		{"band_gap", "TiO2", 2.0, "mp_gap", Median, 3},
		// log10 table first: median of 1.3617… and 1.3 in log10, then 10^x.
		{"bulk_modulus", "NaCl", math.Pow(10, (1.3617278360175928+1.3)/2), "mp_log10_bulk_modulus_vrh", Median, 2},
		{"shear_modulus", "NaCl", 14, "mp_log10_shear_modulus_vrh", Median, 1},
		// Not in the log10 tables: the GPa table.
		{"bulk_modulus", "MgO", 155, "mp_bulk_modulus", Median, 2},
		{"shear_modulus", "MgO", 120, "mp_shear_modulus", Median, 1},
		// ε∞ = n².
		{"dielectric_electronic", "NaCl", 2.25, "dielectric", Median, 1},
	}
	for _, tc := range tests {
		v, ok := db.Property(tc.name, tc.formula)
		if !ok {
			t.Errorf("%s of %s: none", tc.name, tc.formula)
			continue
		}
		p, err := task.PropertyByName(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if !near(v.Value, tc.value) || v.Table != tc.table || v.Rule != tc.rule || v.Count != tc.count || v.Unit != p.Unit || v.Property != tc.name {
			t.Errorf("%s of %s = %+v, want %v from %s (%s, %d entries, unit %q)", tc.name, tc.formula, v, tc.value, tc.table, tc.rule, tc.count, p.Unit)
		}
		if v.Min > v.Value || v.Value > v.Max {
			t.Errorf("%s of %s: value %v outside its range [%v, %v]", tc.name, tc.formula, v.Value, v.Min, v.Max)
		}
	}
	if v, ok := db.Property("dielectric_electronic", "TiO2"); !ok || !near(v.Min, 6.25) || !near(v.Max, 6.76) {
		t.Errorf("dielectric range of TiO2 = %+v, want [6.25, 6.76]", v)
	}
	for _, name := range []string{"band_gap", "piezo_max_dij", "nonsense"} {
		if v, ok := db.Property(name, "SrAl2H2"); ok {
			t.Errorf("%s of an unlisted formula = %+v", name, v)
		}
	}
	if got := db.Properties("MgO"); len(got) != 2 || got["bulk_modulus"].Value != 155 {
		t.Errorf("Properties(MgO) = %+v, want the two moduli", got)
	}
	for _, name := range PropertyNames() {
		if _, err := task.PropertyByName(name); err != nil {
			t.Errorf("reference property %q is not in the task registry: %v", name, err)
		}
	}
}

func TestKnown(t *testing.T) {
	db := loadFixture(t)
	for formula, want := range map[string]bool{"NaCl": true, "TiO2": true, "MgO": true, "Sr(AlH)2": true, "KCl": false, "Cl1Na1": false} {
		if got := db.Known(formula); got != want {
			t.Errorf("Known(%s) = %v, want %v", formula, got, want)
		}
	}
}

func TestHullEntries(t *testing.T) {
	db := loadFixture(t)
	got := db.HullEntries()
	want := []struct {
		id, formula string
		e           float64
	}{
		{"mpef-1", "NaCl", -2.1}, {"mpef-3", "Na", 0}, {"mpef-5", "Cl2", 0}, {"mpef-6", "Sr(AlH)2", -0.5},
		{"mpef-8", "Ti", 0}, {"mpef-9", "O2", 0}, {"mpef-11", "TiO2", -3.5},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].ID != w.id || got[i].Composition.ReducedFormula() != w.formula || got[i].EnergyPerAtom != w.e {
			t.Errorf("entry %d = %s %s %v, want %s %s %v", i, got[i].ID, got[i].Composition, got[i].EnergyPerAtom, w.id, w.formula, w.e)
		}
	}
	got[0].ID = "changed"
	if db.HullEntries()[0].ID != "mpef-1" {
		t.Error("HullEntries returned the DB's own slice")
	}
	for sym, want := range map[string]bool{"Na": true, "Al": true, "O": true, "Mg": false, "Fe": false} {
		if got := db.HasPhases(crystal.MustElement(sym)); got != want {
			t.Errorf("HasPhases(%s) = %v, want %v", sym, got, want)
		}
	}
}

func TestBadTables(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"empty", "", "empty file"},
		{"header", "formula,value\nNaCl,1\n", "line 1: header"},
		{"columns", "formula,target\nNaCl,1,2\n", "line 2"},
		{"quoted", "formula,target\n\"NaCl\",1\n", "line 2"},
		{"no formula", "formula,target\n,1\n", "line 2"},
		{"number", "formula,target\nNaCl,1\nKCl,abc\n", "line 3: target"},
		{"nan", "formula,target\nNaCl,NaN\n", "line 2: target"},
		{"inf", "formula,target\nNaCl,+Inf\n", "line 2: target"},
		{"element", "formula,target\nXx2O,1\n", "line 2"},
		{"parenthesis", "formula,target\nCa3(PO4,1\n", "line 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readOne(BandGap, tc.content)
			if !errors.Is(err, ErrBadTable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrBadTable mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := readOne(RefractiveIndex, "formula,target\nNaCl,-1.5\n"); !errors.Is(err, ErrBadTable) {
		t.Errorf("negative refractive index: error %v, want ErrBadTable", err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("empty folder: error %v, want fs.ErrNotExist", err)
	}
	for _, tb := range Tables() {
		data, err := os.ReadFile(filepath.Join("testdata", "tables", tb.File()))
		if err != nil {
			t.Fatal(err)
		}
		if tb == BandGap {
			data = append(data, "KCl,oops\n"...)
		}
		if err := os.WriteFile(filepath.Join(dir, tb.File()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Load(dir)
	if !errors.Is(err, ErrBadTable) || !strings.Contains(err.Error(), "mp_gap.csv") {
		t.Errorf("corrupt mp_gap.csv: error %v, want ErrBadTable naming the file", err)
	}
}

// readOne reads a single table from its content.
func readOne(t Table, content string) (*tableData, error) {
	r := newRowReader()
	if err := r.read(t, []byte(content)); err != nil {
		return nil, err
	}
	_, loaded, err := r.finish()
	if err != nil {
		return nil, err
	}
	return loaded[0], nil
}
