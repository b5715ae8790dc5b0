package oracle

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// invarianceTol is how closely the oracle's values for one crystal must
// agree however the crystal is written down.
const invarianceTol = 1e-9

// roundTrip writes s in format f and reads it back.
func roundTrip(t *testing.T, s *crystal.Structure, f crystal.Format) *crystal.Structure {
	t.Helper()
	var buf bytes.Buffer
	if err := crystal.WriteStructure(&buf, s, f, "invariance test"); err != nil {
		t.Fatalf("write %v: %v", f, err)
	}
	back, err := crystal.ParseStructure(buf.Bytes())
	if err != nil {
		t.Fatalf("read back %v: %v\n%s", f, err, buf.String())
	}
	return back
}

// invarianceStructures are the golden CGCNN structures (prototypes, COD
// and Materials Project cells, up to 100 atoms) and candidate-like cells
// from the prototype builder, among them ordered mixtures whose
// neighbours tie at the cut and a layered rock salt whose 12th and 13th
// neighbours differ by 8·10⁻⁶ Å, on TieRamp's slope.
func invarianceStructures(t *testing.T) (names []string, structs []*crystal.Structure) {
	t.Helper()
	dir := testbed.DataPath(t, "golden", "cgcnn", "cifs")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		s, err := crystal.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSuffix(f.Name(), ".cif"))
		structs = append(structs, s)
	}
	for _, c := range []struct{ proto, formula string }{
		{"rocksalt", "NaCl"}, {"rocksalt", "KI"}, {"cscl", "CsCl"}, {"zincblende", "GaAs"},
		{"wurtzite", "ZnO"}, {"fluorite", "CaF2"}, {"antifluorite", "Li2O"}, {"rutile", "TiO2"},
		{"perovskite", "SrTiO3"}, {"perovskite", "RbSrBr3"}, {"perovskite", "CsPbI3"}, {"perovskite", "KMgF3"},
		{"spinel", "MgAl2O4"}, {"corundum", "Al2O3"}, {"nias", "NiAs"}, {"cdi2", "CdI2"},
		{"nafeo2", "LiCoO2"}, {"nafeo2", "NaLiF2"}, {"nafeo2", "KRbF2"}, {"nafeo2", "CaMgO2"},
		{"nafeo2", "ZnCoO2"},
	} {
		names = append(names, c.proto+"-"+c.formula)
		structs = append(structs, crystaltest.Build(t, c.proto, c.formula))
	}
	s := crystaltest.NaPrCl4(t)
	names = append(names, "fluorite-NaPrCl4")
	structs = append(structs, s)
	// A double perovskite: Sr2TiZrO6 from a 2×1×1 SrTiO3.
	dp, err := crystaltest.Build(t, "perovskite", "SrTiO3").Supercell(2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	ti := slices.Index(dp.Species, crystal.MustElement("Ti"))
	if dp, err = crystal.SubstituteSites(dp, []int{ti}, crystal.MustElement("Zr")); err != nil {
		t.Fatal(err)
	}
	names = append(names, "perovskite-Sr2TiZrO6")
	structs = append(structs, dp)
	return names, structs
}

// variant is one way of writing a structure down.
type variant struct {
	name string
	s    *crystal.Structure
}

// variants returns s rotated, translated, permuted, all three at once,
// and round-tripped through every export format (as given and after all
// three).
func variants(t *testing.T, rng *rand.Rand, s *crystal.Structure) []variant {
	t.Helper()
	var out []variant
	for k := range 3 {
		out = append(out, variant{fmt.Sprintf("rotation %d", k), crystaltest.Rotated(t, s, crystaltest.RandomRotation(rng))})
	}
	shift := crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()}
	out = append(out,
		variant{"origin shift", crystaltest.Translated(s, shift, false)},
		variant{"origin shift, wrapped", crystaltest.Translated(s, shift, true)},
		variant{"origin shift by a third", crystaltest.Translated(s, crystal.Vec3{1.0 / 3, 2.0 / 3, 0.5}, true)},
		variant{"sites reversed", crystaltest.Permuted(s, reversedOrder(s.NumSites()))},
		variant{"sites shuffled", crystaltest.Permuted(s, rng.Perm(s.NumSites()))},
	)
	all := crystaltest.Permuted(crystaltest.Translated(crystaltest.Rotated(t, s, crystaltest.RandomRotation(rng)), crystal.Vec3{rng.Float64(), rng.Float64(), rng.Float64()}, true),
		rng.Perm(s.NumSites()))
	out = append(out, variant{"rotated, shifted, shuffled", all})
	for _, f := range crystal.WriteFormats {
		out = append(out,
			variant{f.Name() + " round trip", roundTrip(t, s, f)},
			variant{"rotated, shifted, shuffled, " + f.Name() + " round trip", roundTrip(t, all, f)})
	}
	return out
}

