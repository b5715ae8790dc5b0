package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/testbed"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// energyFixtures: golden NaCl (CIF) also as POSCAR and extended XYZ, the
// golden wurtzite GaN as pymatgen JSON, a file that is no structure and
// two atoms on one site.
func energyFixtures(t *testing.T) (map[string]string, []string) {
	t.Helper()
	nacl, err := crystal.ReadFile(testbed.DataPath(t, "golden", "cgcnn", "cifs", "proto-NaCl-rocksalt.cif"))
	if err != nil {
		t.Fatal(err)
	}
	gan, err := crystal.ReadFile(testbed.DataPath(t, "golden", "cgcnn", "cifs", "proto-GaN-wurtzite.cif"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureFiles(t)
	f.cif("NaCl.cif", nacl)
	f.pymatgenJSON("GaN.json", gan)
	for name, format := range map[string]crystal.Format{"POSCAR": crystal.FormatPOSCAR, "NaCl.xyz": crystal.FormatXYZ} {
		var b strings.Builder
		if err := crystal.WriteStructure(&b, nacl, format, "NaCl"); err != nil {
			t.Fatal(err)
		}
		f.write(name, []byte(b.String()))
	}
	f.write("notes.txt", []byte("not a structure\n"))
	l, _ := crystal.NewLattice([3][3]float64{{4, 0, 0}, {0, 4, 0}, {0, 0, 4}})
	clash, err := crystal.NewStructure(l, []crystal.Element{crystal.MustElement("Na"), crystal.MustElement("Cl")}, []crystal.Vec3{{0, 0, 0}, {0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	f.pymatgenJSON("clash.json", clash)
	order := []string{"NaCl.cif", "notes.txt", "POSCAR", "GaN.json", "clash.json", "NaCl.xyz"}
	var args []string
	for _, n := range order {
		args = append(args, f.paths[n])
	}
	return f.paths, args
}

func TestEnergyJSON(t *testing.T) {
	data := testbed.DataDir(t)
	_, files := energyFixtures(t)
	out, _, err := runCLI(t, "", append([]string{"energy", "--json", "--data", data}, files...)...)
	if exitStatusOf(err) != 1 || !strings.Contains(err.Error(), "2 of 6 files failed") {
		t.Fatalf("error %v, want exit 1 for two failures\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(files) {
		t.Fatalf("%d lines for %d files:\n%s", len(lines), len(files), out)
	}
	type line struct {
		File          string        `json:"file"`
		Formula       string        `json:"formula"`
		Energy        float64       `json:"energy"`
		EnergyPerAtom float64       `json:"energy_per_atom"`
		Forces        [][3]float64  `json:"forces"`
		Stress        [3][3]float64 `json:"stress"`
		Error         string        `json:"error"`
	}
	var got []line
	for _, s := range lines {
		var l line
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	for i, l := range got {
		if l.File != files[i] {
			t.Errorf("line %d is %s, want %s", i+1, l.File, files[i])
		}
	}
	if got[1].Error == "" || got[4].Error == "" || !strings.Contains(got[4].Error, "bad input") {
		t.Errorf("failures: %q, %q", got[1].Error, got[4].Error)
	}
	nacl := got[0]
	if nacl.Formula != "NaCl" || len(nacl.Forces) != 8 || math.Abs(nacl.EnergyPerAtom*8-nacl.Energy) > 1e-9 || nacl.Energy > -20 {
		t.Errorf("NaCl: %+v", nacl)
	}
	// The same crystal read from POSCAR and extended XYZ.
	for _, i := range []int{2, 5} {
		if math.Abs(got[i].Energy-nacl.Energy) > 1e-8 || math.Abs(got[i].Stress[0][0]-nacl.Stress[0][0]) > 1e-6 {
			t.Errorf("%s: energy %.9f stress %.6f, CIF %.9f %.6f", got[i].File, got[i].Energy, got[i].Stress[0][0], nacl.Energy, nacl.Stress[0][0])
		}
	}
	if got[3].Formula != "GaN" || len(got[3].Forces) != 4 {
		t.Errorf("GaN: %+v", got[3])
	}
}

func TestRelaxJSONAndOut(t *testing.T) {
	data := testbed.DataDir(t)
	_, files := energyFixtures(t)
	outDir := filepath.Join(t.TempDir(), "relaxed")
	files = []string{files[0], files[1], files[3]} // NaCl.cif, notes.txt, GaN.json
	out, _, err := runCLI(t, "", append([]string{"relax", "--json", "--out", outDir, "--data", data}, files...)...)
	if exitStatusOf(err) != 1 || !strings.Contains(err.Error(), "1 of 3 files failed") {
		t.Fatalf("error %v, want exit 1 for one failure\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	for _, i := range []int{0, 2} {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(lines[i]), &raw); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"file", "formula", "converged", "steps", "energy", "energy_per_atom", "formation_energy_per_atom", "e_above_hull", "lattice", "volume"} {
			if _, ok := raw[key]; !ok {
				t.Errorf("line %d lacks %q: %s", i+1, key, lines[i])
			}
		}
		var l struct {
			Formula   string        `json:"formula"`
			Converged bool          `json:"converged"`
			Steps     int           `json:"steps"`
			EForm     *float64      `json:"formation_energy_per_atom"`
			EHull     *float64      `json:"e_above_hull"`
			Lattice   [3][3]float64 `json:"lattice"`
			Volume    float64       `json:"volume"`
			Written   []string      `json:"written"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &l); err != nil {
			t.Fatal(err)
		}
		if !l.Converged || l.Steps < 1 || l.EForm == nil || l.EHull == nil || math.Abs(*l.EHull) > 0.1 || len(l.Written) != 2 {
			t.Errorf("line %d: %+v", i+1, l)
			continue
		}
		lat, err := crystal.NewLattice(l.Lattice)
		if err != nil || math.Abs(lat.Volume()-l.Volume) > 1e-6*l.Volume {
			t.Errorf("%s: lattice %v, volume %v", l.Formula, l.Lattice, l.Volume)
		}
		// Both written files hold the relaxed structure.
		for _, p := range l.Written {
			st, err := crystal.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Composition().ReducedFormula() != l.Formula || math.Abs(st.Volume()-l.Volume) > 1e-4*l.Volume {
				t.Errorf("%s: %s volume %.4f, want %.4f", p, st.Composition().ReducedFormula(), st.Volume(), l.Volume)
			}
		}
	}
	if !strings.Contains(lines[1], `"error"`) {
		t.Errorf("unreadable file: %s", lines[1])
	}
	entries, _ := os.ReadDir(outDir)
	if len(entries) != 4 {
		t.Errorf("%d files in --out, want 4", len(entries))
	}
}

func TestRelaxFlags(t *testing.T) {
	if _, _, err := runCLI(t, "", "relax", "--fmax", "0", "x.cif"); exitStatusOf(err) != 2 {
		t.Errorf("--fmax 0: %v, want exit 2", err)
	}
}

// TestPredictRelax: predict --relax predicts on the relaxed structure: a
// NaCl cell expanded by 10 % in volume relaxes back, and the density
// predicted is the relaxed cell's, not the input's.
func TestPredictRelax(t *testing.T) {
	data := testbed.DataDir(t)
	nacl, err := crystal.ReadFile(testbed.DataPath(t, "golden", "cgcnn", "cifs", "proto-NaCl-rocksalt.cif"))
	if err != nil {
		t.Fatal(err)
	}
	big, err := nacl.ScaledToVolume(1.1 * nacl.Volume())
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureFiles(t)
	f.cif("big.cif", big)
	f.write("notes.txt", []byte("not a structure\n"))
	huge, err := nacl.Supercell(7, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	f.pymatgenJSON("huge.json", huge)
	out, _, err := runCLI(t, "", "predict", "--json", "--hull", "--relax", "--data", data, f.paths["big.cif"], f.paths["notes.txt"], f.paths["huge.json"])
	if exitStatusOf(err) != 1 {
		t.Fatalf("error %v, want exit 1 for the unreadable file\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), out)
	}
	var l struct {
		Formula    string `json:"formula"`
		Properties map[string]struct {
			Value float64 `json:"value"`
		} `json:"properties"`
		Relaxation *struct {
			Converged bool     `json:"converged"`
			Steps     int      `json:"steps"`
			EForm     *float64 `json:"formation_energy_per_atom"`
			EHull     *float64 `json:"e_above_hull"`
		} `json:"relaxation"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &l); err != nil {
		t.Fatal(err)
	}
	if l.Relaxation == nil || !l.Relaxation.Converged || l.Relaxation.Steps < 2 || l.Relaxation.EForm == nil || l.Relaxation.EHull == nil {
		t.Fatalf("relaxation: %s", lines[0])
	}
	rho0, rhoBig := nacl.Density(), big.Density()
	rho, ok := l.Properties["density"]
	if !ok || math.Abs(rho.Value-rho0) > 0.05*rho0 || math.Abs(rho.Value-rhoBig) < 0.05*rhoBig {
		t.Errorf("density %v: input %.4f, unstrained %.4f", rho, rhoBig, rho0)
	}
	if !strings.Contains(lines[1], "unreadable") {
		t.Errorf("unreadable file: %s", lines[1])
	}
	// 392 atoms: over the validity limit, neither relaxed nor predicted.
	if strings.Contains(lines[2], `"relaxation"`) || !strings.Contains(lines[2], "too_many_atoms") {
		t.Errorf("392-atom cell: %s", lines[2])
	}
}

// TestEnergyRelaxText: the text output gives one line per structure with
// its values, and the failures on standard error.
func TestEnergyRelaxText(t *testing.T) {
	data := testbed.DataDir(t)
	f, _ := energyFixtures(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"energy"}, []string{"NaCl  energy=-", "eV/atom  max_force=", "GPa"}},
		{[]string{"relax", "--steps", "3"}, []string{"NaCl  converged=false steps=3", "formation_energy_per_atom=-", "e_above_hull=", "abc=", "volume="}},
	} {
		out, errOut, err := runCLI(t, "", append(c.args, "--data", data, f["NaCl.cif"], f["notes.txt"])...)
		if exitStatusOf(err) != 1 {
			t.Errorf("%v: %v, want exit 1", c.args, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 1 {
			t.Errorf("%v: %d lines:\n%s", c.args, len(lines), out)
		}
		for _, w := range c.want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("%v: %q lacks %q", c.args, lines[0], w)
			}
		}
		if !strings.Contains(errOut, f["notes.txt"]+": ") {
			t.Errorf("%v: stderr %q", c.args, errOut)
		}
	}
}
