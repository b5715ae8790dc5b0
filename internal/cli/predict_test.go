package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
	"github.com/crucible-sci/crucible/pkg/messages"
)

// predictFixtures writes structure files: rock salt NaCl (CIF, a known
// compound), perovskite RbSrBr3 (pymatgen JSON, not in the reference
// tables), rock salt MgF (a composition no chemistry allows), a 1000-atom
// NaCl cell, a file that is no structure, and the path of a missing file.
func predictFixtures(t *testing.T) map[string]string {
	t.Helper()
	f := newFixtureFiles(t)
	nacl := crystaltest.Build(t, "rocksalt", "NaCl")
	f.cif("NaCl.cif", nacl)
	mgf, err := crystal.Substitute(nacl, crystal.MustElement("Na"), crystal.MustElement("Mg"))
	if err == nil {
		mgf, err = crystal.Substitute(mgf, crystal.MustElement("Cl"), crystal.MustElement("F"))
	}
	if err != nil {
		t.Fatal(err)
	}
	f.cif("MgF.cif", mgf)
	f.pymatgenJSON("RbSrBr3.json", crystaltest.Build(t, "perovskite", "RbSrBr3"))
	big, err := nacl.Supercell(10, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	f.pymatgenJSON("big.json", big)
	f.write("notes.txt", []byte("not a structure\n"))
	f.missing("missing", "missing.cif")
	return f.paths
}

type predictJSONLine struct {
	File            string             `json:"file"`
	Formula         string             `json:"formula"`
	Class           *string            `json:"class"`
	Valid           bool               `json:"valid"`
	Predicted       bool               `json:"predicted"`
	Known           bool               `json:"known"`
	Novelty         *messages.Novelty  `json:"novelty"`
	OxidationStates map[string]float64 `json:"oxidation_states"`
	SpaceGroup      *struct {
		Number int    `json:"number"`
		Symbol string `json:"symbol"`
	} `json:"space_group"`
	Reasons    []struct{ Code, Detail string }
	Properties map[string]struct {
		Value       float64  `json:"value"`
		Unit        *string  `json:"unit"`
		Source      string   `json:"source"`
		Uncertainty *float64 `json:"uncertainty"`
		TieSpread   *float64 `json:"tie_spread"`
		Surrogate   *float64 `json:"surrogate"`
	} `json:"properties"`
	EAboveHull    *float64           `json:"e_above_hull"`
	Decomposition map[string]float64 `json:"decomposition"`
}

func TestPredictJSON(t *testing.T) {
	data := testbed.DataDir(t)
	f := predictFixtures(t)
	order := []string{"NaCl.cif", "notes.txt", "RbSrBr3.json", "big.json", "missing", "MgF.cif"}
	args := []string{"predict", "--json", "--hull", "--data", data}
	for _, name := range order {
		args = append(args, f[name])
	}
	out, _, err := runCLI(t, "", args...)
	if exitStatusOf(err) != 1 || !strings.Contains(err.Error(), "2 of 6 files unreadable") {
		t.Fatalf("error %v, want exit 1 for two unreadable files\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(order) {
		t.Fatalf("%d lines for %d files:\n%s", len(lines), len(order), out)
	}
	got := map[string]predictJSONLine{}
	for i, line := range lines {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		for _, key := range []string{"file", "formula", "class", "valid", "predicted", "known", "novelty", "reasons", "properties", "e_above_hull", "decomposition"} {
			if _, ok := raw[key]; !ok {
				t.Errorf("line %d lacks %q: %s", i+1, key, line)
			}
		}
		var l predictJSONLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.File != f[order[i]] {
			t.Errorf("line %d is %s, want %s (input order, path as given)", i+1, l.File, f[order[i]])
		}
		got[order[i]] = l
	}

	nacl := got["NaCl.cif"]
	fe := nacl.Properties["formation_energy_per_atom"]
	if nacl.Novelty == nil || nacl.Novelty.Class != messages.NoveltyKnownStructure || nacl.Novelty.Match != "golden:cod-1000041" {
		t.Errorf("NaCl: novelty %+v, want the golden NaCl structure", nacl.Novelty)
	}
	if !nacl.Valid || !nacl.Predicted || !nacl.Known || nacl.Formula != "NaCl" || nacl.Class == nil || *nacl.Class != "ionic" ||
		nacl.OxidationStates["Na"] != 1 || fe.Source != "reference" || fe.Surrogate == nil || fe.Uncertainty == nil || *fe.Uncertainty != 0 {
		t.Errorf("NaCl: %+v", nacl)
	}
	if nacl.SpaceGroup == nil || nacl.SpaceGroup.Number != 225 || nacl.SpaceGroup.Symbol != "Fm-3m" {
		t.Errorf("NaCl: space group %+v, want Fm-3m (225)", nacl.SpaceGroup)
	}
	if nacl.EAboveHull == nil || *nacl.EAboveHull != 0 || nacl.Decomposition["NaCl"] != 1 {
		t.Errorf("NaCl hull: %v %v", nacl.EAboveHull, nacl.Decomposition)
	}
	novel := got["RbSrBr3.json"]
	gap := novel.Properties["band_gap"]
	if !novel.Valid || novel.Known || gap.Source != "cgcnn" || gap.Uncertainty == nil || *gap.Uncertainty != 0.388 || gap.Unit == nil || *gap.Unit != "eV" ||
		gap.TieSpread == nil || !(*gap.TieSpread > 0) || novel.Novelty == nil || novel.Novelty.Class != messages.NoveltyNew {
		t.Errorf("RbSrBr3: %+v", novel)
	}
	if novel.EAboveHull == nil || len(novel.Decomposition) < 2 {
		t.Errorf("RbSrBr3 hull: %v %v", novel.EAboveHull, novel.Decomposition)
	}
	big := got["big.json"]
	if big.Valid || big.Predicted || len(big.Reasons) == 0 || big.Reasons[0].Code != "too_many_atoms" || big.EAboveHull != nil || len(big.Properties) != 2 {
		t.Errorf("1000-atom cell: %+v", big)
	}
	// Invalid chemistry is a flag: the structure is still predicted.
	mgf := got["MgF.cif"]
	if mgf.Valid || !mgf.Predicted || len(mgf.Reasons) != 1 || mgf.Reasons[0].Code != "charge_neutrality" ||
		mgf.Properties["band_gap"].Source != "cgcnn" || mgf.EAboveHull == nil || mgf.Class == nil || *mgf.Class != "ionic" || mgf.OxidationStates != nil {
		t.Errorf("MgF: %+v", mgf)
	}
	for _, name := range []string{"notes.txt", "missing"} {
		l := got[name]
		if l.Valid || l.Predicted || l.Class != nil || len(l.Reasons) != 1 || l.Reasons[0].Code != "unreadable" || l.Reasons[0].Detail == "" {
			t.Errorf("%s: %+v", name, l)
		}
	}
}

func TestPredictText(t *testing.T) {
	data := testbed.DataDir(t)
	f := predictFixtures(t)
	out, errOut, err := runCLI(t, "", "predict", "--data", data, "--hull", f["NaCl.cif"], f["RbSrBr3.json"], f["notes.txt"], f["MgF.cif"])
	if exitStatusOf(err) != 1 {
		t.Fatalf("error %v, want exit 1", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), out)
	}
	for _, want := range []string{"  NaCl  known_structure golden:cod-1000041  ionic  valid  formation_energy_per_atom=", " eV/atom (reference; model ", "e_above_hull=0 eV/atom", "decomposition=NaCl:1"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("NaCl line lacks %q:\n%s", want, lines[0])
		}
	}
	for _, want := range []string{"  RbSrBr3  new  ionic  valid  ", "band_gap=", "±0.388 eV (cgcnn; tie spread ", "; P(metal) ", "bulk_modulus=", " GPa (cgcnn; tie spread "} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("RbSrBr3 line lacks %q:\n%s", want, lines[1])
		}
	}
	for _, want := range []string{"  MgF  new  ionic  invalid: charge_neutrality: ", "band_gap=", "e_above_hull="} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("MgF line lacks %q:\n%s", want, lines[2])
		}
	}
	if !strings.Contains(errOut, "notes.txt: unreadable:") {
		t.Errorf("stderr lacks the unreadable file:\n%s", errOut)
	}
}

func TestPredictMissingData(t *testing.T) {
	f := predictFixtures(t)
	_, _, err := runCLI(t, "", "predict", "--data", t.TempDir(), f["NaCl.cif"])
	if err == nil || !strings.Contains(err.Error(), "crucible data pull") {
		t.Errorf("error %v, want one telling to run crucible data pull", err)
	}
}
