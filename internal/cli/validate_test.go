package cli

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// validateFixtures writes structure files into a temporary folder: a rock
// salt NaCl CIF and a perovskite SrTiO3 pymatgen JSON (both built from the
// prototype library), a CIF whose atoms overlap, a candidate answer whose
// formula disagrees with its species, and a file that is no structure.
func validateFixtures(t *testing.T) map[string]string {
	t.Helper()
	f := newFixtureFiles(t)
	f.cif("NaCl.cif", crystaltest.Build(t, "rocksalt", "NaCl"))
	f.pymatgenJSON("SrTiO3.json", crystaltest.Build(t, "perovskite", "SrTiO3"))
	l, err := crystal.LatticeFromParameters(4, 4, 4, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := crystal.NewStructure(l, []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl"), crystal.MustElement("Cl")},
		[]crystal.Vec3{{0, 0, 0}, {0.05, 0, 0}, {0.5, 0.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	f.cif("overlap.cif", bad)
	f.write("candidate.json", []byte(`{"formula": "KBr", "lattice": {"a": 5.64, "b": 5.64, "c": 5.64, "alpha": 90, "beta": 90, "gamma": 90},
		"species": ["Na", "Cl"], "coords": [[0, 0, 0], [0.5, 0.5, 0.5]]}`))
	f.write("notes.txt", []byte("not a structure\n"))
	f.missing("missing", "missing.cif")
	return f.paths
}

type validateLine struct {
	File            string             `json:"file"`
	Formula         *string            `json:"formula"`
	ReducedFormula  *string            `json:"reduced_formula"`
	NumAtoms        *int               `json:"natoms"`
	Density         *float64           `json:"density"`
	Volume          *float64           `json:"volume"`
	MinDistance     *float64           `json:"min_distance"`
	ChemSys         *string            `json:"chemsys"`
	Class           *string            `json:"class"`
	ChargeNeutral   *bool              `json:"charge_neutral"`
	OxidationStates map[string]float64 `json:"oxidation_states"`
	SpaceGroup      *struct {
		Number int    `json:"number"`
		Symbol string `json:"symbol"`
	} `json:"space_group"`
	Valid   bool     `json:"valid"`
	Reasons []string `json:"reasons"`
}

func TestValidateJSON(t *testing.T) {
	f := validateFixtures(t)
	order := []string{"NaCl.cif", "notes.txt", "SrTiO3.json", "overlap.cif", "missing", "candidate.json"}
	args := []string{"--json"}
	for _, name := range order {
		args = append(args, f[name])
	}
	out, _, err := runCLI(t, "", append([]string{"validate"}, args...)...)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("exit error %v, want status 1", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(order) {
		t.Fatalf("%d lines for %d files:\n%s", len(lines), len(order), out)
	}
	wantKeys := []string{"file", "formula", "reduced_formula", "natoms", "density", "volume", "min_distance",
		"chemsys", "class", "charge_neutral", "oxidation_states", "space_group", "valid", "reasons"}
	got := map[string]validateLine{}
	for i, line := range lines {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if len(raw) != len(wantKeys) {
			t.Errorf("line %d has %d keys: %s", i+1, len(raw), line)
		}
		for _, k := range wantKeys {
			if _, ok := raw[k]; !ok {
				t.Errorf("line %d lacks %q", i+1, k)
			}
		}
		var v validateLine
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		if v.File != f[order[i]] {
			t.Errorf("line %d is %s, want %s (file order)", i+1, v.File, f[order[i]])
		}
		got[order[i]] = v
	}

	nacl := got["NaCl.cif"]
	if !nacl.Valid || len(nacl.Reasons) != 0 || *nacl.ReducedFormula != "NaCl" || *nacl.NumAtoms != 2 ||
		*nacl.ChemSys != "Cl-Na" || *nacl.Class != "ionic" || !*nacl.ChargeNeutral || nacl.OxidationStates["Na"] != 1 || nacl.OxidationStates["Cl"] != -1 {
		t.Errorf("NaCl: %+v", nacl)
	}
	// Rock salt from Shannon radii: a = 2 (1.02 + 1.81) Å, Na–Cl = a/2.
	if math.Abs(*nacl.MinDistance-2.83) > 1e-6 || math.Abs(*nacl.Volume-math.Pow(5.66, 3)/4) > 1e-3 {
		t.Errorf("NaCl: min distance %v, volume %v", *nacl.MinDistance, *nacl.Volume)
	}
	// ρ = M / (N_A V): 58.443 g/mol over a quarter of (5.66 Å)³.
	if want := 58.443 / 0.602214076 / (math.Pow(5.66, 3) / 4); math.Abs(*nacl.Density-want) > 1e-3 {
		t.Errorf("NaCl density %v, want %v", *nacl.Density, want)
	}
	if g := nacl.SpaceGroup; g == nil || g.Number != 225 || g.Symbol != "Fm-3m" {
		t.Errorf("NaCl: space group %+v, want Fm-3m (225)", g)
	}
	sto := got["SrTiO3.json"]
	if !sto.Valid || *sto.Formula != "SrTiO3" || sto.OxidationStates["Ti"] != 4 {
		t.Errorf("SrTiO3: %+v", sto)
	}
	if g := sto.SpaceGroup; g == nil || g.Number != 221 || g.Symbol != "Pm-3m" {
		t.Errorf("SrTiO3: space group %+v, want Pm-3m (221)", g)
	}
	ov := got["overlap.cif"]
	if ov.Valid || ov.ChargeNeutral == nil || *ov.ChargeNeutral || len(ov.Reasons) != 2 ||
		!strings.HasPrefix(ov.Reasons[0], "overlap: ") || !strings.HasPrefix(ov.Reasons[1], "charge_neutrality: ") ||
		math.Abs(*ov.MinDistance-0.2) > 1e-6 || ov.OxidationStates != nil {
		t.Errorf("overlap.cif: %+v", ov)
	}
	for _, name := range []string{"notes.txt", "missing"} {
		v := got[name]
		if v.Valid || v.Formula != nil || v.MinDistance != nil || v.Class != nil || v.SpaceGroup != nil || len(v.Reasons) != 1 || !strings.HasPrefix(v.Reasons[0], "unreadable: ") {
			t.Errorf("%s: %+v", name, v)
		}
	}
	if c := got["candidate.json"]; c.Valid || len(c.Reasons) != 1 || !strings.HasPrefix(c.Reasons[0], "formula_mismatch: ") {
		t.Errorf("candidate.json: %+v", c)
	}
}

func TestValidateText(t *testing.T) {
	f := validateFixtures(t)
	out, _, err := runCLI(t, "", "validate", f["NaCl.cif"], f["SrTiO3.json"])
	if err != nil {
		t.Fatalf("valid files: %v", err)
	}
	for _, want := range []string{
		f["NaCl.cif"], "reduced formula  NaCl", "atoms            2", "min distance     2.8300 Å",
		"chemical system  Cl-Na", "class            ionic", "charge neutral   yes (Na+ Cl-)", "valid            yes",
		"charge neutral   yes (Sr2+ Ti4+ O2-)", "space group      Fm-3m (225)", "space group      Pm-3m (221)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runCLI(t, "", "validate", f["overlap.cif"])
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("invalid file: %v", err)
	}
	for _, want := range []string{"valid            no", "reason           overlap: sites 0 (Na) and 1 (Cl) are 0.200 Å apart",
		"reason           charge_neutrality: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestValidateOptions(t *testing.T) {
	f := validateFixtures(t)
	// The overlap passes with a smaller minimum distance, and NaCl2 balances
	// with no oxidation-state set, so it stays invalid.
	out, _, err := runCLI(t, "", "validate", "--json", "--min-distance", "0.1", "--states", "all", f["overlap.cif"])
	if err == nil {
		t.Fatal("NaCl2 accepted")
	}
	var v validateLine
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Reasons) != 1 || !strings.HasPrefix(v.Reasons[0], "charge_neutrality: ") {
		t.Errorf("reasons %q", v.Reasons)
	}
	if _, _, err := runCLI(t, "", "validate", "--states", "some", f["NaCl.cif"]); err == nil || !strings.Contains(err.Error(), "--states") {
		t.Errorf("bad --states: %v", err)
	}
	if _, _, err := runCLI(t, "", "validate"); err == nil {
		t.Error("no files accepted")
	}
	if _, _, err := runCLI(t, "", "validate", "--max-atoms", "1", f["NaCl.cif"]); err == nil {
		t.Error("2-atom cell accepted with --max-atoms 1")
	}
}

// The named compounds the ionic test alone rejected are valid, each with
// its class; the fixed-valence fluorides that balance in no chemistry are
// not; an unparsable formula is reported and the others judged.
func TestValidateFormulas(t *testing.T) {
	out, _, err := runCLI(t, "", "validate", "--json", "--formula", "TiN", "FeSi", "Fe3O4", "NaF2", "Xx2O", "KO2")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("exit error %v, want status 1", err)
	}
	type line struct {
		Formula         string             `json:"formula"`
		Valid           bool               `json:"valid"`
		Class           string             `json:"class"`
		OxidationStates map[string]float64 `json:"oxidation_states"`
		Reasons         []struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"reasons"`
		Detail string `json:"detail"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		got = append(got, v)
	}
	want := []struct {
		formula, class, code string
		states               map[string]float64
	}{
		{"TiN", "ionic", "", map[string]float64{"Ti": 3, "N": -3}},
		{"FeSi", "metal_rich", "", nil},
		{"Fe3O4", "ionic", "", map[string]float64{"Fe": 8.0 / 3, "O": -2}},
		{"NaF2", "ionic", "charge_neutrality", nil},
		{"Xx2O", "", "unreadable", nil},
		{"KO2", "polyanionic", "", nil},
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines for %d formulas:\n%s", len(got), len(want), out)
	}
	for i, w := range want {
		g := got[i]
		if g.Formula != w.formula || g.Class != w.class || g.Valid != (w.code == "") {
			t.Errorf("line %d: %+v, want %s %s valid %v", i+1, g, w.formula, w.class, w.code == "")
		}
		if (w.code == "") != (len(g.Reasons) == 0) || (w.code != "" && (g.Reasons[0].Code != w.code || g.Reasons[0].Detail == "")) {
			t.Errorf("%s: reasons %+v, want %q", w.formula, g.Reasons, w.code)
		}
		for el, q := range w.states {
			if math.Abs(g.OxidationStates[el]-q) > 1e-9 {
				t.Errorf("%s: states %v, want %v", w.formula, g.OxidationStates, w.states)
			}
		}
		if w.states == nil && g.OxidationStates != nil {
			t.Errorf("%s: states %v, want none", w.formula, g.OxidationStates)
		}
		if w.class != "" && g.Detail == "" {
			t.Errorf("%s: no detail", w.formula)
		}
	}

	f := newFixtureFiles(t)
	f.write("list.txt", []byte("# stable compounds\nMgB2\n\n  LaB6  \nCo3O4\n"))
	out, _, err = runCLI(t, "", "validate", "--formulas", f.paths["list.txt"])
	if err != nil {
		t.Fatalf("valid list: %v\n%s", err, out)
	}
	for _, w := range []string{"MgB2", "polyanionic", "LaB6", "Co2+:1 Co3+:2 O2-:4", "FORMULA"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n"); n != 3 {
		t.Errorf("%d lines after the header, want 3:\n%s", n, out)
	}
	for _, args := range [][]string{
		{"--formula"},
		{"--formulas", f.paths["list.txt"], "NaCl"},
		{"--formula", "--states", "icsd", "NaCl"},
		{"--formulas", "no-such-file"},
	} {
		if _, _, err := runCLI(t, "", append([]string{"validate"}, args...)...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestValidateSymPrec: a rock salt cell with one Na moved 0.028 Å off its
// site is cubic (Fm-3m) only at a tolerance above the displacement; the
// tolerances are checked before any file is read.
func TestValidateSymPrec(t *testing.T) {
	l, err := crystal.LatticeFromParameters(5.64, 5.64, 5.64, 90, 90, 90)
	if err != nil {
		t.Fatal(err)
	}
	na, cl := crystal.MustElement("Na"), crystal.MustElement("Cl")
	s, err := crystal.NewStructure(l, []crystal.Element{na, na, na, na, cl, cl, cl, cl}, []crystal.Vec3{
		{0.005, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}, {0.5, 0, 0}, {0, 0.5, 0}, {0, 0, 0.5}, {0.5, 0.5, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureFiles(t)
	f.cif("shifted.cif", s)
	group := func(args ...string) int {
		t.Helper()
		out, _, err := runCLI(t, "", append([]string{"validate"}, append(args, "--json", f.paths["shifted.cif"])...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var v validateLine
		if err := json.Unmarshal([]byte(out), &v); err != nil || v.SpaceGroup == nil {
			t.Fatalf("%v: %s (%v)", args, out, err)
		}
		return v.SpaceGroup.Number
	}
	if g := group(); g == 225 {
		t.Errorf("at the default 0.01 Å: Fm-3m, but an atom is 0.028 Å off its site")
	}
	if g := group("--symprec", "0.1"); g != 225 {
		t.Errorf("at 0.1 Å: group %d, want 225", g)
	}
	for _, bad := range [][]string{{"--symprec", "0"}, {"--symprec", "2"}, {"--angle-tolerance", "90"}} {
		if _, _, err := runCLI(t, "", append([]string{"validate"}, append(bad, f.paths["shifted.cif"])...)...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming the flag", bad, err)
		}
	}
}
