package cli

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crucible-sci/crucible/internal/crystaltest"
	"github.com/crucible-sci/crucible/pkg/crystal"
)

// requireSameCrystal checks got against want: lattice parameters and, site
// for site of the same element, fractional coordinates modulo 1 within tol.
func requireSameCrystal(t *testing.T, got, want *crystal.Structure, tol float64) {
	t.Helper()
	var g, w [6]float64
	g[0], g[1], g[2], g[3], g[4], g[5] = got.Lattice.Parameters()
	w[0], w[1], w[2], w[3], w[4], w[5] = want.Lattice.Parameters()
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol {
			t.Errorf("lattice parameter %d = %.10g, want %.10g", i, g[i], w[i])
		}
	}
	if got.NumSites() != want.NumSites() {
		t.Fatalf("%d sites, want %d", got.NumSites(), want.NumSites())
	}
	used := make([]bool, want.NumSites())
	for i, e := range got.Species {
		found := false
		for j, f := range want.Frac {
			d := got.Frac[i].Sub(f)
			if !used[j] && want.Species[j] == e &&
				math.Abs(d[0]-math.Round(d[0])) <= tol && math.Abs(d[1]-math.Round(d[1])) <= tol && math.Abs(d[2]-math.Round(d[2])) <= tol {
				used[j], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("site %d (%s at %v) has no partner", i, e, got.Frac[i])
		}
	}
}

