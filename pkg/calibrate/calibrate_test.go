package calibrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/datadir"
	"github.com/crucible-sci/crucible/pkg/oracle"
	"github.com/crucible-sci/crucible/pkg/task"
)

// measured is a small calibration, measured once per test binary.
func measured(t *testing.T) (*Calibration, string) {
	t.Helper()
	dir := testbed.DataDir(t)
	o, err := oracle.Open(dir, oracle.Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Measure(context.Background(), o, o.Reference(), datadir.Models(dir),
		Options{PerProperty: 40, Seed: 1, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return c, dir
}

// TestEverySurrogateCalibrated: every surrogate the oracle uses is either
// calibrated or says why not, and every surrogate property a built-in
// task constrains, and the energy above hull, is calibrated — from the
// calibration in the lookup order when there is one, else from one
// measured here.
func TestEverySurrogateCalibrated(t *testing.T) {
	dir := testbed.DataDir(t)
	c, path, err := Find(dir)
	switch {
	case errors.Is(err, ErrNoCalibration):
		c, _ = measured(t)
		path = "measured by the test"
	case err != nil:
		t.Fatal(err)
	}
	o, err := oracle.Open(dir, oracle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.Surrogates() {
		names = append(names, s.Checkpoint)
	}
	if err := c.Check(datadir.Models(dir), names); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tier := c.Tiers[TierScreen]
	for _, s := range o.Surrogates() {
		_, ok := c.Stats(TierScreen, s.Property)
		if why := tier.Uncalibrated[s.Property]; !ok && why == "" {
			t.Errorf("%s: surrogate %s neither calibrated nor explained", path, s.Property)
		}
	}
	need := map[string]bool{"e_above_hull": true}
	for _, tk := range task.Builtins() {
		for _, k := range tk.Constraints {
			if p, err := task.PropertyByName(k.Property); err == nil && p.Support == task.SupportSurrogate {
				need[k.Property] = true
			}
		}
	}
	for p := range need {
		if st, ok := c.Stats(TierScreen, p); !ok || !(st.Q68 > 0) || st.Q95 < st.Q68 {
			t.Errorf("%s: %s not calibrated: %+v", path, p, st)
		}
	}
}

func TestMeasureAndFile(t *testing.T) {
	c, dir := measured(t)
	tier := c.Tiers[TierScreen]
	ef := tier.Properties["formation_energy_per_atom"]
	if ef.N != 40 || ef.Q68 <= 0 || ef.Q95 < ef.Q68 || ef.MAE <= 0 {
		t.Errorf("formation energy: %+v", ef)
	}
	if eh := tier.Properties["e_above_hull"]; eh.Derived != "formation_energy_per_atom" || eh.MAE != ef.MAE {
		t.Errorf("e_above_hull: %+v", eh)
	}
	if len(c.Set.Formulas) < 40 || len(c.Set.Checksum) != 64 || len(c.Models) != len(oracle.Surrogates()) {
		t.Errorf("set %d formulas, checksum %q, %d models", len(c.Set.Formulas), c.Set.Checksum, len(c.Models))
	}
	// Deterministic for a seed.
	again, _ := measured(t)
	if !reflect.DeepEqual(again, c) {
		t.Error("two measurements with the same seed differ")
	}
	// The file round-trips; the lookup order puts CRUCIBLE_CALIBRATION
	// first; a missing file named there is an error.
	path := filepath.Join(t.TempDir(), "sub", FileName)
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvFile, path)
	back, found, err := Find(dir)
	if err != nil || found != path || !reflect.DeepEqual(back, c) {
		t.Errorf("Find: %q, %v; equal %v", found, err, reflect.DeepEqual(back, c))
	}
	t.Setenv(EnvFile, path+".missing")
	if _, _, err := Find(dir); err == nil {
		t.Error("a missing CRUCIBLE_CALIBRATION file was skipped")
	}
	// An unknown field or another schema is refused.
	if err := os.WriteFile(path, []byte(`{"schema":1,"extra":2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil {
		t.Error("unknown field accepted")
	}
	// A changed model makes the calibration stale.
	c.Models["band-gap"] = "0000"
	if err := c.Check(datadir.Models(dir), []string{"band-gap"}); !errors.Is(err, ErrStale) {
		t.Errorf("Check: %v, want ErrStale", err)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{0, 1, 2, 3, 4}
	for q, want := range map[float64]float64{0: 0, 0.5: 2, 0.68: 2.72, 0.95: 3.8, 1: 4} {
		if got := quantile(x, q); got < want-1e-12 || got > want+1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", q, got, want)
		}
	}
	st := statsOf("eV", []float64{-1, 1, 2})
	if st.MAE != 4.0/3 || st.Bias != 2.0/3 || st.N != 3 {
		t.Errorf("statsOf: %+v", st)
	}
}
