package oracle

import (
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/task"
)

// TestHardCoatingSurrogates: where the surrogates put the known hard
// materials against "Hard Coating Materials" (bulk modulus ≥ 200 GPa,
// formation energy ≤ −1 eV/atom, band gap ≥ 3 eV), on structures built
// from the prototype library as candidates are. The wide-gap hard ceramics
// meet every constraint, so the task's hits are within the surrogates'
// reach; the hard nitrides and carbides of the transition metals are
// metals (the metal classifier calls TiN, TiC, HfN and TaC metallic; ZrN
// gets 0.44 eV) and never meet the gap, whatever their moduli. The log
// sets each CGCNN value beside the reference value the hierarchical oracle
// reports (the Materials Project's, package reference's polymorph rules).
func TestHardCoatingSurrogates(t *testing.T) {
	o := testOracle(t)
	cgcnnOnly, err := New(o.Reference(), o.set, Options{SurrogateOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	tk, err := task.ByName("Hard Coating Materials")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		proto, formula string
		hit            bool
	}{
		{"wurtzite", "BeO", true}, {"zincblende", "BN", true}, {"corundum", "Al2O3", true},
		{"rocksalt", "TiN", false}, {"rocksalt", "TiC", false}, {"rocksalt", "ZrN", false},
		{"rocksalt", "HfN", false}, {"rocksalt", "TaC", false},
	}
	var reqs []Request
	for _, c := range cases {
		reqs = append(reqs, Request{Structure: crystaltest.Build(t, c.proto, c.formula)})
	}
	res := evaluate(t, cgcnnOnly, reqs...)
	for i, c := range cases {
		props := res[i].Properties
		got := tk.Evaluate(func(name string) (float64, bool) {
			v, ok := props[name]
			return v.Value, ok
		})
		hit := got.Feasible && !props["band_gap"].Metallic
		ref := o.Reference().Properties(c.formula)
		t.Logf("%-6s %-10s K %5.0f GPa (MP %5.0f)  G %5.0f GPa (MP %5.0f)  gap %4.2f eV metallic %-5v  Ef %5.2f eV/atom  hit %v",
			c.formula, c.proto, props["bulk_modulus"].Value, ref["bulk_modulus"].Value, props["shear_modulus"].Value, ref["shear_modulus"].Value,
			props["band_gap"].Value, props["band_gap"].Metallic, props["formation_energy_per_atom"].Value, hit)
		if hit != c.hit {
			t.Errorf("%s: a hit %v, want %v (%v)", c.formula, hit, c.hit, got.Reasons)
		}
	}
}
