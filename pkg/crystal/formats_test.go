package crystal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// requireSameStructure checks got against want: lattice parameters within
// tol (Å and degrees); with exact, also the lattice matrix and every site in
// order, coordinates as given; without, a one-to-one matching of sites of
// the same element at fractional positions within tol on every axis modulo
// 1 (a CIF reorders sites, wraps them and turns the cell to pymatgen's
// orientation).
func requireSameStructure(t *testing.T, got, want *Structure, tol float64, exact bool) {
	t.Helper()
	var g, w [6]float64
	g[0], g[1], g[2], g[3], g[4], g[5] = got.Lattice.Parameters()
	w[0], w[1], w[2], w[3], w[4], w[5] = want.Lattice.Parameters()
	for i := range g {
		if math.Abs(g[i]-w[i]) > tol {
			t.Errorf("lattice parameter %d = %.12g, want %.12g", i, g[i], w[i])
		}
	}
	if got.NumSites() != want.NumSites() {
		t.Fatalf("%d sites, want %d", got.NumSites(), want.NumSites())
	}
	if exact {
		gm, wm := got.Lattice.Matrix(), want.Lattice.Matrix()
		for i := range gm {
			if !sameVec(gm[i], wm[i], tol) {
				t.Errorf("lattice vector %d = %v, want %v", i, gm[i], wm[i])
			}
		}
		for i := range got.Species {
			if got.Species[i] != want.Species[i] || !sameVec(got.Frac[i], want.Frac[i], tol) {
				t.Errorf("site %d: %s %v, want %s %v", i, got.Species[i], got.Frac[i], want.Species[i], want.Frac[i])
			}
		}
		return
	}
	used := make([]bool, want.NumSites())
	for i, e := range got.Species {
		found := false
		for j, f := range want.Frac {
			if used[j] || want.Species[j] != e {
				continue
			}
			d := got.Frac[i].Sub(f)
			if math.Abs(d[0]-math.Round(d[0])) <= tol && math.Abs(d[1]-math.Round(d[1])) <= tol && math.Abs(d[2]-math.Round(d[2])) <= tol {
				used[j], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("site %d (%s at %v) has no partner", i, e, got.Frac[i])
		}
	}
}

// roundTripStructures are structures every writer must reproduce: rutile and
// wurtzite from CIFs, an oblique cell with sites outside [0, 1) and an
// element split into several groups, the POSCAR and XYZ fixtures, and a big
// triclinic cell holding every element once.
func roundTripStructures(t *testing.T) map[string]*Structure {
	t.Helper()
	out := map[string]*Structure{}
	for _, name := range []string{"rutile_symop", "wurtzite_zno"} {
		s, err := ParseCIF(readTestdata(t, "cif", name+".cif"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = s
	}
	for _, name := range []string{"POSCAR_MgO_slab_selective", "POSCAR_NaCl_cartesian", "CONTCAR_Si_md"} {
		s, err := ParsePOSCAR(readTestdata(t, "poscar", name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = s
	}
	s, err := ParseXYZ(readTestdata(t, "xyz", "ZnO_numbers.xyz"))
	if err != nil {
		t.Fatal(err)
	}
	out["ZnO_numbers"] = s
	l, err := NewLattice([3][3]float64{{4.1, 0.2, -0.3}, {-1.7, 3.9, 0.4}, {0.6, -0.8, 6.3}})
	if err != nil {
		t.Fatal(err)
	}
	el := MustElement
	if out["oblique"], err = NewStructure(l,
		[]Element{el("Li"), el("Fe"), el("P"), el("O"), el("O"), el("Li"), el("O")},
		[]Vec3{{0, 0, 0}, {1.25, -0.5, 0.123456789}, {0.9999999, 0.0000001, 0.5}, {-0.2, 0.7, 0.8}, {0.31, 0.62, 0.93}, {0.5, 0.5, 0.5}, {2.1, 0.45, -1.05}}); err != nil {
		t.Fatal(err)
	}
	big, err := LatticeFromParameters(31.7, 29.3, 33.1, 70, 100, 115)
	if err != nil {
		t.Fatal(err)
	}
	var species []Element
	var frac []Vec3
	for z := 1; z <= MaxZ; z++ {
		species = append(species, Element(z))
		frac = append(frac, Vec3{float64(z) / 97, math.Mod(float64(z)*0.618034, 1), math.Mod(float64(z)*0.414214, 1)})
	}
	if out["every element"], err = NewStructure(big, species, frac); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every structure, written in one format, read, written in another and read
// again, is the structure it was: to 1e-8 in lattice parameters and
// fractional coordinates, element for element. Without a CIF on the way
// the lattice matrix and the order and unwrapped values of the sites are
// kept too.
func TestRoundTripEveryPairOfFormats(t *testing.T) {
	for name, s := range roundTripStructures(t) {
		for _, a := range WriteFormats {
			for _, b := range WriteFormats {
				t.Run(fmt.Sprintf("%s/%s-%s", name, a.Name(), b.Name()), func(t *testing.T) {
					mid := writeAndRead(t, s, a)
					back := writeAndRead(t, mid, b)
					requireSameStructure(t, back, s, 1e-8, a != FormatCIF && b != FormatCIF)
				})
			}
		}
	}
}

// writeAndRead writes s in format f and reads it back through the format
// detection of ParseStructure.
func writeAndRead(t *testing.T, s *Structure, f Format) *Structure {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteStructure(&buf, s, f, "round trip"); err != nil {
		t.Fatalf("write %s: %v", f, err)
	}
	if got := DetectFormat(buf.Bytes()); got != f {
		t.Fatalf("written %s detected as %s", f, got)
	}
	back, err := ParseStructure(buf.Bytes())
	if err != nil {
		t.Fatalf("read %s: %v\n%s", f, err, buf.Bytes())
	}
	return back
}

func TestWriteStructureRejects(t *testing.T) {
	s := roundTripStructures(t)["oblique"]
	if err := WriteStructure(&bytes.Buffer{}, s, FormatCandidateJSON, ""); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("candidate JSON: error %v, want ErrUnknownFormat", err)
	}
	for _, f := range WriteFormats {
		if err := WriteStructure(&bytes.Buffer{}, &Structure{}, f, ""); !errors.Is(err, ErrBadStructure) {
			t.Errorf("%s of an empty structure: error %v, want ErrBadStructure", f, err)
		}
	}
	var buf bytes.Buffer
	if err := WriteStructure(&buf, s, FormatCIF, "candidate\nabc"); err != nil || !strings.HasPrefix(buf.String(), "# candidate abc\n# generated by Crucible\n") {
		t.Errorf("CIF title: %q, %v", buf.String()[:40], err)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{
		"cif": FormatCIF, "CIF": FormatCIF, "poscar": FormatPOSCAR, "vasp": FormatPOSCAR, "CONTCAR": FormatPOSCAR,
		"json": FormatPymatgenJSON, "pymatgen": FormatPymatgenJSON, "xyz": FormatXYZ, " extxyz": FormatXYZ, "candidate": FormatCandidateJSON,
	} {
		if got, err := ParseFormat(in); got != want || err != nil {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "pdb", "cif-symmetrized"} {
		if _, err := ParseFormat(bad); !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q): error %v, want ErrUnknownFormat", bad, err)
		}
	}
	for _, f := range WriteFormats {
		if back, err := ParseFormat(f.Name()); back != f || err != nil {
			t.Errorf("%v: name %q reads back as %v, %v", f, f.Name(), back, err)
		}
		if FormatOfFileName("x"+f.Extension()) != f {
			t.Errorf("%v: extension %q not recognised", f, f.Extension())
		}
	}
}

func TestFormatOfFileName(t *testing.T) {
	for name, want := range map[string]Format{
		"a/b/rutile.cif": FormatCIF, "X.CIF": FormatCIF, "POSCAR": FormatPOSCAR, "dir/CONTCAR": FormatPOSCAR,
		"POSCAR_relaxed": FormatPOSCAR, "poscar.orig": FormatPOSCAR, "Fe2O3.vasp": FormatPOSCAR, "x.poscar": FormatPOSCAR,
		"traj.xyz": FormatXYZ, "t.extxyz": FormatXYZ, "s.json": FormatPymatgenJSON, "POSCAR.cif": FormatCIF,
		"structure": FormatUnknown, "notes.txt": FormatUnknown, "": FormatUnknown,
	} {
		if got := FormatOfFileName(name); got != want {
			t.Errorf("FormatOfFileName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Content decides for names that say nothing; the name decides otherwise,
// so a POSCAR named .cif is read, and refused, as a CIF.
func TestDetectFileFormat(t *testing.T) {
	poscar := readTestdata(t, "poscar", "POSCAR_TiO2_vasp6")
	xyz := readTestdata(t, "xyz", "Si_diamond_ase.extxyz")
	candidate := readTestdata(t, "json", "candidate_matrix.json")
	tests := []struct {
		name string
		data []byte
		want Format
	}{
		{"structure", poscar, FormatPOSCAR},
		{"structure", xyz, FormatXYZ},
		{"a.json", candidate, FormatCandidateJSON},
		{"a.json", []byte("{}"), FormatPymatgenJSON},
		{"a.cif", poscar, FormatCIF},
		{"POSCAR", xyz, FormatPOSCAR},
	}
	for _, tc := range tests {
		if got := DetectFileFormat(tc.name, tc.data); got != tc.want {
			t.Errorf("DetectFileFormat(%q, …) = %v, want %v", tc.name, got, tc.want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "TiO2.cif")
	if err := os.WriteFile(p, poscar, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p); !errors.Is(err, ErrBadCIF) || !strings.Contains(err.Error(), "(CIF)") {
		t.Errorf("POSCAR named .cif: %v, want ErrBadCIF", err)
	}
	s, err := ReadOptions{Format: FormatPOSCAR}.ReadFile(p)
	if err != nil || s.Composition().Formula() != "Ti2 O4" {
		t.Errorf("POSCAR named .cif read as POSCAR: %v, %v", s, err)
	}
	s, f, err := ReadOptions{}.Read(bytes.NewReader(xyz), "")
	if err != nil || f != FormatXYZ || s.NumSites() != 8 {
		t.Errorf("Read from a reader: %v, %v, %v", s, f, err)
	}
	vasp4 := readTestdata(t, "poscar", "POSCAR_ZnO_vasp4_nospecies")
	if _, _, err := (ReadOptions{}).Read(bytes.NewReader(vasp4), ""); !errors.Is(err, ErrNoSpecies) || !strings.Contains(err.Error(), "standard input") {
		t.Errorf("VASP 4 from standard input: %v", err)
	}
	if s, _, err := (ReadOptions{Species: []Element{MustElement("Zn"), MustElement("O")}}).Read(bytes.NewReader(vasp4), ""); err != nil || s.NumSites() != 4 {
		t.Errorf("VASP 4 with species: %v, %v", s, err)
	}
}

// The hand-made POSCAR and XYZ files read as pymatgen or ASE reads them:
// the same cell, species and fractional coordinates, site by site (see
// testdata/formats_reference.py for which reader reads which file).
func TestFixturesReadAsPymatgenAndASE(t *testing.T) {
	var ref map[string]struct {
		Reader  string   `json:"reader"`
		Matrix  [3]Vec3  `json:"matrix"`
		Species []string `json:"species"`
		Frac    []Vec3   `json:"frac"`
	}
	if err := json.Unmarshal(readTestdata(t, "formats_reference.json"), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) < 7 {
		t.Fatalf("%d reference files", len(ref))
	}
	for name, want := range ref {
		t.Run(name, func(t *testing.T) {
			s, err := ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			if s.NumSites() != len(want.Species) {
				t.Fatalf("%d sites, %s reads %d", s.NumSites(), want.Reader, len(want.Species))
			}
			m := s.Lattice.Matrix()
			for i := range m {
				if !sameVec(m[i], want.Matrix[i], 1e-12) {
					t.Errorf("lattice vector %d = %v, %s reads %v", i, m[i], want.Reader, want.Matrix[i])
				}
			}
			for i, e := range s.Species {
				if e.Symbol() != want.Species[i] || !sameVec(s.Frac[i], want.Frac[i], 1e-12) {
					t.Errorf("site %d: %s %v, %s reads %s %v", i, e, s.Frac[i], want.Reader, want.Species[i], want.Frac[i])
				}
			}
		})
	}
}

// A cell with a vector far shorter than the decimals written (here 4.6e-34
// Å, from a volume scale) keeps it: the small components take an exponent.
func TestWritersKeepTinyLatticeComponents(t *testing.T) {
	s, err := ParsePOSCAR([]byte("\n-1\n1e100 0 0\n0 1 0\n0 0 1\nB\n1\nC\n0 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatPOSCAR, FormatXYZ, FormatPymatgenJSON} {
		back := writeAndRead(t, s, f)
		requireCloseRoundTrip(t, back, s, 1e-15)
		if math.Abs(back.Volume()-1) > 1e-12 {
			t.Errorf("%s: volume %g, want 1", f, back.Volume())
		}
	}
}