func reversedOrder(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = n - 1 - i
	}
	return p
}

// resultNumbers flattens a result into named numbers (and the
// non-numeric parts into names mapped to NaN when absent), for comparison.
func resultNumbers(r Result) map[string]float64 {
	out := map[string]float64{}
	flag := func(name string, b bool) {
		if b {
			out[name] = 1
		} else {
			out[name] = 0
		}
	}
	out["formula "+r.Formula] = 1
	flag("valid", r.Valid)
	flag("known", r.Known)
	for _, x := range r.Reasons {
		out["reason "+string(x.Code)]++
	}
	for _, x := range r.Warnings {
		out["warning "+string(x.Code)]++
	}
	for el, v := range r.OxidationStates {
		out["oxidation "+el] = v
	}
	for name, v := range r.Properties {
		out[name] = v.Value
		out[name+" uncertainty"] = v.Uncertainty
		out[name+" tie spread"] = v.TieSpread
		out[name+" source "+string(v.Source)] = 1
		if v.Surrogate != nil {
			out[name+" surrogate"] = *v.Surrogate
		}
	}
	if st := r.Stability; st != nil {
		out["e_above_hull"] = st.EAboveHull
		out["hull energy"] = st.HullEnergy
		out["e_above_hull tie spread"] = st.TieSpread
		for ph, x := range st.Decomposition {
			out["decomposition "+ph] = x
		}
	}
	return out
}

// TestValuesInvariant is the property test of reproducibility: the oracle
// gives the same values (to invarianceTol) for a crystal however it is
// written down: rotated, translated, with its sites in another order, and
// read back from every format Crucible exports (CIF, POSCAR, pymatgen
// JSON, extended XYZ).
func TestValuesInvariant(t *testing.T) {
	o := testOracle(t)
	names, structs := invarianceStructures(t)
	rng := rand.New(rand.NewPCG(23, 1))
	worst, where := map[string]float64{}, map[string]string{}
	tied, spread, comparisons := 0, 0, 0
	for i, s := range structs {
		vs := variants(t, rng, s)
		reqs := []Request{{Structure: s, Hull: true}}
		for _, v := range vs {
			reqs = append(reqs, Request{Structure: v.s, Hull: true})
		}
		res := evaluate(t, o, reqs...)
		want := resultNumbers(res[0])
		if p, ok := res[0].Properties["band_gap"]; ok && p.Source == SourceCGCNN && p.TieSpread > 0 {
			spread++
		}
		for k, v := range vs {
			got := resultNumbers(res[k+1])
			comparisons++
			for key, w := range want {
				g, ok := got[key]
				d := math.Abs(g - w)
				if !ok || !(d <= invarianceTol*max(1, math.Abs(w))) {
					t.Errorf("%s, %s: %s = %v (present: %v), want %v", names[i], v.name, key, g, ok, w)
				}
				if ok && d > worst[key] {
					worst[key], where[key] = d, names[i]+", "+v.name
				}
			}
			for key := range got {
				if _, ok := want[key]; !ok {
					t.Errorf("%s, %s: %s = %v, absent from the original", names[i], v.name, key, got[key])
				}
			}
		}
		if p, ok := res[0].Properties["formation_energy_per_atom"]; ok && p.Source == SourceCGCNN && p.TieSpread > 0 {
			tied++
		}
	}
	keys := make([]string, 0, len(worst))
	for k := range worst {
		if !strings.HasPrefix(k, "formula ") && !strings.HasPrefix(k, "decomposition ") &&
			!strings.Contains(k, " source ") && !strings.HasPrefix(k, "reason ") && !strings.HasPrefix(k, "oxidation ") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	preds, err := o.set.PredictWithTieSpread(t.Context(), structs, 1)
	if err != nil {
		t.Fatal(err)
	}
	withTies, withChoices := 0, 0
	for _, p := range preds {
		if p.TiedAtoms > 0 {
			withTies++
		}
		if p.TieChoices > 0 {
			withChoices++
		}
	}
	t.Logf("%d structures (%d with ties at the cut, %d of them with tie choices; %d novel ones with a tie spread in the "+
		"formation energy, %d in the band gap) × %d ways of writing them: %d comparisons",
		len(structs), withTies, withChoices, tied, spread, comparisons/len(structs), comparisons)
	if withChoices < 8 {
		t.Errorf("only %d structures with tie choices", withChoices)
	}
	for _, k := range keys {
		t.Logf("  max |Δ| %-40s %.2g (%s)", k, worst[k], where[k])
	}
}
