package oracle

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

var sharedRelaxer struct {
	once sync.Once
	r    *Relaxer
	err  error
}

func testRelaxer(t testing.TB) *Relaxer {
	t.Helper()
	dir := testbed.DataDir(t)
	sharedRelaxer.once.Do(func() { sharedRelaxer.r, sharedRelaxer.err = OpenRelaxer(dir, RelaxOptions{}) })
	if sharedRelaxer.err != nil {
		t.Fatal(sharedRelaxer.err)
	}
	return sharedRelaxer.r
}

// strained returns s with its cell scaled by f along every axis.
func strained(t *testing.T, s *crystal.Structure, f float64) *crystal.Structure {
	t.Helper()
	out, err := s.ScaledToVolume(s.Volume() * f * f * f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The relax tier relaxes a rock-salt NaCl cell built 4 % too large back
// to the potential's lattice constant, and its formation energy (M3GNet,
// legacy MP corrections) agrees with MP's within the tier's error.
func TestEvaluateRelaxed(t *testing.T) {
	dir := testbed.DataDir(t)
	r := testRelaxer(t)
	nacl := crystaltest.Build(t, "rocksalt", "NaCl")
	big := strained(t, nacl, 1.04)

	// SurrogateOnly: the relaxed M3GNet formation energy stands instead
	// of the reference value.
	o, err := Open(dir, Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	screened := evaluate(t, o, Request{Structure: big, Hull: true})[0]
	res, rx, err := o.EvaluateRelaxed(context.Background(), r, Request{Structure: big, Hull: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rx.Converged || rx.Steps == 0 || rx.Steps > 500 || rx.FMax >= 0.05 {
		t.Errorf("relaxation: converged %v in %d steps, fmax %.3g", rx.Converged, rx.Steps, rx.FMax)
	}
	if !(rx.Energy < rx.InitialEnergy) {
		t.Errorf("relaxed energy %.4f eV not below the initial %.4f eV", rx.Energy, rx.InitialEnergy)
	}
	if got, was := rx.Structure.VolumePerAtom(), big.VolumePerAtom(); !(got < 0.95*was) {
		t.Errorf("volume per atom %.3f Å³ after relaxing a cell of %.3f Å³ expanded by 4 %%: not shrunk", got, was)
	}
	if rx.Structure.NumSites() != big.NumSites() || rx.Structure.Composition().ReducedFormula() != "NaCl" {
		t.Errorf("relaxed structure %s of %d sites", rx.Structure.Composition().ReducedFormula(), rx.Structure.NumSites())
	}
	for _, f := range rx.Structure.Frac {
		for _, x := range f {
			if x < 0 || x >= 1 {
				t.Fatalf("relaxed coordinate %v not wrapped", f)
			}
		}
	}
	ref, ok := o.Reference().Property("formation_energy_per_atom", "NaCl")
	if !ok {
		t.Fatal("no reference formation energy for NaCl")
	}
	fe := res.Properties["formation_energy_per_atom"]
	if fe.Source != SourceM3GNet || fe.Uncertainty != M3GNetFormationEnergyMAE {
		t.Errorf("formation energy %+v: want source %s, uncertainty %v", fe, SourceM3GNet, M3GNetFormationEnergyMAE)
	}
	if math.Abs(fe.Value-rx.FormationEnergy) > 1e-12 || math.Abs(fe.Value-ref.Value) > 0.1 {
		t.Errorf("relaxed formation energy %.4f (relaxation %.4f), MP's %.4f eV/atom", fe.Value, rx.FormationEnergy, ref.Value)
	}
	if fe.Surrogate == nil {
		t.Error("CGCNN's formation energy is not kept beside the relaxed one")
	}
	if res.Stability == nil || res.Stability.FormationEnergySource != SourceM3GNet ||
		math.Abs(res.Stability.FormationEnergy-fe.Value) > 1e-12 || math.Abs(res.Stability.EAboveHull) > 0.1 {
		t.Errorf("stability %+v: want the relaxed formation energy near the hull", res.Stability)
	}
	// Properties are predicted again on the relaxed structure.
	if res.Properties["band_gap"].Value == screened.Properties["band_gap"].Value ||
		res.Properties["volume_per_atom"].Value == screened.Properties["volume_per_atom"].Value {
		t.Errorf("band gap %v and volume %v as screened: not re-predicted on the relaxed structure",
			res.Properties["band_gap"].Value, res.Properties["volume_per_atom"].Value)
	}

	// With a calibration of each tier, the relaxed values carry the relax
	// tier's errors, the M3GNet formation energy and the energy above hull
	// included; the screen keeps the screen's.
	cal := map[string]Calibrated{
		"formation_energy_per_atom": {Tier: "screen", MAE: 0.18, Q68: 0.17, Q95: 0.6},
		"e_above_hull":              {Tier: "screen", MAE: 0.18, Q68: 0.17, Q95: 0.6},
		"band_gap":                  {Tier: "screen", MAE: 0.5, Q68: 0.5, Q95: 2},
	}
	relaxCal := map[string]Calibrated{
		"formation_energy_per_atom": {Tier: "relax", MAE: 0.1, Q68: 0.09, Q95: 0.4},
		"e_above_hull":              {Tier: "relax", MAE: 0.1, Q68: 0.09, Q95: 0.4},
		"band_gap":                  {Tier: "relax", MAE: 0.4, Q68: 0.41, Q95: 1.5},
	}
	co, err := Open(dir, Options{SurrogateOnly: true, Calibration: cal, RelaxCalibration: relaxCal})
	if err != nil {
		t.Fatal(err)
	}
	cres, _, err := co.EvaluateRelaxed(context.Background(), r, Request{Structure: big, Hull: true})
	if err != nil {
		t.Fatal(err)
	}
	if fe := cres.Properties["formation_energy_per_atom"]; fe.Calibrated == nil || fe.Calibrated.Tier != "relax" || fe.Uncertainty != 0.09 {
		t.Errorf("relaxed formation energy %+v: want the relax tier's calibration", fe)
	}
	if st := cres.Stability; st == nil || st.Calibrated == nil || st.Calibrated.Q95 != 0.4 {
		t.Errorf("relaxed stability %+v: want the relax tier's calibration", st)
	}
	if gap := cres.Properties["band_gap"]; !gap.Metallic && (gap.Calibrated == nil || gap.Calibrated.Tier != "relax") {
		t.Errorf("relaxed band gap %+v: want the relax tier's calibration", gap)
	}
	if fe := evaluate(t, co, Request{Structure: big, Hull: true})[0].Properties["formation_energy_per_atom"]; fe.Calibrated == nil || fe.Calibrated.Tier != "screen" {
		t.Errorf("screened formation energy %+v: want the screen's calibration", fe)
	}

	// With reference values, a known formula keeps MP's formation energy,
	// the relaxed one beside it.
	known, _, err := testOracle(t).EvaluateRelaxed(context.Background(), r, Request{Structure: big, Hull: true})
	if err != nil {
		t.Fatal(err)
	}
	kfe := known.Properties["formation_energy_per_atom"]
	if kfe.Source != SourceReference || kfe.Surrogate == nil || math.Abs(*kfe.Surrogate-rx.FormationEnergy) > 1e-9 {
		t.Errorf("known formula: formation energy %+v, want the reference with the relaxed %.4f beside it", kfe, rx.FormationEnergy)
	}
}

func TestEvaluateRelaxedErrors(t *testing.T) {
	r := testRelaxer(t)
	o := testOracle(t)
	if _, _, err := o.EvaluateRelaxed(context.Background(), r, Request{}); err == nil {
		t.Error("no structure: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := strained(t, crystaltest.Build(t, "rocksalt", "NaCl"), 1.04)
	if _, _, err := o.EvaluateRelaxed(ctx, r, Request{Structure: big}); err == nil {
		t.Error("cancelled context: no error")
	}
}