// Every input format converts to every output format, and the output reads
// back as the structure.
func TestConvertEveryFormat(t *testing.T) {
	want := crystaltest.Build(t, "perovskite", "SrTiO3")
	dir := t.TempDir()
	inputs := map[string]crystal.Format{
		"SrTiO3.cif": crystal.FormatCIF, "POSCAR": crystal.FormatPOSCAR, "SrTiO3.json": crystal.FormatPymatgenJSON, "SrTiO3.xyz": crystal.FormatXYZ,
	}
	for name, f := range inputs {
		var buf bytes.Buffer
		if err := crystal.WriteStructure(&buf, want, f, ""); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name := range inputs {
		for _, to := range []string{"cif", "poscar", "json", "xyz"} {
			t.Run(name+"->"+to, func(t *testing.T) {
				out, _, err := runCLI(t, "", "convert", filepath.Join(dir, name), "--to", to)
				if err != nil {
					t.Fatal(err)
				}
				f, _ := crystal.ParseFormat(to)
				if got := crystal.DetectFormat([]byte(out)); got != f {
					t.Errorf("output detected as %v, want %v", got, f)
				}
				s, err := crystal.ParseStructure([]byte(out))
				if err != nil {
					t.Fatalf("reading the output: %v\n%s", err, out)
				}
				requireSameCrystal(t, s, want, 1e-8)
			})
		}
	}
}

// --out writes a file, and its name gives the format when --to is absent;
// "-" reads standard input; --from and --species read what detection
// cannot.
func TestConvertOutFromAndSpecies(t *testing.T) {
	want := crystaltest.Build(t, "rocksalt", "NaCl")
	f := newFixtureFiles(t)
	f.cif("NaCl.cif", want)
	out := filepath.Join(f.dir, "NaCl.vasp")
	if stdout, _, err := runCLI(t, "", "convert", f.paths["NaCl.cif"], "--out", out); err != nil || stdout != "" {
		t.Fatalf("convert --out: %q, %v", stdout, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nDirect\n") {
		t.Errorf("--out NaCl.vasp did not write a POSCAR:\n%s", data)
	}
	s, err := crystal.ParsePOSCAR(data)
	if err != nil {
		t.Fatal(err)
	}
	requireSameCrystal(t, s, want, 1e-8)

	// Standard input, recognised from its content.
	stdout, _, err := runCLI(t, string(data), "convert", "-", "--to", "xyz")
	if err != nil || !strings.HasPrefix(stdout, "2\nLattice=") {
		t.Fatalf("convert - --to xyz: %q, %v", stdout, err)
	}

	// A POSCAR under a name that says CIF, read with --from.
	f.write("mislabelled.cif", data)
	if _, _, err := runCLI(t, "", "convert", f.paths["mislabelled.cif"], "--to", "json"); !errors.Is(err, crystal.ErrBadCIF) {
		t.Errorf("POSCAR named .cif: %v, want ErrBadCIF", err)
	}
	if _, _, err := runCLI(t, "", "convert", f.paths["mislabelled.cif"], "--from", "poscar", "--to", "json"); err != nil {
		t.Errorf("--from poscar: %v", err)
	}

	// VASP 4: no species line; --species names them.
	vasp4 := "wurtzite\n1.0\n3.2495 0 0\n-1.62475 2.8141495495975333 0\n0 0 5.2069\n2 2\nDirect\n" +
		"0.3333333333 0.6666666667 0\n0.6666666667 0.3333333333 0.5\n0.3333333333 0.6666666667 0.3825\n0.6666666667 0.3333333333 0.8825\n"
	f.write("POSCAR", []byte(vasp4))
	if _, _, err := runCLI(t, "", "convert", f.paths["POSCAR"], "--to", "cif"); !errors.Is(err, crystal.ErrNoSpecies) {
		t.Errorf("VASP 4 without --species: %v, want ErrNoSpecies", err)
	}
	stdout, _, err = runCLI(t, "", "convert", f.paths["POSCAR"], "--species", "Zn,O", "--to", "poscar")
	if err != nil || !strings.Contains(stdout, "\nZn O\n2 2\n") {
		t.Errorf("VASP 4 with --species: %q, %v", stdout, err)
	}
}

func TestConvertErrors(t *testing.T) {
	f := newFixtureFiles(t)
	f.cif("NaCl.cif", crystaltest.Build(t, "rocksalt", "NaCl"))
	f.write("water.xyz", []byte("3\nwater\nO 0 0 0.1178\nH 0 0.7555 -0.4712\nH 0 -0.7555 -0.4712\n"))
	f.missing("missing", "missing.cif")
	tests := []struct {
		name string
		args []string
		code int    // exit status of an exitError; 0 for a plain error (status 1)
		want error  // wrapped by the error, when not nil
		msg  string // in the message
	}{
		{"no --to", []string{f.paths["NaCl.cif"]}, 2, nil, "--to is required"},
		{"--out without format", []string{f.paths["NaCl.cif"], "--out", filepath.Join(f.dir, "x.txt")}, 2, nil, "--to is required"},
		{"unknown --to", []string{f.paths["NaCl.cif"], "--to", "pdb"}, 2, crystal.ErrUnknownFormat, "pdb"},
		{"--to a read-only format", []string{f.paths["NaCl.cif"], "--to", "candidate"}, 2, crystal.ErrUnknownFormat, "not written"},
		{"unknown --from", []string{f.paths["NaCl.cif"], "--from", "pdb", "--to", "cif"}, 2, crystal.ErrUnknownFormat, "--from"},
		{"unknown --species", []string{f.paths["NaCl.cif"], "--species", "Zz", "--to", "cif"}, 2, crystal.ErrUnknownElement, "--species"},
		{"molecule", []string{f.paths["water.xyz"], "--to", "cif"}, 0, crystal.ErrNotPeriodic, "water.xyz"},
		{"missing file", []string{f.paths["missing"], "--to", "cif"}, 0, os.ErrNotExist, "missing.cif"},
		{"two inputs", []string{f.paths["NaCl.cif"], f.paths["water.xyz"], "--to", "cif"}, 0, nil, "accepts 1 arg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := runCLI(t, "", append([]string{"convert"}, tc.args...)...)
			if err == nil {
				t.Fatalf("no error; output %q", out)
			}
			var ee *exitError
			if code := 0; errors.As(err, &ee) {
				code = ee.code
				if code != tc.code {
					t.Errorf("exit status %d, want %d", code, tc.code)
				}
			} else if tc.code != 0 {
				t.Errorf("error %v is no exit status %d", err, tc.code)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v does not wrap %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			if out != "" {
				t.Errorf("wrote %q despite the error", out)
			}
		})
	}
}

// The help names every format and how it is recognised.
func TestConvertHelp(t *testing.T) {
	out, _, err := runCLI(t, "", "convert", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cif", "poscar", "json", "xyz", "VASP 4", "--species", "Lattice=", "molecule", "CONTCAR*", ".extxyz", "--out"} {
		if !strings.Contains(out, want) {
			t.Errorf("help does not mention %q", want)
		}
	}
}

// TestConvertSymmetrize: --symmetrize writes rock salt's asymmetric unit
// in Fm-3m with its 192 operations, which reads back as the conventional
// cell; it writes CIF only, and the tolerance is checked.
func TestConvertSymmetrize(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := crystal.WriteStructure(&buf, crystaltest.Build(t, "rocksalt", "NaCl"), crystal.FormatPOSCAR, ""); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "POSCAR")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "", "convert", in, "--to", "cif", "--symmetrize")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"_symmetry_Int_Tables_number   225", "'-x, -y, -z'"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	s, err := crystal.ParseStructure([]byte(out))
	if err != nil {
		t.Fatalf("reading the output: %v\n%s", err, out)
	}
	if s.NumSites() != 8 || s.Composition().ReducedFormula() != "NaCl" {
		t.Errorf("read back %d sites of %s, want the 8 of the conventional cell", s.NumSites(), s.Composition().ReducedFormula())
	}
	for _, bad := range [][]string{{"--to", "poscar", "--symmetrize"}, {"--to", "cif", "--symmetrize", "--symprec", "0"}} {
		_, _, err := runCLI(t, "", append([]string{"convert", in}, bad...)...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}
